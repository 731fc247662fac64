// A run as it happens, in the query cache (lib/query.ts): the run under ['run', id], its events under
// ['run', id, 'events']. While the run is in the pipeline, or its approved e-mail is being delivered, its events arrive
// over Server-Sent Events (GET /api/v1/runs/{id}/events, which EventSource opens with the session cookie): each is
// written into the cache's events, and invalidates the cached run, which is read again (its steps carry the outputs,
// which events do not). When the stream cannot be held, the query reads the run and its new events every POLL_MS
// instead, until the run rests.
// A delivered e-mail still waits for its reply, which the reply check finds later and the event stream (ended once
// the run is at rest) does not carry: while the page is shown, such a run is read again every REPLY_POLL_MS.
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { api } from '../api/client';
import type { Run, RunEvent } from '../api/types';
import { runSettled } from './delivery';

const EVENT_TYPES: RunEvent['type'][] = [
  'run.queued', 'step.started', 'step.retrying', 'step.completed', 'step.failed', 'run.awaiting_approval',
  'run.failed', 'run.cancelled', 'run.approved', 'run.approval_undone', 'run.rejected', 'run.regenerating',
  'draft.edited', 'draft.delivery_queued', 'draft.delivery_retrying', 'draft.sent', 'draft.saved_to_mailbox',
  'draft.delivery_failed', 'draft.replied', 'draft.delivery_scheduled', 'draft.delivery_cancelled',
  'draft.delivery_failed', 'draft.replied', 'reply.classified', 'reply.sequence_stopped', 'reply.sequence_paused',
  'reply.sequence_resumed', 'reply.address_suppressed', 'reply.lead_qualified', 'reply.response_requested', 'reply.next_action_set',
];
const POLL_MS = 1500;
const REPLY_POLL_MS = 5000;

/** A run whose e-mail was delivered and has no reply yet: only the reply check can change it. */
function awaitingReply(run: Run): boolean {
  return run.emailDraft?.delivery?.status === 'DELIVERED' && !run.reply;
}

export type Transport = 'connecting' | 'stream' | 'polling' | 'idle';

export interface LiveRun {
  run: Run | undefined;
  events: RunEvent[];
  error: unknown;
  transport: Transport;
  /** Replace the run with one a decision answered, and follow it again if it went back to the queue. */
  update(run: Run): void;
  reload(): Promise<void>;
}

/** How often the query reads the run by itself: while polling until it rests, then only for a reply. */
function interval(run: Run | undefined, transport: Transport): number | false {
  if (!run || transport === 'connecting' || transport === 'stream') return false;
  if (!runSettled(run)) return transport === 'polling' ? POLL_MS : false;
  return awaitingReply(run) ? REPLY_POLL_MS : false;
}

const runKey = (id: string) => ['run', id];
const eventsKey = (id: string) => ['run', id, 'events'];

/** The run's events in the cache, each once, in order. */
function addEvents(client: QueryClient, id: string, incoming: RunEvent[]): void {
  if (incoming.length === 0) return;
  client.setQueryData<RunEvent[]>(eventsKey(id), (list = []) => {
    const known = new Set(list.map((e) => e.id));
    const fresh = incoming.filter((e) => !known.has(e.id));
    return fresh.length ? [...list, ...fresh].sort((a, b) => a.id - b.id) : list;
  });
}

/** The id of the newest event in the cache, from which the stream and the reads go on. */
function lastEventId(client: QueryClient, id: string): number {
  return client.getQueryData<RunEvent[]>(eventsKey(id))?.at(-1)?.id ?? 0;
}

/** The run's newest events, read into the cache. */
async function readEvents(client: QueryClient, id: string, signal?: AbortSignal): Promise<void> {
  const { body } = await api.get('/api/v1/runs/{id}/events', { params: { id }, query: { after: lastEventId(client, id) }, signal });
  addEvents(client, id, body.data);
}

export function useLiveRun(id: string): LiveRun {
  const client = useQueryClient();
  const [transport, setTransport] = useState<Transport>('connecting');
  // Bumped to follow the run again (after "regenerate" queues it anew).
  const [generation, setGeneration] = useState(0);

  const query = useQuery({
    queryKey: runKey(id),
    queryFn: async ({ signal }) => {
      const { body } = await api.get('/api/v1/runs/{id}', { params: { id }, signal });
      await readEvents(client, id, signal);
      return body.data;
    },
    refetchInterval: (q) => interval(q.state.data, transport),
  });
  // The events are written by the run's reads and the stream, never read on their own: this only subscribes to them.
  const { data: events = [] } = useQuery({
    queryKey: eventsKey(id),
    queryFn: () => client.getQueryData<RunEvent[]>(eventsKey(id)) ?? [],
    enabled: false,
    placeholderData: undefined,
  });
  const run = query.data;
  const { refetch } = query;
  const known = run !== undefined;
  const settled = run ? runSettled(run) : false;

  // Polled to rest: nothing more to follow but a reply.
  useEffect(() => {
    if (transport === 'polling' && settled) setTransport('idle');
  }, [transport, settled]);

  // The stream, opened once the run is known to be in the pipeline (or delivering), again after `update` or `reload`.
  useEffect(() => {
    if (!known) return;
    const current = client.getQueryData<Run>(runKey(id));
    if (!current || runSettled(current)) return void setTransport('idle');
    if (typeof EventSource === 'undefined') return void setTransport('polling');
    setTransport('connecting');
    let stopped = false;
    const after = lastEventId(client, id);
    const url = `/api/v1/runs/${encodeURIComponent(id)}/events${after ? `?after=${after}` : ''}`;
    const source = new EventSource(url);
    source.onopen = () => { if (!stopped) setTransport('stream'); };
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (message) => {
        try {
          addEvents(client, id, [JSON.parse((message as MessageEvent<string>).data) as RunEvent]);
        } catch {
          // An event we cannot read is skipped; the run read again below still shows the truth.
        }
        // The run as cached is out of date: it is read again, and a read still under way when the next event arrives
        // is given up for a new one, so the last read always follows the last event.
        void client.invalidateQueries({ queryKey: runKey(id), exact: true });
      });
    }
    source.addEventListener('end', () => {
      source.close();
      // The stream ended with the run at rest, perhaps while its delivery was still on its way: read on until it arrives.
      void refetch().then(({ data }) => { if (!stopped) setTransport(data && !runSettled(data) ? 'polling' : 'idle'); });
    });
    source.onerror = () => {
      // The stream broke (a proxy that buffers, a restart): poll instead of letting EventSource retry blindly.
      source.close();
      if (!stopped) setTransport('polling');
    };
    return () => {
      stopped = true;
      source.close();
    };
  }, [id, known, generation, client, refetch]);

  const update = useCallback((next: Run) => {
    client.setQueryData(runKey(id), next);
    // Back in the pipeline, or an approval whose e-mail is on its way: follow it again.
    if (!runSettled(next)) setGeneration((n) => n + 1);
    else readEvents(client, id).catch(() => {});
  }, [client, id]);

  const reload = useCallback(async () => {
    await refetch();
    setGeneration((n) => n + 1);
  }, [refetch]);

  return { run, events, error: query.error, transport, update, reload };
}

// A run as it happens, in the query cache under ['run', id] (lib/query.ts). While the run is in the pipeline, or its
// approved e-mail is being delivered, its events arrive over Server-Sent Events (GET /api/v1/runs/{id}/events, which
// EventSource opens with the session cookie); each event has the run read again, whose steps carry the outputs. When
// the stream cannot be held, the query reads the run and its new events every POLL_MS instead, until the run rests.
// A delivered e-mail still waits for its reply, which the reply check finds later and the event stream (ended once
// the run is at rest) does not carry: while the page is shown, such a run is read again every REPLY_POLL_MS.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
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

export function useLiveRun(id: string): LiveRun {
  const client = useQueryClient();
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [transport, setTransport] = useState<Transport>('connecting');
  // Bumped to follow the run again (after "regenerate" queues it anew).
  const [generation, setGeneration] = useState(0);
  const lastEventId = useRef(0);

  const addEvents = useCallback((incoming: RunEvent[]) => {
    if (incoming.length === 0) return;
    setEvents((list) => {
      const known = new Set(list.map((e) => e.id));
      const fresh = incoming.filter((e) => !known.has(e.id));
      return fresh.length ? [...list, ...fresh].sort((a, b) => a.id - b.id) : list;
    });
    lastEventId.current = Math.max(lastEventId.current, ...incoming.map((e) => e.id));
  }, []);

  const query = useQuery({
    queryKey: ['run', id],
    queryFn: async ({ signal }) => {
      const { body } = await api.get('/api/v1/runs/{id}', { params: { id }, signal });
      const { body: log } = await api.get('/api/v1/runs/{id}/events', { params: { id }, query: { after: lastEventId.current }, signal });
      addEvents(log.data);
      return body.data;
    },
    refetchInterval: (q) => interval(q.state.data, transport),
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
    const current = client.getQueryData<Run>(['run', id]);
    if (!current || runSettled(current)) return void setTransport('idle');
    if (typeof EventSource === 'undefined') return void setTransport('polling');
    setTransport('connecting');
    let stopped = false;
    let refetchTimer: number | undefined;
    const url = `/api/v1/runs/${encodeURIComponent(id)}/events${lastEventId.current ? `?after=${lastEventId.current}` : ''}`;
    const source = new EventSource(url);
    source.onopen = () => { if (!stopped) setTransport('stream'); };
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (message) => {
        try {
          addEvents([JSON.parse((message as MessageEvent<string>).data) as RunEvent]);
        } catch {
          // An event we cannot read is skipped; the run read again below still shows the truth.
        }
        // Several events often arrive together; one read covers them.
        window.clearTimeout(refetchTimer);
        refetchTimer = window.setTimeout(() => void refetch(), 120);
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
      window.clearTimeout(refetchTimer);
    };
  }, [id, known, generation, client, refetch, addEvents]);

  const update = useCallback((next: Run) => {
    client.setQueryData(['run', id], next);
    // Back in the pipeline, or an approval whose e-mail is on its way: follow it again.
    if (!runSettled(next)) setGeneration((n) => n + 1);
    else void api.get('/api/v1/runs/{id}/events', { params: { id }, query: { after: lastEventId.current } }).then(({ body }) => addEvents(body.data), () => {});
  }, [client, id, addEvents]);

  const reload = useCallback(async () => {
    await refetch();
    setGeneration((n) => n + 1);
  }, [refetch]);

  return { run, events, error: query.error, transport, update, reload };
}

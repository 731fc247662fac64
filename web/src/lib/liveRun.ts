// A run as it happens. While the run is in the pipeline, or its approved e-mail is being delivered, its events arrive over Server-Sent Events
// (GET /api/v1/runs/{id}/events, which EventSource opens with the session cookie); each event reloads the run, whose
// steps carry the outputs. When the stream cannot be held, the run and its new events are polled instead. The run is
// kept in the query cache under ['run', id] (lib/query.ts), where the stream writes it, so other readers share it.
// A delivered e-mail still waits for its reply, which the reply check finds later and the event stream (ended once the
// run is at rest) does not carry: while the page is shown, such a run is read again every REPLY_POLL_MS.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import type { Run, RunEvent } from '../api/types';
import { runSettled } from './delivery';

const EVENT_TYPES: RunEvent['type'][] = [
  'run.queued', 'step.started', 'step.retrying', 'step.completed', 'step.failed', 'run.awaiting_approval',
  'run.failed', 'run.cancelled', 'run.approved', 'run.approval_undone', 'run.rejected', 'run.regenerating',
  'draft.edited', 'draft.delivery_queued', 'draft.delivery_retrying', 'draft.sent', 'draft.saved_to_mailbox',
  'draft.delivery_failed', 'draft.replied',
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

export function useLiveRun(id: string): LiveRun {
  const client = useQueryClient();
  // Written by the stream and the polls below, not read by the cache on its own (`enabled: false`).
  const run = useQuery<Run>({ queryKey: ['run', id], enabled: false }).data;
  const setRun = useCallback((next: Run) => client.setQueryData(['run', id], next), [client, id]);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [error, setError] = useState<unknown>(null);
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

  const fetchRun = useCallback(async (signal?: AbortSignal) => {
    const { body } = await api.get('/api/v1/runs/{id}', { params: { id }, signal });
    setRun(body.data);
    setError(null);
    return body.data;
  }, [id, setRun]);

  const fetchEvents = useCallback(async (signal?: AbortSignal) => {
    const { body } = await api.get('/api/v1/runs/{id}/events', { params: { id }, query: { after: lastEventId.current }, signal });
    addEvents(body.data);
  }, [id, addEvents]);

  useEffect(() => {
    const controller = new AbortController();
    let source: EventSource | null = null;
    let pollTimer: number | undefined;
    let refetchTimer: number | undefined;
    let replyTimer: number | undefined;
    let stopped = false;

    const stop = () => {
      stopped = true;
      controller.abort();
      source?.close();
      window.clearTimeout(pollTimer);
      window.clearTimeout(refetchTimer);
      window.clearTimeout(replyTimer);
    };

    // At rest: nothing more to follow, unless a reply may still come in.
    const rest = (current: Run) => {
      setTransport('idle');
      if (awaitingReply(current)) watchForReply();
    };
    const watchForReply = () => {
      window.clearTimeout(replyTimer);
      replyTimer = window.setTimeout(() => {
        if (stopped) return;
        if (document.hidden) return void watchForReply();
        fetchRun(controller.signal).then(async (current) => {
          await fetchEvents(controller.signal);
          if (awaitingReply(current)) watchForReply();
        }, () => { if (!controller.signal.aborted) watchForReply(); });
      }, REPLY_POLL_MS);
    };

    const poll = async () => {
      if (stopped) return;
      setTransport('polling');
      try {
        const current = await fetchRun(controller.signal);
        await fetchEvents(controller.signal);
        if (runSettled(current)) {
          rest(current);
          return;
        }
      } catch (e) {
        if (controller.signal.aborted) return;
        setError(e);
      }
      pollTimer = window.setTimeout(() => void poll(), POLL_MS);
    };

    // Several events often arrive together; one reload covers them.
    const refetchSoon = () => {
      window.clearTimeout(refetchTimer);
      refetchTimer = window.setTimeout(() => {
        fetchRun(controller.signal).catch((e: unknown) => { if (!controller.signal.aborted) setError(e); });
      }, 120);
    };

    const follow = () => {
      if (typeof EventSource === 'undefined') return void poll();
      setTransport('connecting');
      const url = `/api/v1/runs/${encodeURIComponent(id)}/events${lastEventId.current ? `?after=${lastEventId.current}` : ''}`;
      source = new EventSource(url);
      source.onopen = () => { if (!stopped) setTransport('stream'); };
      for (const type of EVENT_TYPES) {
        source.addEventListener(type, (message) => {
          try {
            addEvents([JSON.parse((message as MessageEvent<string>).data) as RunEvent]);
          } catch {
            // An event we cannot read is skipped; the run reload below still shows the truth.
          }
          refetchSoon();
        });
      }
      source.addEventListener('end', () => {
        source?.close();
        setTransport('idle');
        fetchRun(controller.signal).then((current) => {
          // The stream ended with the run at rest while its delivery was still on its way: read on until it arrives.
          if (stopped) return;
          if (!runSettled(current)) pollTimer = window.setTimeout(() => void poll(), POLL_MS);
          else rest(current);
        }, (e: unknown) => { if (!controller.signal.aborted) setError(e); });
      });
      source.onerror = () => {
        // The stream broke (a proxy that buffers, a restart): poll instead of letting EventSource retry blindly.
        source?.close();
        if (!stopped) void poll();
      };
    };

    (async () => {
      try {
        const current = await fetchRun(controller.signal);
        if (runSettled(current)) {
          await fetchEvents(controller.signal);
          rest(current);
        } else {
          follow();
        }
      } catch (e) {
        if (!controller.signal.aborted) setError(e);
      }
    })();
    return stop;
  }, [id, generation, fetchRun, fetchEvents, addEvents]);

  const update = useCallback((next: Run) => {
    setRun(next);
    // Back in the pipeline, or an approval whose e-mail is on its way: follow it again.
    if (!runSettled(next)) setGeneration((n) => n + 1);
    else void fetchEvents().catch(() => {});
  }, [fetchEvents, setRun]);

  const reload = useCallback(async () => {
    setError(null);
    setGeneration((n) => n + 1);
  }, []);

  return { run, events, error, transport, update, reload };
}

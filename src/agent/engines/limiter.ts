// The model-call limiter: how many calls go to one model endpoint (its base URL and model) at once, from all the
// worker processes of an installation together. A call is I/O: it waits seconds on the provider and holds no thread,
// no database connection and no CPU, so many are in flight; what bounds them is the provider.
//
// The limit starts at LLM_MAX_CONCURRENCY and adapts (AIMD): a 429 halves it, each answer adds one back, up to the
// maximum. A 429's Retry-After pauses every new call to the endpoint until then. A call that would wait past the
// pause's end, or longer than MAX_WAIT_MS for a slot, is put off (ModelCallDeferred): its run goes back to the queue,
// due when the endpoint takes calls again, instead of holding a worker's slot and running into its step's timeout.
//
// Shared through the database (model_endpoints, migration 0016), in single short statements, never inside a
// transaction or across a call. Not a strict cross-process semaphore: counting calls in flight in the database would
// cost two writes a call and leak slots whenever a process dies mid-call. Instead each process that is calling the
// endpoint marks itself seen about once a second and takes its share of the limit: the limit divided among the
// processes seen in the last LIVE_WITHIN_MS, the remainder going to the first in id order, and at least one call.
// A process that stops calling drops out and its share goes to the others. What a process reads is at most
// STATE_MAX_AGE_MS old: its own 429s pause and halve at once, another process's within a second.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { DB } from '../../db/schema.ts';
import { MAX_RETRY_AFTER_MS, ModelCallDeferred } from '../engine.ts';

/** How old the endpoint's state, as read from the database, may be when a call starts. */
const STATE_MAX_AGE_MS = 1_000;
/** A process not seen calling the endpoint for this long has stopped: its share goes to the others. */
const LIVE_WITHIN_MS = 5_000;
/** Rows of processes not seen for this long are deleted. */
const FORGET_AFTER_MS = 24 * 3600_000;
/**
 * Every call in flight hears a 429 at about the same time, and the calls started when the pause ends may hear the
 * next: one signal, so the limit is halved at most once in this time.
 */
const HALVE_AT_MOST_EVERY_MS = 5_000;
/** How long a call waits for a slot before its step is put off; well within a step's timeout. */
const MAX_WAIT_MS = 20_000;

/** How a call ended, for the limit: an answer (of any kind but a 429), a 429, or no answer at all. */
export type CallOutcome = 'answered' | 'failed' | { rateLimitedForMs: number | null };

export interface CallSlot {
  /**
   * Frees the slot. After a 429, resolves with the end of the endpoint's pause: the one its Retry-After set, even when
   * already over, or one still running; else null.
   */
  release(outcome: CallOutcome): Promise<Date | null>;
}

export interface ModelCallLimiter {
  /**
   * Waits until a call may start: the endpoint is not paused and this process has a free slot. Throws
   * ModelCallDeferred when that would take too long, and the signal's reason when it aborts.
   */
  acquire(signal?: AbortSignal): Promise<CallSlot>;
}

export interface ModelCallLimiterOptions {
  db: Kysely<DB>;
  clock: Clock;
  /** The endpoint is its base URL and model: calls to another model of the same server are limited apart. */
  baseUrl: string;
  model: string;
  /** LLM_MAX_CONCURRENCY: calls in flight to the endpoint, from every process together. */
  max: number;
  logger: Logger;
  maxWaitMs?: number;
}

interface EndpointRow {
  limit: number;
  pausedUntil: Date | null;
}

/** Marks this process as calling the endpoint, adds the answers counted since the last read to the limit, and reads it. */
async function readEndpoint(
  db: Kysely<DB>, endpoint: string, worker: string, max: number, answers: number, now: Date,
): Promise<EndpointRow & { processes: number; rank: number }> {
  const liveSince = new Date(now.getTime() - LIVE_WITHIN_MS);
  const { rows: [row] } = await sql<{ limit_now: number; paused_until: Date | null; others: number; before: number }>`
    WITH seen AS (
      INSERT INTO model_endpoint_workers (endpoint, worker, seen_at) VALUES (${endpoint}, ${worker}, ${now})
      ON CONFLICT (endpoint, worker) DO UPDATE SET seen_at = excluded.seen_at),
    forgotten AS (
      DELETE FROM model_endpoint_workers WHERE endpoint = ${endpoint} AND seen_at < ${new Date(now.getTime() - FORGET_AFTER_MS)}),
    endpoint AS (
      INSERT INTO model_endpoints (endpoint, limit_now, updated_at) VALUES (${endpoint}, ${max}, ${now})
      ON CONFLICT (endpoint) DO UPDATE SET limit_now = LEAST(${max}::int, model_endpoints.limit_now + ${answers}::int), updated_at = excluded.updated_at
      RETURNING limit_now, paused_until)
    SELECT e.limit_now, e.paused_until,
           (SELECT count(*) FROM model_endpoint_workers w WHERE w.endpoint = ${endpoint} AND w.seen_at > ${liveSince} AND w.worker <> ${worker})::int AS others,
           (SELECT count(*) FROM model_endpoint_workers w WHERE w.endpoint = ${endpoint} AND w.seen_at > ${liveSince} AND w.worker < ${worker})::int AS before
    FROM endpoint e`.execute(db);
  return { limit: row!.limit_now, pausedUntil: row!.paused_until, processes: row!.others + 1, rank: row!.before };
}

/** A 429: pauses the endpoint until `pausedUntil` (if later than a pause already set) and halves its limit. */
async function recordRateLimit(db: Kysely<DB>, endpoint: string, max: number, pausedUntil: Date | null, now: Date): Promise<EndpointRow> {
  const halvedBefore = new Date(now.getTime() - HALVE_AT_MOST_EVERY_MS);
  const { rows: [row] } = await sql<{ limit_now: number; paused_until: Date | null }>`
    INSERT INTO model_endpoints (endpoint, limit_now, paused_until, halved_at, updated_at)
    VALUES (${endpoint}, ${Math.max(1, Math.floor(max / 2))}, ${pausedUntil}, ${now}, ${now})
    ON CONFLICT (endpoint) DO UPDATE SET
      limit_now = CASE WHEN model_endpoints.halved_at IS NULL OR model_endpoints.halved_at <= ${halvedBefore}
                       THEN GREATEST(1, model_endpoints.limit_now / 2) ELSE model_endpoints.limit_now END,
      halved_at = CASE WHEN model_endpoints.halved_at IS NULL OR model_endpoints.halved_at <= ${halvedBefore}
                       THEN excluded.halved_at ELSE model_endpoints.halved_at END,
      paused_until = GREATEST(model_endpoints.paused_until, excluded.paused_until),
      updated_at = excluded.updated_at
    RETURNING limit_now, paused_until`.execute(db);
  return { limit: row!.limit_now, pausedUntil: row!.paused_until };
}

/** This process's part of `limit` when `processes` share it and `rank` of them come before it in id order. */
export function shareOf(limit: number, processes: number, rank: number): number {
  return Math.max(1, Math.floor(limit / processes) + (rank < limit % processes ? 1 : 0));
}

/** The row of `model_endpoints` an endpoint's calls share: its base URL (without a trailing slash) and model. */
export function endpointKey(baseUrl: string, model: string): string {
  return `${baseUrl.replace(/\/+$/, '')} ${model}`;
}

interface Waiter {
  grant: (slot: CallSlot) => void;
  refuse: (error: unknown) => void;
  deadline: number;
}

export function createModelCallLimiter(options: ModelCallLimiterOptions): ModelCallLimiter {
  const { db, clock, max, logger } = options;
  const endpoint = endpointKey(options.baseUrl, options.model);
  const maxWaitMs = options.maxWaitMs ?? MAX_WAIT_MS;
  const worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const log = logger.child({ modelEndpoint: endpoint });
  const now = () => clock.now().getTime();

  let limit = max;
  let processes = 1;
  let rank = 0;
  let share = max;
  let pausedUntil = 0;
  let halvedAt = -Infinity;
  /** Answers not yet added to the limit in the database. */
  let answers = 0;
  let inFlight = 0;
  const waiters: Waiter[] = [];
  let readAt = -Infinity;
  let reading: Promise<void> | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let wake: NodeJS.Timeout | null = null;

  const adopt = (row: EndpointRow) => {
    limit = Math.min(max, row.limit + answers);
    pausedUntil = Math.max(pausedUntil, row.pausedUntil?.getTime() ?? 0);
    share = shareOf(limit, processes, rank);
  };

  /** Reads the endpoint's state when what this process knows is older than STATE_MAX_AGE_MS; never throws. */
  function refresh(): Promise<void> {
    if (reading) return reading;
    if (now() - readAt < STATE_MAX_AGE_MS) return Promise.resolve();
    const counted = answers;
    reading = readEndpoint(db, endpoint, worker, max, counted, clock.now()).then((row) => {
      answers -= counted;
      processes = row.processes;
      rank = row.rank;
      adopt(row);
    }, (error: unknown) => {
      // Calls go on with what this process knows: the limiter must not fail runs because a read failed.
      log.warn({ err: error }, 'could not read the model endpoint\'s shared limit');
    }).finally(() => {
      readAt = now();
      reading = null;
      dispatch();
    });
    return reading;
  }

  /** While this process calls the endpoint, it is seen and it follows the others' pauses and limit. */
  function keepSeen(): void {
    if (heartbeat || (inFlight === 0 && waiters.length === 0)) return;
    heartbeat = setTimeout(() => {
      heartbeat = null;
      void refresh().then(keepSeen);
    }, STATE_MAX_AGE_MS);
    heartbeat.unref();
  }

  function deferred(until: number, why: string, refused: boolean): ModelCallDeferred {
    return new ModelCallDeferred(why, new Date(until), null, { refused });
  }

  function pausedError(): ModelCallDeferred {
    return deferred(pausedUntil, `the model endpoint asked to wait until ${new Date(pausedUntil).toISOString()} (429 Too Many Requests)`, true);
  }

  /** Starts the calls that may start; puts off those that would wait past the pause's end. */
  function dispatch(): void {
    const at = now();
    if (pausedUntil > at) {
      for (const waiter of waiters.filter((w) => w.deadline < pausedUntil)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.refuse(pausedError());
      }
      if (!wake && waiters.length > 0) {
        wake = setTimeout(() => { wake = null; dispatch(); }, pausedUntil - at);
        wake.unref();
      }
      return;
    }
    while (inFlight < share && waiters.length > 0) {
      inFlight += 1;
      waiters.shift()!.grant(slot());
    }
  }

  function slot(): CallSlot {
    let released = false;
    return {
      async release(outcome) {
        if (released) return null;
        released = true;
        inFlight -= 1;
        try {
          if (outcome === 'answered') {
            answers += 1;
            limit = Math.min(max, limit + 1);
            share = shareOf(limit, processes, rank);
          } else if (outcome !== 'failed') {
            return await rateLimited(outcome.rateLimitedForMs);
          }
          return null;
        } finally {
          dispatch();
        }
      },
    };
  }

  async function rateLimited(retryAfterMs: number | null): Promise<Date | null> {
    const at = now();
    const until = retryAfterMs && retryAfterMs > 0 ? at + Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) : null;
    pausedUntil = Math.max(pausedUntil, until ?? 0);
    if (at - halvedAt >= HALVE_AT_MOST_EVERY_MS) {
      halvedAt = at;
      limit = Math.max(1, Math.floor(limit / 2));
      share = shareOf(limit, processes, rank);
    }
    try {
      adopt(await recordRateLimit(db, endpoint, max, until === null ? null : new Date(until), clock.now()));
    } catch (error) {
      log.warn({ err: error }, 'could not share a 429 of the model endpoint');
    }
    log.info({ limit, pausedUntil: pausedUntil > at ? new Date(pausedUntil) : null }, 'the model endpoint answered 429');
    // A 429 with a Retry-After puts its step off even when sharing it took longer than the pause (a loaded database):
    // due at once then, but not a failed attempt.
    return until !== null || pausedUntil > now() ? new Date(pausedUntil) : null;
  }

  return {
    async acquire(signal) {
      if (signal?.aborted) throw signal.reason;
      await refresh();
      if (signal?.aborted) throw signal.reason;
      const deadline = now() + maxWaitMs;
      if (pausedUntil > deadline) throw pausedError();
      return new Promise<CallSlot>((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const waiter: Waiter = {
          grant: (granted) => { settle(); resolve(granted); },
          refuse: (error) => { settle(); reject(error); },
          deadline,
        };
        const leave = (error: unknown) => {
          const index = waiters.indexOf(waiter);
          if (index < 0) return;
          waiters.splice(index, 1);
          waiter.refuse(error);
        };
        const onAbort = () => leave(signal!.reason);
        const timer = setTimeout(() => leave(deferred(
          now(), `no call to the model endpoint could start within ${maxWaitMs / 1000} s: ${inFlight} calls of this process are in flight, its share of the limit of ${limit}`, false,
        )), maxWaitMs);
        timer.unref();
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.push(waiter);
        dispatch();
        keepSeen();
      });
    },
  };
}

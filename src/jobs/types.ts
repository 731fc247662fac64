// One durable job mechanism (DESIGN §9): a job is a row of `jobs` (0013_delivery.sql), claimed with SKIP LOCKED,
// held by a lease that its runner renews, retried with backoff, and left DEAD after its last attempt. A kind's
// handler says what a job of that kind does; the runner (runner.ts) claims, leases, retries and records.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import type { SecretBox } from '../mail/secrets.ts';

/** A job as its handler sees it, claimed by this runner. */
export interface ClaimedJob {
  id: string;
  kind: string;
  key: string | null;
  workspaceId: string | null;
  payload: unknown;
  /** This attempt's number, from 1. */
  attempt: number;
  maxAttempts: number;
}

export interface JobContext {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  secrets: () => SecretBox;
  /** Where a handler's CPU work over untrusted input runs (DESIGN §10). */
  cpu: CpuPool;
  logger: Logger;
  /** Aborted when the runner stops or loses the lease. */
  signal: AbortSignal;
  /**
   * Marks the job DONE inside `trx`, which the handler commits with its own writes: false (and nothing may be
   * written) when this runner no longer holds the job's lease. This is how a handler records a server's answer and
   * the job's end in one transaction.
   */
  finish: (trx: Transaction<DB>) => Promise<boolean>;
}

/**
 * What a handler's run comes to. Returning normally after `finish` ends the job; `{ again }` runs it once more at
 * that time with its attempts counted afresh (a periodic job, like the reply check). Throwing is a failed attempt:
 * retried after `backoffMs(attempt)` (or the error's `retryAfterMs`), and after `maxAttempts` the job is DEAD and
 * `onDead` records what it means.
 */
export type JobOutcome = void | { again: Date };

export interface JobHandler {
  kind: string;
  maxAttempts: number;
  /** Jobs of this kind one process runs at a time. */
  concurrency: number;
  /** How long a claim holds before another runner may take the job; renewed while the handler runs. */
  leaseMs: number;
  backoffMs: (attempt: number) => number;
  run: (job: ClaimedJob, ctx: JobContext) => Promise<JobOutcome>;
  /** Called in the transaction that makes the job DEAD, with the last error. */
  onDead?: (trx: Transaction<DB>, job: ClaimedJob, error: Error) => Promise<void>;
}

/** An attempt that failed for good: no retry, the job is DEAD at once (a 5xx from an SMTP server). */
export class PermanentJobError extends Error {}

/** An attempt that failed for now, with the time the other side asked us to wait (a 4xx with a delay). */
export class RetryJobError extends Error {
  readonly retryAfterMs: number | null;
  constructor(message: string, retryAfterMs: number | null = null) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

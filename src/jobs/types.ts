// One durable job mechanism (DESIGN §9): a job is claimed with SKIP LOCKED, held by a lease that its runner renews,
// retried with backoff, and left dead after its last attempt. Most kinds keep their jobs as rows of `jobs`
// (0013_delivery.sql): a JobHandler says what a job does, and the runner (runner.ts) claims, leases, retries and
// records. A kind whose work is already a row of its own (a run: the `runs` row is the job) brings a JobSource
// instead, and its SourcedJobHandler records its outcomes in that row; the runner still claims, leases, wakes,
// drains and counts.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { RetryPolicy } from './retry.ts';

/** A job as its handler sees it, claimed by this runner. */
export interface ClaimedJob {
  id: string;
  kind: string;
  key: string | null;
  workspaceId: string | null;
  payload: unknown;
  /** This attempt's number, from 1: the runner counts it at the claim. */
  attempt: number;
  /** The attempts it is given in all: its kind's policy's, or fewer when it was queued with fewer (jobs.max_attempts). */
  maxAttempts: number;
}

export interface WorkContext {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  secrets: () => SecretBox;
  /** Where a handler's CPU work over untrusted input runs (DESIGN §10). */
  cpu: CpuPool;
  logger: Logger;
  /** Aborted when the runner stops or loses the lease. */
  signal: AbortSignal;
  /** The runner holding the lease: the owner that every write under the lease names. */
  owner: string;
}

export interface JobContext extends WorkContext {
  /**
   * Marks the job DONE inside `trx`, which the handler commits with its own writes: false (and nothing may be
   * written) when this runner no longer holds the job's lease. This is how a handler records a server's answer and
   * the job's end in one transaction.
   */
  finish: (trx: Transaction<DB>) => Promise<boolean>;
}

/**
 * What a handler's run comes to. Returning normally after `finish` ends the job. Throwing is a failed attempt:
 * retried after its `retry` policy's delay (errors.ts says which failures are not retried), and after the last
 * attempt the job is DEAD and `onDead` records what it means. `{ again }` queues the job once more for that time:
 * - as a new round of work, its attempts counted afresh: a periodic job (the reply check, the prune) whose work is
 *   done for now;
 * - with `wait: true`, as the same round: the job could not begin (a run's later webhook delivery waits behind its
 *   earlier one), so the claim was no attempt. It is taken again with its attempts as they were before the claim, and
 *   its retry policy's schedule goes on where it was.
 */
export type JobOutcome = void | { again: Date; wait?: boolean };

export interface JobHandler {
  kind: string;
  retry: RetryPolicy;
  /** Jobs of this kind one process runs at a time. */
  concurrency: number;
  /** How long a claim holds before another runner may take the job; renewed while the handler runs. */
  leaseMs: number;
  /**
   * Takes the kind's next job from the `jobs` table in place of its oldest due one: a claim that is fair between the
   * jobs' lanes (webhook deliveries, src/domain/webhooks/claim.ts). It must claim as claimJob does (queue.ts).
   */
  claim?: JobSource<ClaimedJob>['claim'];
  run: (job: ClaimedJob, ctx: JobContext) => Promise<JobOutcome>;
  /** Called in the transaction that makes the job DEAD, with the last error and the time it was made DEAD. */
  onDead?: (trx: Transaction<DB>, job: ClaimedJob, error: Error, now: Date) => Promise<void>;
}

/** How a job's attempt ended, as /metrics counts it per kind: `dead` is the failure that is not retried. */
export type JobEnd = 'done' | 'retried' | 'dead';

/** What /metrics shows of a kind's queue (the whole installation's, read from the database). */
export interface JobKindStats {
  kind: string;
  /** Jobs waiting or running. */
  depth: number;
  /** Seconds since the oldest due job of the kind became due; 0 when none waits. */
  oldestAgeSeconds: number;
  /** Jobs left dead (the dead letter): failed for good. */
  dead: number;
}

/**
 * Where a kind's jobs live and how they are leased: the `jobs` table (queue.ts) unless the kind's work is a row of
 * its own. Every write after the claim names the owner, so a runner that lost a job can never overwrite it.
 */
export interface JobSource<J extends { id: string }> {
  /** The NOTIFY channel that says jobs became due. */
  channel: string;
  /** How many idle slots of `kind` a notice on the channel wakes: 0 when it is about another kind. */
  wakes(payload: string, kind: string): number;
  /** Takes the oldest due job of `kind`, or one whose lease ran out (its runner died), under a lease. */
  claim(db: Kysely<DB>, kind: string, owner: string, now: Date, leaseMs: number): Promise<J | null>;
  /** Extends the lease; false when `owner` no longer holds the job. */
  renew(db: Kysely<DB>, id: string, owner: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Hands the job back (at shutdown, or after an error) so that another runner takes it at once. */
  release(db: Kysely<DB>, id: string, owner: string, now: Date): Promise<void>;
  /** The queue per kind, for /metrics. */
  stats(db: Kysely<DB>, now: Date): Promise<JobKindStats[]>;
}

/** A kind whose jobs come from its own source, and whose handler records every outcome in the source's rows. */
export interface SourcedJobHandler<J extends { id: string }> {
  kind: string;
  /** Jobs of this kind one process runs at a time. */
  concurrency: number;
  /** How long a claim holds before another runner may take the job; renewed while the handler works. */
  leaseMs: number;
  source: JobSource<J>;
  /** Works a claimed job to its end. Throwing hands the job back (unless the lease was lost). */
  work(job: J, ctx: WorkContext): Promise<JobEnd>;
}

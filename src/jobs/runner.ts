// The job runner: for each registered kind, `concurrency` slots claim due jobs from the kind's source (SKIP LOCKED,
// under a lease), work them while renewing the lease, abort the work when the lease is lost, and count how each
// ended. For a kind of the `jobs` table the runner also owns the attempts: it counts each at the claim, and records
// the outcome: done, again later, a wait that was no attempt, retried after the kind's RetryPolicy delay, or DEAD
// after the last attempt. Idle slots sleep until a NOTIFY on their source's channel wakes them, or
// the next poll.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { Metrics } from '../observability/metrics.ts';
import { jobsTable } from './queue.ts';
import { finishJob } from './sql/finishJob.ts';
import { killJob } from './sql/killJob.ts';
import { releaseJob } from './sql/releaseJob.ts';
import { rescheduleJob } from './sql/rescheduleJob.ts';
import { retryJob } from './sql/retryJob.ts';
import { describeError, LeaseLost, PermanentError, RetryableError } from './errors.ts';
import { Sleepers } from './sleepers.ts';
import {
  type ClaimedJob, type JobContext, type JobEnd, type JobHandler, type JobSource, type SourcedJobHandler, type WorkContext,
} from './types.ts';

export { enqueueJob, JOBS_CHANNEL } from './sql/enqueueJob.ts';

/** What the runner hands every job's work (WorkContext), and the database it claims from. */
export interface JobRunnerOptions extends Pick<WorkContext, 'clock' | 'config' | 'secrets' | 'cpu' | 'logger'> {
  database: Database;
  /** Kinds of the `jobs` table, and kinds with a source of their own (runs). */
  handlers: Array<JobHandler | SourcedJobHandler<{ id: string }>>;
  metrics?: Metrics;
  /** How often an idle slot looks for due jobs without a notice (a retry's time coming). */
  pollMs?: number;
  /** How long stop() lets work in progress finish before aborting it and handing its jobs back. */
  drainMs?: number;
}

/** A registered kind as its slots see it, whatever its source. */
interface Kind {
  kind: string;
  concurrency: number;
  leaseMs: number;
  source: JobSource<{ id: string }>;
  sleepers: Sleepers;
  /** Null when there is nothing to count: the claim was no attempt (a wait), or its end could not be recorded. */
  work: (job: { id: string }, ctx: WorkContext) => Promise<JobEnd | null>;
}

const describe = (error: unknown) => describeError(error, 1000);

export class JobRunner {
  readonly id = `${hostname()}:${process.pid}:jobs:${randomBytes(3).toString('hex')}`;
  readonly #db: Kysely<DB>;
  readonly #options: JobRunnerOptions;
  readonly #log: Logger;
  readonly #kinds: Kind[];
  readonly #active = new Map<string, AbortController>();
  #slots: Promise<void>[] = [];
  #stopping = false;
  #unlisten: Array<() => Promise<void>> = [];

  constructor(options: JobRunnerOptions) {
    this.#options = options;
    this.#db = options.database.db;
    this.#log = options.logger.child({ jobRunner: this.id });
    this.#kinds = options.handlers.map((handler): Kind => {
      const common = { kind: handler.kind, concurrency: handler.concurrency, leaseMs: handler.leaseMs, sleepers: new Sleepers() };
      if ('source' in handler) return { ...common, source: handler.source, work: (job, ctx) => handler.work(job, ctx) };
      const source = handler.claim ? { ...jobsTable, claim: handler.claim } : jobsTable;
      return { ...common, source, work: (job, ctx) => this.#workTableJob(handler, job as ClaimedJob, ctx) };
    });
  }

  async start(): Promise<void> {
    for (const channel of new Set(this.#kinds.map((k) => k.source.channel))) {
      const kinds = this.#kinds.filter((k) => k.source.channel === channel);
      // A notice wakes as many idle slots of a kind as it has work for, not all of them to race for one row.
      const unlisten = await this.#options.database.listen(channel, (payload) => {
        for (const k of kinds) k.sleepers.wake(k.source.wakes(payload, k.kind));
      });
      this.#unlisten.push(unlisten);
    }
    this.#slots = this.#kinds.flatMap((kind) => Array.from({ length: kind.concurrency }, () => this.#slot(kind)));
    this.#log.info({ kinds: Object.fromEntries(this.#kinds.map((k) => [k.kind, k.concurrency])) }, 'job runner started');
  }

  /** Stops claiming, lets work in progress finish for `drainMs`, then aborts it and hands its jobs back. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const kind of this.#kinds) kind.sleepers.wakeAll();
    const drained = Promise.all(this.#slots);
    const grace = new Promise<'timeout'>((resolve) => setTimeout(resolve, this.#options.drainMs ?? 5_000, 'timeout').unref());
    if ((await Promise.race([drained, grace])) === 'timeout') {
      for (const controller of this.#active.values()) controller.abort(new Error('the job runner is stopping'));
      await drained;
    }
    for (const unlisten of this.#unlisten) await unlisten();
    this.#log.info('job runner stopped');
  }

  async #slot(kind: Kind): Promise<void> {
    while (!this.#stopping) {
      let job: { id: string } | null = null;
      try {
        job = await kind.source.claim(this.#db, kind.kind, this.id, this.#options.clock.now(), kind.leaseMs);
      } catch (error) {
        this.#log.warn({ err: error, kind: kind.kind }, 'could not claim a job');
      }
      if (!job) {
        // stop() wakes the slots that sleep; one that was still asking for work then must not go to sleep after it.
        if (this.#stopping) break;
        // The idle slots of a kind share one look a poll between them, at random, however many there are: a worker
        // with 32 run slots asks the database once a second when idle, not 32 times.
        const idle = kind.sleepers.count + 1;
        await kind.sleepers.sleep((this.#options.pollMs ?? 1_000) * idle * (0.5 + Math.random()));
        continue;
      }
      // Work was found: one more idle slot looks at once, so that a backlog a poll found is taken up by every slot.
      kind.sleepers.wake(1);
      await this.#process(kind, job);
    }
  }

  async #process(kind: Kind, job: { id: string }): Promise<void> {
    const { clock, metrics } = this.#options;
    const log = this.#log.child({ jobId: job.id, kind: kind.kind });
    const controller = new AbortController();
    this.#active.set(job.id, controller);
    const renewal = setInterval(() => {
      kind.source.renew(this.#db, job.id, this.id, clock.now(), kind.leaseMs).then((held) => {
        if (!held) controller.abort(new LeaseLost(`${kind.kind} ${job.id}`));
      }, (error: unknown) => log.warn({ err: error }, 'could not renew a lease'));
    }, Math.max(50, Math.floor(kind.leaseMs / 3)));
    const ctx: WorkContext = {
      db: this.#db,
      clock,
      config: this.#options.config,
      secrets: this.#options.secrets,
      cpu: this.#options.cpu,
      logger: log,
      signal: controller.signal,
      owner: this.id,
    };
    try {
      const end = await kind.work(job, ctx);
      if (end) metrics?.jobsFinished.inc({ kind: kind.kind, outcome: end });
    } catch (error) {
      if (error instanceof LeaseLost || controller.signal.reason instanceof LeaseLost) {
        log.warn('lease lost: another runner has the job, or it was cancelled or erased');
      } else {
        // Stopping (the work was aborted: the process is going away, the attempt did not fail), or the work broke
        // down: another runner takes the job at once rather than after the lease.
        if (!controller.signal.aborted) log.error({ err: error }, 'job processing stopped');
        await kind.source.release(this.#db, job.id, this.id, clock.now())
          .catch((releasing: unknown) => log.warn({ err: releasing }, 'could not hand a job back'));
      }
    } finally {
      clearInterval(renewal);
      this.#active.delete(job.id);
    }
  }

  /** A job of the `jobs` table: its handler runs, and the runner records the outcome on the job's row. */
  async #workTableJob(handler: JobHandler, claimed: ClaimedJob, work: WorkContext): Promise<JobEnd | null> {
    const { clock } = this.#options;
    // The kind's policy bounds every job of the kind; a job queued with fewer attempts (jobs.max_attempts) keeps those.
    const job = { ...claimed, maxAttempts: Math.min(claimed.maxAttempts, handler.retry.maxAttempts) };
    const log = work.logger.child({ attempt: job.attempt });
    let finished = false;
    const ctx: JobContext = {
      ...work,
      logger: log,
      finish: async (trx: Transaction<DB>) => {
        finished = await finishJob(trx, job.id, this.id, clock.now());
        return finished;
      },
    };
    if (job.attempt > job.maxAttempts) {
      // Its last attempts ended with their runners (a crash each time): give up rather than loop forever.
      return this.#kill(handler, job, new Error(`gave up after ${job.maxAttempts} attempts`), log);
    }
    try {
      const outcome = await handler.run(job, ctx);
      if (outcome?.wait) {
        await releaseJob(this.#db, job.id, this.id, clock.now(), outcome.again);
        return null;
      }
      if (outcome) {
        await rescheduleJob(this.#db, job.id, this.id, clock.now(), outcome.again);
      } else if (!finished) {
        await this.#db.transaction().execute((trx) => finishJob(trx, job.id, this.id, clock.now()));
      }
      return 'done';
    } catch (error) {
      if (work.signal.aborted || error instanceof LeaseLost) throw error;
      return this.#failed(handler, job, error, log);
    }
  }

  async #failed(handler: JobHandler, job: ClaimedJob, error: unknown, log: Logger): Promise<JobEnd | null> {
    const { clock } = this.#options;
    try {
      const message = describe(error);
      if (error instanceof PermanentError || job.attempt >= job.maxAttempts) {
        log.warn({ error: message }, 'job failed for good');
        return await this.#kill(handler, job, error instanceof Error ? error : new Error(message), log);
      }
      const delay = handler.retry.delay(job.attempt, error instanceof RetryableError ? error.retryAfterMs : null);
      log.warn({ error: message, delayMs: delay }, 'job attempt failed; will retry');
      await retryJob(this.#db, job.id, this.id, clock.now(), new Date(clock.now().getTime() + delay), message);
      return 'retried';
    } catch (recording) {
      // The job stays RUNNING under a lease that runs out: another runner (or this one) takes it again then.
      log.error({ err: recording }, 'could not record a job failure');
      return null;
    }
  }

  async #kill(handler: JobHandler, job: ClaimedJob, error: Error, log: Logger): Promise<JobEnd | null> {
    const now = this.#options.clock.now();
    const killed = await this.#db.transaction().execute(async (trx) => {
      if (!(await killJob(trx, job.id, this.id, now, describe(error)))) return false;
      await handler.onDead?.(trx, job, error, now);
      return true;
    });
    if (killed) return 'dead';
    log.warn('job lease lost before it could be marked dead');
    return null;
  }
}

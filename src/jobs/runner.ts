// The job runner: for each registered kind, `concurrency` slots claim due jobs (SKIP LOCKED, under a lease), run the
// kind's handler while renewing the lease, and record the outcome: done, again later, retried after a backoff, or
// DEAD after the last attempt. Idle slots sleep until a NOTIFY on JOBS_CHANNEL names their kind, or the next poll.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { Metrics } from '../http/metrics.ts';
import type { SecretBox } from '../mail/secrets.ts';
import { claimJob, finishJob, JOBS_CHANNEL, killJob, releaseJob, renewJobLease, rescheduleJob, retryJob } from './queue.ts';
import { Sleepers } from './sleepers.ts';
import { PermanentJobError, RetryJobError, type ClaimedJob, type JobContext, type JobHandler } from './types.ts';

export { enqueueJob, JOBS_CHANNEL } from './queue.ts';

export interface JobRunnerOptions {
  database: Database;
  clock: Clock;
  config: Config;
  secrets: () => SecretBox;
  cpu: CpuPool;
  logger: Logger;
  handlers: JobHandler[];
  metrics?: Metrics;
  /** How often an idle slot looks for due jobs without a notice (a retry's time coming). */
  pollMs?: number;
  /** How long stop() lets handlers in progress finish before aborting them and handing their jobs back. */
  drainMs?: number;
}

/** The lease was lost while the handler ran: another runner has the job, or it is gone. */
export class JobLeaseLost extends Error {
  constructor(jobId: string) {
    super(`the lease on job ${jobId} was lost`);
    this.name = 'JobLeaseLost';
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 1000 ? `${message.slice(0, 997)}...` : message;
}

export class JobRunner {
  readonly id = `${hostname()}:${process.pid}:jobs:${randomBytes(3).toString('hex')}`;
  readonly #db: Kysely<DB>;
  readonly #options: JobRunnerOptions;
  readonly #log: Logger;
  readonly #sleepers = new Map<string, Sleepers>();
  readonly #active = new Map<string, AbortController>();
  #slots: Promise<void>[] = [];
  #stopping = false;
  #unlisten: (() => Promise<void>) | null = null;

  constructor(options: JobRunnerOptions) {
    this.#options = options;
    this.#db = options.database.db;
    this.#log = options.logger.child({ jobRunner: this.id });
    for (const handler of options.handlers) this.#sleepers.set(handler.kind, new Sleepers());
  }

  async start(): Promise<void> {
    this.#unlisten = await this.#options.database.listen(JOBS_CHANNEL, (kind) => this.#sleepers.get(kind)?.wake());
    this.#slots = this.#options.handlers.flatMap((handler) => Array.from({ length: handler.concurrency }, () => this.#slot(handler)));
    this.#log.info({ kinds: this.#options.handlers.map((h) => h.kind) }, 'job runner started');
  }

  /** Stops claiming, lets handlers finish for `drainMs`, then aborts them and hands their jobs back. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const sleepers of this.#sleepers.values()) sleepers.wakeAll();
    const drained = Promise.all(this.#slots);
    const grace = new Promise<'timeout'>((resolve) => setTimeout(resolve, this.#options.drainMs ?? 5_000, 'timeout').unref());
    if ((await Promise.race([drained, grace])) === 'timeout') {
      for (const controller of this.#active.values()) controller.abort(new Error('the job runner is stopping'));
      await drained;
    }
    await this.#unlisten?.();
    this.#log.info('job runner stopped');
  }

  async #slot(handler: JobHandler): Promise<void> {
    const sleepers = this.#sleepers.get(handler.kind)!;
    while (!this.#stopping) {
      let job: ClaimedJob | null = null;
      try {
        job = await claimJob(this.#db, handler.kind, this.id, this.#options.clock.now(), handler.leaseMs);
      } catch (error) {
        this.#log.warn({ err: error, kind: handler.kind }, 'could not claim a job');
      }
      if (!job) {
        await sleepers.sleep(this.#options.pollMs ?? 1_000);
        continue;
      }
      await this.#process(handler, job);
    }
  }

  async #process(handler: JobHandler, job: ClaimedJob): Promise<void> {
    const { clock } = this.#options;
    const log = this.#log.child({ jobId: job.id, kind: job.kind, attempt: job.attempt });
    const controller = new AbortController();
    this.#active.set(job.id, controller);
    const renewal = setInterval(() => {
      renewJobLease(this.#db, job.id, this.id, clock.now(), handler.leaseMs).then((held) => {
        if (!held) controller.abort(new JobLeaseLost(job.id));
      }, (error: unknown) => log.warn({ err: error }, 'could not renew a job lease'));
    }, Math.max(50, Math.floor(handler.leaseMs / 3)));
    let finished = false;
    const ctx: JobContext = {
      db: this.#db,
      clock,
      config: this.#options.config,
      secrets: this.#options.secrets,
      cpu: this.#options.cpu,
      logger: log,
      signal: controller.signal,
      finish: async (trx: Transaction<DB>) => {
        finished = await finishJob(trx, job.id, this.id, clock.now());
        return finished;
      },
    };
    try {
      if (job.attempt > job.maxAttempts) {
        // Its last attempts ended with their runners (a crash each time): give up rather than loop forever.
        await this.#kill(handler, job, new Error(`gave up after ${job.maxAttempts} attempts`), log);
        return;
      }
      const outcome = await handler.run(job, ctx);
      if (outcome && 'again' in outcome) {
        await rescheduleJob(this.#db, job.id, this.id, clock.now(), outcome.again);
      } else if (!finished) {
        await this.#db.transaction().execute((trx) => finishJob(trx, job.id, this.id, clock.now()));
      }
      this.#options.metrics?.jobsFinished.inc({ kind: job.kind, outcome: 'done' });
    } catch (error) {
      await this.#failed(handler, job, error, controller.signal, log);
    } finally {
      clearInterval(renewal);
      this.#active.delete(job.id);
    }
  }

  async #failed(handler: JobHandler, job: ClaimedJob, error: unknown, signal: AbortSignal, log: Logger): Promise<void> {
    const { clock, metrics } = this.#options;
    try {
      if (signal.reason instanceof JobLeaseLost || error instanceof JobLeaseLost) {
        log.warn('job lease lost: another runner has the job, or it is gone');
        return;
      }
      if (signal.aborted) {
        // Stopping: the attempt did not fail, the process is going away; another runner takes the job at once.
        await releaseJob(this.#db, job.id, this.id, clock.now());
        return;
      }
      const message = describe(error);
      if (error instanceof PermanentJobError || job.attempt >= job.maxAttempts) {
        log.warn({ error: message }, 'job failed for good');
        await this.#kill(handler, job, error instanceof Error ? error : new Error(message), log);
        return;
      }
      const hinted = error instanceof RetryJobError ? error.retryAfterMs : null;
      const delay = hinted ?? handler.backoffMs(job.attempt);
      log.warn({ error: message, delayMs: delay }, 'job attempt failed; will retry');
      metrics?.jobsFinished.inc({ kind: job.kind, outcome: 'retried' });
      await retryJob(this.#db, job.id, this.id, clock.now(), new Date(clock.now().getTime() + delay), message);
    } catch (recording) {
      // The job stays RUNNING under a lease that runs out: another runner (or this one) takes it again then.
      log.error({ err: recording }, 'could not record a job failure');
    }
  }

  async #kill(handler: JobHandler, job: ClaimedJob, error: Error, log: Logger): Promise<void> {
    const killed = await this.#db.transaction().execute(async (trx) => {
      if (!(await killJob(trx, job.id, this.id, this.#options.clock.now(), describe(error)))) return false;
      await handler.onDead?.(trx, job, error);
      return true;
    });
    if (killed) this.#options.metrics?.jobsFinished.inc({ kind: job.kind, outcome: 'dead' });
    else log.warn('job lease lost before it could be marked dead');
  }
}

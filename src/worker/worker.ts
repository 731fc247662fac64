// The run worker: claim → run the steps that are not yet COMPLETED → complete or fail, under a renewed lease.
// `concurrency` runs at a time; idle slots sleep until a NOTIFY or the next poll.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ModelEndpointError, PermanentStepError, StepAttemptError, type Engine, type EngineResult, type TokenUsage } from '../agent/engine.ts';
import { assertStepOutput, type WriterOutput } from '../agent/outputs.ts';
import { PIPELINE, type PipelineDeps } from '../agent/pipeline.ts';
import type { Clock } from '../clock.ts';
import { CpuBudgetExceeded, type CpuPool } from '../cpu/pool.ts';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { claimableRuns, RUNS_CHANNEL } from '../domain/runs.ts';
import type { Metrics } from '../http/metrics.ts';
import { Sleepers } from '../jobs/sleepers.ts';
import { traceStep } from '../telemetry.ts';
import {
  claimNextRun, completeStep, failRun, LeaseLost, loadRun, releaseRun, renewLease, retryStepLater, startStep, type AttemptCost, type ClaimedRun,
} from './queue.ts';

export const MAX_ATTEMPTS = 3;
/** The longest a Retry-After from a model endpoint may hold a run back. */
const MAX_RETRY_AFTER_MS = 120_000;
const STEP_TIMEOUT_MS = 120_000;

export interface WorkerOptions {
  database: Database;
  clock: Clock;
  engine: Engine;
  /** Where the steps' CPU work over untrusted input runs (DESIGN §10). */
  cpu: CpuPool;
  logger: Logger;
  metrics?: Metrics;
  concurrency: number;
  leaseMs: number;
  retryBaseMs: number;
  /** Tokens one run may spend on model calls, over all its steps and attempts. */
  tokenBudget: number;
  /** The configured model, for trace attributes. */
  requestModel?: string | null;
  allowPrivateHosts: boolean;
  pollMs?: number;
  /** How long stop() lets a step in progress finish before handing its run back. */
  drainMs?: number;
  fetchPage?: PipelineDeps['fetchPage'];
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #db: Kysely<DB>;
  readonly #options: WorkerOptions;
  readonly #log: Logger;
  readonly #active = new Map<string, AbortController>();
  #slots: Promise<void>[] = [];
  #stopping = false;
  readonly #sleepers = new Sleepers();
  #unlisten: (() => Promise<void>) | null = null;

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.#db = options.database.db;
    this.#log = options.logger.child({ worker: this.id });
  }

  async start(): Promise<void> {
    // A notice wakes as many idle slots as it has claimable runs (one, or a batch's count), not all of them to race.
    this.#unlisten = await this.#options.database.listen(RUNS_CHANNEL, (payload) => this.#sleepers.wake(claimableRuns(payload)));
    this.#slots = Array.from({ length: this.#options.concurrency }, () => this.#slot());
    this.#log.info({ concurrency: this.#options.concurrency, engine: this.#options.engine.name }, 'worker started');
  }

  /** Stops taking runs, lets steps in progress finish for `drainMs`, then hands unfinished runs back. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#sleepers.wakeAll();
    const drained = Promise.all(this.#slots);
    const grace = new Promise<'timeout'>((resolve) => setTimeout(resolve, this.#options.drainMs ?? 5_000, 'timeout').unref());
    if ((await Promise.race([drained, grace])) === 'timeout') {
      for (const controller of this.#active.values()) controller.abort(new Error('the worker is stopping'));
      await drained;
    }
    await this.#unlisten?.();
    this.#log.info('worker stopped');
  }

  async #slot(): Promise<void> {
    while (!this.#stopping) {
      let claimed: ClaimedRun | null = null;
      try {
        claimed = await claimNextRun(this.#db, this.id, this.#options.clock.now(), this.#options.leaseMs);
      } catch (error) {
        this.#log.warn({ err: error }, 'could not claim a run');
      }
      if (!claimed) {
        await this.#sleepers.sleep(this.#options.pollMs ?? 1_000);
        continue;
      }
      await this.#process(claimed);
    }
  }

  async #process(run: ClaimedRun): Promise<void> {
    const { clock, leaseMs } = this.#options;
    const log = this.#log.child({ runId: run.id });
    const controller = new AbortController();
    this.#active.set(run.id, controller);
    this.#options.metrics?.runsStarted.inc();
    const renewal = setInterval(() => {
      renewLease(this.#db, run.id, this.id, clock.now(), leaseMs).then((held) => {
        if (!held) controller.abort(new LeaseLost(run.id));
      }, (error: unknown) => log.warn({ err: error }, 'could not renew the lease'));
    }, Math.max(50, Math.floor(leaseMs / 3)));
    try {
      await this.#runSteps(run, controller.signal, log);
    } catch (error) {
      if (error instanceof LeaseLost || controller.signal.reason instanceof LeaseLost) {
        log.warn('lease lost: another worker has the run, or it was cancelled or erased');
      } else {
        log.error({ err: error }, 'run processing stopped');
      }
      // Hand the run back (when still ours) so that another worker takes it without waiting for the lease.
      await releaseRun(this.#db, run.id, this.id, clock.now()).catch(() => {});
    } finally {
      clearInterval(renewal);
      this.#active.delete(run.id);
    }
  }

  async #runSteps(run: ClaimedRun, signal: AbortSignal, log: Logger): Promise<void> {
    const { clock, engine, metrics } = this.#options;
    const loaded = await loadRun(this.#db, run);
    if (!loaded) {
      // Erased with its lead or call since the claim: nothing is left to work on, or to write.
      log.info('the run was erased; nothing to do');
      return;
    }
    const ctx = loaded.context;
    ctx.signal = signal;
    ctx.feedback = run.feedback;
    let tokensUsed = run.tokensUsed;
    const stored = new Map(loaded.steps.map((s) => [s.node, s]));
    const job = { runId: run.id, workspaceId: run.workspaceId, workerId: this.id };
    const deps: PipelineDeps = {
      engine,
      cpu: this.#options.cpu,
      allowPrivateHosts: this.#options.allowPrivateHosts,
      ...(this.#options.fetchPage ? { fetchPage: this.#options.fetchPage } : {}),
    };

    for (const step of PIPELINE) {
      const previous = stored.get(step.node);
      if (previous?.status === 'COMPLETED') {
        step.remember(ctx, previous.output);
        continue;
      }
      if (signal.aborted) throw signal.reason;
      const previousAttempts = previous?.attempts ?? 0;
      if (previousAttempts >= MAX_ATTEMPTS) {
        // The last attempts ended with their worker (a crash): give up rather than loop forever.
        await failRun(this.#db, job, step.node, previousAttempts, `gave up after ${MAX_ATTEMPTS} attempts`, null, clock.now());
        metrics?.runsFinished.inc({ status: 'FAILED' });
        return;
      }
      const attempt = await startStep(this.#db, job, step.node, engine.name, clock.now());
      ctx.tokensLeft = this.#options.tokenBudget - tokensUsed;
      const began = performance.now();
      const cost = (usage: TokenUsage | null, model: string | null = null): AttemptCost => ({
        engine: engine.name, model, usage, durationMs: performance.now() - began,
      });
      let result: EngineResult<object>;
      try {
        const trace = {
          traceId: run.traceId, runId: run.id, workspaceId: run.workspaceId, node: step.node, attempt,
          engine: engine.name, requestModel: this.#options.requestModel ?? null,
        };
        result = await traceStep(trace, () => withTimeout(step.run(ctx, deps), STEP_TIMEOUT_MS, signal));
        assertStepOutput(step.node, result.output);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const message = describe(error);
        const spent = cost(error instanceof PermanentStepError || error instanceof StepAttemptError ? error.usage : null);
        tokensUsed += spent.usage?.totalTokens ?? 0;
        // Work over its CPU budget would only run over it again: the same input takes the same time.
        const permanent = error instanceof PermanentStepError || error instanceof CpuBudgetExceeded;
        if (attempt < MAX_ATTEMPTS && !permanent) {
          // Exponential backoff, or longer when the model endpoint said how long to wait (Retry-After).
          const hinted = error instanceof ModelEndpointError ? error.retryAfterMs ?? 0 : 0;
          const delay = Math.max(this.#options.retryBaseMs * 2 ** (attempt - 1), Math.min(hinted, MAX_RETRY_AFTER_MS));
          log.warn({ node: step.node, attempt, delayMs: delay, error: message }, 'step failed; will retry');
          metrics?.stepsFinished.inc({ node: step.node, outcome: 'retried' });
          await retryStepLater(this.#db, job, step.node, attempt, message, spent, clock.now(), new Date(clock.now().getTime() + delay));
        } else {
          log.warn({ node: step.node, attempt, error: message }, 'step failed for good; the run has failed');
          metrics?.stepsFinished.inc({ node: step.node, outcome: 'failed' });
          metrics?.runsFinished.inc({ status: 'FAILED' });
          await failRun(this.#db, job, step.node, attempt, message, spent, clock.now());
        }
        return;
      }
      const spent = cost(result.usage, result.model);
      tokensUsed += spent.usage?.totalTokens ?? 0;
      const writer = step.node === 'WRITER' ? result.output as WriterOutput : null;
      const draft = writer ? { subject: writer.subject, body: writer.body, to: ctx.lead.email, grounding: writer.grounding ?? null } : undefined;
      await completeStep(this.#db, job, step.node, { output: result.output, promptVersion: result.promptVersion, ...spent }, attempt, clock.now(), draft);
      step.remember(ctx, result.output);
      metrics?.stepsFinished.inc({ node: step.node, outcome: 'completed' });
      log.info({ node: step.node, attempt, ms: Math.round(spent.durationMs), model: result.model, tokens: result.usage?.totalTokens }, 'step completed');
    }
    metrics?.runsFinished.inc({ status: 'AWAITING_APPROVAL' });
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 500 ? `${message.slice(0, 497)}...` : message;
}

function withTimeout<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the step took longer than ${ms / 1000} s`)), ms);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}

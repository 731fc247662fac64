// The run handler: the job of kind `run` is the run row itself (DESIGN §2), claimed and leased by the job runner
// (src/jobs/runner.ts) through runSource, whose claim also starts the first step to work. Working one runs the steps
// that are not yet COMPLETED, in order; each step's start and completion are single statements that check the lease
// (queue.ts). A failed step is retried with its own backoff and attempts (run_steps, runs.available_at); a run that
// fails for good is FAILED, a run's dead letter.
import { MAX_RETRY_AFTER_MS, ModelCallDeferred, ModelEndpointError, PermanentStepError, StepAttemptError, type Engine, type EngineResult, type TokenUsage } from '../../agent/engine.ts';
import { assertStepOutput } from '../../agent/output-check.ts';
import type { WriterOutput } from '../../schemas/outputs.ts';
import { PIPELINE, type PipelineDeps } from '../../agent/pipeline.ts';
import { CpuBudgetExceeded } from '../../cpu/pool.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { describeError, PermanentError, RetryableError } from '../errors.ts';
import type { RetryPolicy } from '../retry.ts';
import type { JobEnd, SourcedJobHandler, WorkContext } from '../types.ts';
import { traceStep } from '../../observability/telemetry.ts';
import { runSource } from '../runs.ts';
import type { ClaimedRun } from '../sql/run/claimRun.ts';
import { completeStep } from '../sql/run/completeStep.ts';
import type { AttemptCost } from '../sql/run/cost.ts';
import { failRun } from '../sql/run/failRun.ts';
import { retryStepLater } from '../sql/run/retryStep.ts';
import { RUN_KIND } from '../sql/run/runStats.ts';
import { startStep } from '../sql/run/startStep.ts';

export const MAX_ATTEMPTS = 3;

/**
 * A step's retries: exponential from `baseMs`, or longer when the model endpoint said how long to wait (Retry-After,
 * at most MAX_RETRY_AFTER_MS). A step's attempts are counted on its row (run_steps), since a run's steps retry apart.
 */
export function stepRetry(baseMs: number): RetryPolicy {
  return { maxAttempts: MAX_ATTEMPTS, delay: (attempt, hint) => Math.max(baseMs * 2 ** (attempt - 1), Math.min(hint ?? 0, MAX_RETRY_AFTER_MS)) };
}
const STEP_TIMEOUT_MS = 120_000;

export interface RunHandlerOptions {
  engine: Engine;
  metrics?: Metrics;
  /** Runs one process works at a time (WORKER_CONCURRENCY). */
  concurrency: number;
  leaseMs: number;
  retryBaseMs: number;
  /** Tokens one run may spend on model calls, over all its steps and attempts. */
  tokenBudget: number;
  /** The configured model, for trace attributes. */
  requestModel?: string | null;
  allowPrivateHosts: boolean;
  fetchPage?: PipelineDeps['fetchPage'];
  /**
   * How long a step may be put off by the model endpoint's refusals (429s, and the pauses they set) before its run
   * fails (LLM_RATE_LIMIT_GIVE_UP_MINUTES): an endpoint that refuses for ever must not keep runs waiting for ever.
   */
  giveUpAfterMs?: number;
}

/** LLM_RATE_LIMIT_GIVE_UP_MINUTES' default. */
export const GIVE_UP_AFTER_MS = 60 * 60_000;

export function runHandler(options: RunHandlerOptions): SourcedJobHandler<ClaimedRun> {
  return {
    kind: RUN_KIND,
    concurrency: options.concurrency,
    leaseMs: options.leaseMs,
    // The claim starts the run's first step to work, in the same statement.
    source: runSource({ engine: options.engine.name, maxAttempts: stepRetry(options.retryBaseMs).maxAttempts }),
    work: (run, ctx) => {
      options.metrics?.runsStarted.inc();
      return runSteps(options, run, ctx);
    },
  };
}

async function runSteps(options: RunHandlerOptions, run: ClaimedRun, { db, clock, cpu, signal, logger, owner }: WorkContext): Promise<JobEnd> {
  const { engine, metrics } = options;
  const retry = stepRetry(options.retryBaseMs);
  const log = logger.child({ runId: run.id });
  const { loaded } = run;
  if (!loaded) {
    // Erased with its lead or call as it was claimed: nothing is left to work on, or to write.
    log.info('the run was erased; nothing to do');
    return 'done';
  }
  const ctx = loaded.context;
  ctx.signal = signal;
  ctx.feedback = run.feedback;
  let tokensUsed = run.tokensUsed;
  const stored = new Map(loaded.steps.map((s) => [s.node, s]));
  const job = { runId: run.id, workspaceId: run.workspaceId, workerId: owner };
  const deps: PipelineDeps = {
    engine,
    cpu,
    allowPrivateHosts: options.allowPrivateHosts,
    ...(options.fetchPage ? { fetchPage: options.fetchPage } : {}),
  };

  // Whether the workspace has webhook endpoints, as last seen: each completion looks again (completeStep).
  let hasWebhooks = loaded.hasWebhooks;
  // The attempt of the step to work next when the claim or the previous step's completion started it.
  let started: number | null = null;
  for (const [index, step] of PIPELINE.entries()) {
    const previous = stored.get(step.node);
    if (previous?.status === 'COMPLETED') {
      step.remember(ctx, previous.output);
      continue;
    }
    if (run.started?.node === step.node) started = run.started.attempt;
    if (signal.aborted) throw signal.reason;
    if (started === null && (previous?.attempts ?? 0) >= retry.maxAttempts) {
      // The last attempts ended with their worker (a crash): give up rather than loop forever.
      await failRun(db, job, step.node, previous!.attempts, `gave up after ${retry.maxAttempts} attempts`, null, clock.now());
      metrics?.runsFinished.inc({ status: 'FAILED' });
      return 'dead';
    }
    const attempt = started ?? await startStep(db, job, step.node, engine.name, clock.now());
    started = null;
    ctx.tokensLeft = options.tokenBudget - tokensUsed;
    const began = performance.now();
    const cost = (usage: TokenUsage | null, model: string | null = null): AttemptCost => ({
      engine: engine.name, model, usage, durationMs: performance.now() - began,
    });
    let result: EngineResult<object>;
    try {
      const trace = {
        traceId: run.traceId, runId: run.id, workspaceId: run.workspaceId, node: step.node, attempt,
        engine: engine.name, requestModel: options.requestModel ?? null,
      };
      // Outside any transaction (startStep and completeStep are statements of their own): a run waiting seconds on
      // the model holds no database connection, so a worker can have many such runs.
      result = await traceStep(trace, () => withTimeout(step.run(ctx, deps), STEP_TIMEOUT_MS, signal));
      assertStepOutput(step.node, result.output);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const message = describe(error);
      const spent = cost(error instanceof PermanentStepError || error instanceof StepAttemptError || error instanceof ModelCallDeferred ? error.usage : null);
      tokensUsed += spent.usage?.totalTokens ?? 0;
      const failForGood = async (why: string, at: Date): Promise<'dead'> => {
        metrics?.stepsFinished.inc({ node: step.node, outcome: 'failed' });
        metrics?.runsFinished.inc({ status: 'FAILED' });
        await failRun(db, job, step.node, attempt, why, spent, at);
        return 'dead';
      };
      if (error instanceof ModelCallDeferred) {
        const now = clock.now();
        const giveUpAfterMs = options.giveUpAfterMs ?? GIVE_UP_AFTER_MS;
        const since = error.refused ? new Date(previous?.putOffSince ?? now) : null;
        if (since && now.getTime() - since.getTime() >= giveUpAfterMs) {
          // A revoked quota or a billing problem: the endpoint refuses for ever. Fail as any other step failure shows.
          const why = `the model endpoint has refused its calls for ${minutes(now.getTime() - since.getTime())} (since ${since.toISOString()}; `
            + `the limit is ${minutes(giveUpAfterMs)}, LLM_RATE_LIMIT_GIVE_UP_MINUTES). Its last answer: ${message}`;
          log.warn({ node: step.node, attempt, putOffSince: since, error: message }, 'the model endpoint refused the step for too long; the run has failed');
          return failForGood(describe(why), now);
        }
        // The slot goes to a run that can work now; this one comes back when the endpoint takes calls again, or when
        // its time to give up comes, whichever is first.
        const retryAt = since ? new Date(Math.min(error.retryAt.getTime(), since.getTime() + giveUpAfterMs)) : error.retryAt;
        const waiting = `waiting on the model provider, not counted as an attempt${since ? ` (put off since ${since.toISOString()})` : ''}: ${message}`;
        log.info({ node: step.node, attempt, retryAt, putOffSince: since, reason: message }, 'model call put off; the step will start again');
        metrics?.stepsFinished.inc({ node: step.node, outcome: 'deferred' });
        await retryStepLater(db, job, step.node, attempt, describe(waiting), spent, now, retryAt, { counted: false, refused: error.refused });
        return 'retried';
      }
      const failure = attemptFailureOf(error);
      if (attempt < retry.maxAttempts && !failure.permanent) {
        const delay = retry.delay(attempt, failure.retryAfterMs);
        log.warn({ node: step.node, attempt, delayMs: delay, error: message }, 'step failed; will retry');
        metrics?.stepsFinished.inc({ node: step.node, outcome: 'retried' });
        await retryStepLater(db, job, step.node, attempt, message, spent, clock.now(), new Date(clock.now().getTime() + delay));
        return 'retried';
      }
      log.warn({ node: step.node, attempt, error: message }, 'step failed for good; the run has failed');
      return failForGood(message, clock.now());
    }
    const spent = cost(result.usage, result.model);
    tokensUsed += spent.usage?.totalTokens ?? 0;
    const writer = step.node === 'WRITER' ? result.output as WriterOutput : null;
    const draft = writer ? { subject: writer.subject, body: writer.body, to: ctx.lead.email, grounding: writer.grounding ?? null } : undefined;
    // The next step starts in the completion's commit, unless crashes have used up its attempts (the check above).
    const following = PIPELINE[index + 1];
    const next = following && (stored.get(following.node)?.attempts ?? 0) < retry.maxAttempts ? { node: following.node, engine: engine.name } : undefined;
    const completed = await completeStep(db, job, step.node, { output: result.output, promptVersion: result.promptVersion, ...spent }, attempt, clock.now(), {
      ...(draft ? { draft } : {}), ...(next ? { next } : {}), hasWebhooks,
    });
    hasWebhooks = completed.hasWebhooks;
    started = completed.nextAttempt;
    step.remember(ctx, result.output);
    metrics?.stepsFinished.inc({ node: step.node, outcome: 'completed' });
    log.info({ node: step.node, attempt, ms: Math.round(spent.durationMs), model: result.model, tokens: result.usage?.totalTokens }, 'step completed');
  }
  metrics?.runsFinished.inc({ status: 'AWAITING_APPROVAL' });
  return 'done';
}

const describe = (error: unknown) => describeError(error, 500);

/**
 * A step's failure as the pair of errors.ts says it. The engine's errors (src/agent/engine.ts) are told apart here:
 * a PermanentStepError, and work over its CPU budget, which the same input would only run over again, are permanent;
 * a model endpoint's answer may say when to try again.
 */
function attemptFailureOf(error: unknown): RetryableError | PermanentError {
  const message = describe(error);
  if (error instanceof PermanentStepError || error instanceof CpuBudgetExceeded) return new PermanentError(message, { cause: error });
  return new RetryableError(message, error instanceof ModelEndpointError ? error.retryAfterMs : null, { cause: error });
}

function minutes(ms: number): string {
  const whole = Math.floor(ms / 60_000);
  return whole >= 1 ? `${whole} min` : `${Math.round(ms / 1000)} s`;
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

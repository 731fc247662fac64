// The WRITER step with its checks: the engine's draft, fitted (grounding.ts) and checked (draft-checks.ts), written
// once more when it fails them. Apart from both, so that neither check module imports the other.
import { ModelCallDeferred, PermanentStepError, StepAttemptError, type Engine, type EngineResult, type RunContext, type TokenUsage } from './engine.ts';
import { CHECK_NAMES, checksFeedback, type DraftChecks } from './draft-checks.ts';
import { fitDraft, type Draft, type WriteContext } from './grounding.ts';
import type { WriterOutput } from '../schemas/outputs.ts';

function addUsage(a: TokenUsage | null, b: TokenUsage | null): TokenUsage | null {
  if (!a) return b;
  if (!b) return a;
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, totalTokens: a.totalTokens + b.totalTokens };
}

/** A failure of the second call still owes the tokens of the first. */
function withUsage(error: unknown, usage: TokenUsage | null): unknown {
  if (!usage) return error;
  if (error instanceof PermanentStepError) return new PermanentStepError(error.message, addUsage(usage, error.usage));
  if (error instanceof StepAttemptError) return new StepAttemptError(error.message, addUsage(usage, error.usage), { cause: error.cause });
  if (error instanceof ModelCallDeferred) return new ModelCallDeferred(error.message, error.retryAt, addUsage(usage, error.usage), { refused: error.refused });
  // Any other error is retryable, and so is a StepAttemptError: the same outcome, with the tokens counted.
  if (error instanceof Error && error.name !== 'AbortError') return new StepAttemptError(error.message, usage, { cause: error });
  return error;
}

/** How a draft is checked: checkDraft, run where the caller wants it (the pipeline runs it in the CPU pool). */
export type DraftCheck = (draft: Draft, ctx: RunContext) => Promise<DraftChecks>;

/**
 * Whether a draft that failed its checks is written again. A model's draft is, for any failed check: the failures,
 * named, are instructions it can follow. The offline writer's rules hold its drafts to the checks as they write
 * them and read no such instructions, so only an unsupported claim, as always, has its draft written again.
 */
function mendable(engine: Engine, checks: DraftChecks): boolean {
  return engine.name === 'model' ? !checks.passed : !checks.grounding.grounded;
}

/** The checks as WRITER's output records them. */
function recorded(checks: DraftChecks, rewritten: boolean): Pick<WriterOutput, 'grounding' | 'checks'> {
  const { grounding } = checks;
  return {
    grounding: { grounded: grounding.grounded, rewritten, unsupported: grounding.unsupported },
    checks: { passed: checks.passed, failed: checks.failed },
  };
}

/**
 * Runs the engine's WRITER and the checks of the draft (draft-checks.ts, the grounding guard among them): a draft
 * that fails them is written once more with feedback naming the failures; a second draft that still fails is kept
 * with its failed checks named, for the reviewer. Usage is the sum of both calls.
 */
export async function writeGroundedDraft(engine: Engine, ctx: WriteContext, check: DraftCheck): Promise<EngineResult<WriterOutput>> {
  const first = await engine.write(ctx);
  const firstDraft = fitDraft(first.output, first.usage);
  const firstChecks = await check(firstDraft, ctx);
  if (!mendable(engine, firstChecks)) return { ...first, output: { ...first.output, ...firstDraft, ...recorded(firstChecks, false) } };

  // With the budget spent, the first draft goes to the reviewer flagged rather than failing the run.
  const tokensLeft = ctx.tokensLeft === undefined ? undefined : ctx.tokensLeft - (first.usage?.totalTokens ?? 0);
  if (tokensLeft !== undefined && tokensLeft <= 0) {
    return { ...first, output: { ...first.output, ...firstDraft, ...recorded(firstChecks, false) } };
  }

  // The offline writer is told only of its unsupported claims: the rest it is not asked to mend.
  const failures = engine.name === 'model'
    ? firstChecks
    : { ...firstChecks, failed: firstChecks.failed.filter((entry) => entry.startsWith(`${CHECK_NAMES.ungrounded}: `)) };
  let second: EngineResult<WriterOutput>;
  try {
    second = await engine.write({
      ...ctx,
      feedback: checksFeedback(failures, ctx.feedback, ctx),
      ...(tokensLeft === undefined ? {} : { tokensLeft }),
    });
  } catch (error) {
    throw withUsage(error, first.usage);
  }
  const usage = addUsage(first.usage, second.usage);
  const secondDraft = fitDraft(second.output, usage);
  // Checked against the run's own context: the feedback naming the claims is no source for them.
  const secondChecks = await check(secondDraft, ctx);
  return {
    output: { ...second.output, ...secondDraft, ...recorded(secondChecks, true) },
    model: second.model ?? first.model,
    promptVersion: second.promptVersion,
    usage,
  };
}

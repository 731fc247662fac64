// A follow-up written by a language model (the LLM_* settings), as the model engine asks for a step (../engines/
// model.ts): one request through the installation's limiter, a JSON answer with the body, checked as the offline
// draft is (checks.ts). An answer that is no usable draft gives null, and the offline writer's draft is used; an
// endpoint that fails or refuses throws as the model engine's errors do, for the caller's retry.
import { APICallError, generateText, jsonSchema, NoObjectGeneratedError, Output, type JSONSchema7, type LanguageModelUsage } from 'ai';
import { ModelCallDeferred, ModelEndpointError, PermanentStepError, type TokenUsage } from '../engine.ts';
import { ANSWER_TOO_LARGE, answerTooLarge, modelProvider, salvageJson, type ModelEngineOptions } from '../engines/model.ts';
import type { CallOutcome } from '../engines/limiter.ts';
import { withSignOff } from '../sign-off.ts';
import { BODY_MAX } from '../grounding.ts';
import * as followUpPrompt from '../prompts/follow-up.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';
import { contextOf } from './checks.ts';
import { threadSubject } from './draft.ts';
import type { FollowUpDraft, FollowUpInput, FollowUpWork } from './types.ts';

const SHAPE: JSONSchema7 = {
  type: 'object',
  properties: { body: { type: 'string', description: 'The e-mail body: greeting, text, sign-off.' } },
  required: ['body'],
  additionalProperties: false,
};
const DEFAULT_TIMEOUT_MS = 60_000;
const PERMANENT_STATUSES = new Set([400, 401, 403, 404]);

type Complete = FollowUpInput & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput };

/** The model's follow-up when it passes the checks; null when its answer is not one (the offline draft is used). */
export interface ModelFollowUp {
  /** The model's follow-up; null when its answer was none or failed the checks. */
  draft: FollowUpDraft | null;
  model: string;
  usage: TokenUsage | null;
}

export async function writeWithModel(input: Complete, options: ModelEngineOptions, work: FollowUpWork, signal?: AbortSignal): Promise<ModelFollowUp> {
  const briefing = await work.brief(input);
  const reply = input.reply?.text.trim() ? input.reply : null;
  const ctx = { ...contextOf(input), research: input.research, analysis: input.analysis, strategy: input.strategy };
  const user = followUpPrompt.render({
    ctx, touchNumber: input.touchNumber, touchCount: input.touchCount, instruction: input.instruction, earlier: input.earlier,
    reply, freshPoints: briefing.freshPoints, limit: briefing.limit,
  });
  const { answer, usage, model } = await ask(options, user, signal);
  const text = answer !== null && typeof answer === 'object' && typeof (answer as { body?: unknown }).body === 'string'
    ? (answer as { body: string }).body.trim() : '';
  if (!text) return { draft: null, model, usage };
  // Signed as every engine signs (sign-off.ts), whatever closing the model wrote.
  const body = withSignOff(text, input.sender ?? { name: null, signature: null }).slice(0, BODY_MAX);
  const draft = { subject: threadSubject(input.earlier), body };
  return { draft: (await work.check({ draft, input, briefing })).length === 0 ? draft : null, model, usage };
}

/** One request; the parsed answer (null when the model answered with no JSON object), the model, the tokens. */
async function ask(options: ModelEngineOptions, user: string, signal?: AbortSignal): Promise<{ answer: unknown; usage: TokenUsage | null; model: string }> {
  const provider = modelProvider(options);
  signal?.throwIfAborted();
  const slot = await options.limiter?.acquire(signal);
  let outcome: CallOutcome = 'failed';
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const result = await generateText({
      model: provider.chatModel(options.model),
      system: `${followUpPrompt.system}\n\nAnswer with one JSON object and nothing else, matching this JSON schema:\n${JSON.stringify(SHAPE)}`,
      prompt: user,
      output: Output.object({ schema: jsonSchema<Record<string, unknown>>(SHAPE), name: 'follow_up' }),
      maxRetries: 0,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    outcome = 'answered';
    return { answer: result.output, usage: usageOf(result.usage), model: result.response.modelId || options.model };
  } catch (error) {
    if (NoObjectGeneratedError.isInstance(error)) {
      outcome = 'answered';
      return { answer: salvageJson(error.text) ?? null, usage: usageOf(error.usage), model: error.response?.modelId || options.model };
    }
    signal?.throwIfAborted();
    if (timeout.aborted) throw new ModelEndpointError(`the model endpoint did not answer within ${timeoutMs} ms`, null);
    if (answerTooLarge(error)) throw new ModelEndpointError(ANSWER_TOO_LARGE, null);
    if (APICallError.isInstance(error) && error.statusCode !== undefined) {
      const status = error.statusCode;
      const seconds = Number(error.responseHeaders?.['retry-after']);
      const retryAfterMs = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
      // Not the endpoint's own words: some endpoints echo the key they refused.
      const message = `the model endpoint answered ${status} to a follow-up`;
      if (status === 429 && slot) {
        const pausedUntil = await slot.release({ rateLimitedForMs: retryAfterMs });
        if (pausedUntil) throw new ModelCallDeferred(message, pausedUntil);
      }
      throw PERMANENT_STATUSES.has(status) ? new PermanentStepError(message) : new ModelEndpointError(message, status, retryAfterMs);
    }
    throw new ModelEndpointError(`the model call for a follow-up failed: ${(error as Error).name}`, null);
  } finally {
    void slot?.release(outcome);
  }
}

function usageOf(usage: LanguageModelUsage | undefined): TokenUsage | null {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined && usage.totalTokens === undefined)) return null;
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
}

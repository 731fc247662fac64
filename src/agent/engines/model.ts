// The model engine: ANALYSIS, STRATEGY and WRITER through any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM,
// LM Studio), with structured output described by the step schemas of outputs.ts and validated against them.
// It makes exactly one request per call: retries, with backoff, belong to the worker.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, jsonSchema, NoObjectGeneratedError, Output, type JSONSchema7, type LanguageModelUsage } from 'ai';
import { http } from '../../net/node-http.ts';
import { ModelCallDeferred, ModelEndpointError, PermanentStepError, StepAttemptError, type Engine, type EngineResult, type RunContext, type TokenUsage } from '../engine.ts';
import { BODY_MAX, fitDraft } from '../grounding.ts';
import { assertStepOutput } from '../output-check.ts';
import { AnalysisOutput, MAX_ANSWER_BYTES, StrategyOutput, WriterOutput, type StepNode } from '../../schemas/outputs.ts';
import * as analysisPrompt from '../prompts/analysis.ts';
import * as strategyPrompt from '../prompts/strategy.ts';
import * as writerPrompt from '../prompts/writer.ts';
import { withSignOff } from '../sign-off.ts';
import type { CallOutcome, ModelCallLimiter } from './limiter.ts';

export interface ModelEngineOptions {
  /** The endpoint's base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; null for a local server that needs none. */
  apiKey: string | null;
  model: string;
  /** How long one request may take; default 60 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Bounds the calls in flight to the endpoint and follows its 429s; none: every call starts at once. */
  limiter?: ModelCallLimiter;
}

/** Answers another attempt cannot change: a malformed request, refused credentials, an unknown model or path. */
const PERMANENT_STATUSES = new Set([400, 401, 403, 404]);
const DEFAULT_TIMEOUT_MS = 60_000;
export { MAX_ANSWER_BYTES };
/** Fields the pipeline sets itself; the model is not asked for them. */
// Besides what the pipeline sets (the engine, the grounding and the draft's checks), the offline engine's readings
// of the transcript (evidence lines, commitments, the next step, the format): optional in ANALYSIS's output, not part
// of the model's brief or its prompt, so not asked of it.
const NOT_FROM_MODEL = new Set(['engine', 'grounding', 'checks', 'evidence', 'commitments', 'agreedNextStep', 'format']);

type ModelNode = Exclude<StepNode, 'RESEARCH'>;

/**
 * The step schema as the model is asked for it: without the fields the pipeline sets, every property required and
 * no other allowed (what strict structured output demands), literal unions as enums, and no length bounds (not
 * accepted by every strict mode; the WRITER's are enforced after the answer, by fitDraft).
 */
export function schemaForModel(schema: unknown): JSONSchema7 {
  const convert = (node: any, top: boolean): any => {
    if (Array.isArray(node)) return node.map((n) => convert(n, false));
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node.anyOf) && node.anyOf.length > 0 && node.anyOf.every((n: any) => typeof n?.const === 'string')) {
      return { type: 'string', enum: node.anyOf.map((n: any) => n.const), ...(node.description ? { description: node.description } : {}) };
    }
    const out: any = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'minLength' || key === 'maxLength') continue;
      if (key === 'properties') {
        out.properties = Object.fromEntries(
          Object.entries(value as object).filter(([name]) => !(top && NOT_FROM_MODEL.has(name))).map(([name, sub]) => [name, convert(sub, false)]),
        );
      } else if (key !== 'required') {
        out[key] = convert(value, false);
      }
    }
    if (out.type === 'object' && out.properties) {
      out.required = Object.keys(out.properties);
      out.additionalProperties = false;
    }
    return out;
  };
  return convert(JSON.parse(JSON.stringify(schema)), true) as JSONSchema7;
}

const SHAPES: Record<ModelNode, JSONSchema7> = {
  ANALYSIS: schemaForModel(AnalysisOutput),
  STRATEGY: schemaForModel(StrategyOutput),
  WRITER: schemaForModel(WriterOutput),
};

interface Prompt {
  version: string;
  system: string;
}

/**
 * The OpenAI-compatible provider of every model call (the steps, the follow-up writer, the reply classifier). It asks
 * for structured output: `response_format: {type: "json_schema"}` with the schema, which OpenAI, Ollama, vLLM and
 * LM Studio all accept (each prompt repeats the schema for servers that ignore it). A model's answer is a stranger's
 * text: it is read to MAX_ANSWER_BYTES at most, and a larger one fails (`answerTooLarge`) unread.
 */
export function modelProvider(options: { baseUrl: string; apiKey?: string | null | undefined; fetch?: typeof fetch | undefined }) {
  return createOpenAICompatible({
    name: 'leadrun',
    baseURL: options.baseUrl.replace(/\/+$/, ''),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    supportsStructuredOutputs: true,
    fetch: boundedFetch(options.fetch ?? globalThis.fetch, MAX_ANSWER_BYTES),
  });
}

/** Why a model call failed for the size of its answer, in the words every caller uses. */
export const ANSWER_TOO_LARGE = `the model endpoint's answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB; it was not read`;

export function createModelEngine(options: ModelEngineOptions): Engine {
  const provider = modelProvider(options);
  const languageModel = provider.chatModel(options.model);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Some endpoints echo the key they refused (in full or masked) in their error message.
  const redact = (text: string): string =>
    (options.apiKey && options.apiKey.length >= 4 ? text.split(options.apiKey).join('***') : text).replace(/\b(?:sk|pk|rk|key)[-_][\w*.-]{6,}/gi, '***');

  async function ask(node: ModelNode, prompt: Prompt, user: string, ctx: RunContext): Promise<{ answer: unknown; usage: TokenUsage | null; model: string }> {
    if (ctx.tokensLeft !== undefined && ctx.tokensLeft <= 0) {
      throw new PermanentStepError(`the run's token budget is spent (${ctx.tokensLeft} tokens left), so ${node} was not sent to the model`);
    }
    if (ctx.signal?.aborted) throw cancelled(ctx.signal);
    const slot = await options.limiter?.acquire(ctx.signal).catch((error: unknown) => {
      throw ctx.signal?.aborted ? cancelled(ctx.signal) : error;
    });
    let outcome: CallOutcome = 'failed';
    // Started once the call has its slot: the wait for one is not the request's time.
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
    const schema = SHAPES[node];
    try {
      const result = await generateText({
        model: languageModel,
        system: `${prompt.system}\n\nAnswer with one JSON object and nothing else, matching this JSON schema:\n${JSON.stringify(schema)}`,
        prompt: user,
        output: Output.object({ schema: jsonSchema<Record<string, unknown>>(schema), name: node.toLowerCase() }),
        maxRetries: 0,
        abortSignal: signal,
      });
      outcome = 'answered';
      return { answer: result.output, usage: usageOf(result.usage), model: result.response.modelId || options.model };
    } catch (error) {
      if (NoObjectGeneratedError.isInstance(error)) {
        outcome = 'answered';
        const usage = usageOf(error.usage);
        // A model without structured output may still wrap its JSON in a code fence or a sentence.
        const answer = salvageJson(error.text);
        if (answer !== undefined) return { answer, usage, model: error.response?.modelId || options.model };
        const reason =
          error.finishReason === 'length' ? 'it was cut off at the token limit' : !error.text?.trim() ? 'it is empty' : 'it is not JSON';
        throw new StepAttemptError(`the model's answer did not match the ${node} schema: ${reason}`, usage);
      }
      if (ctx.signal?.aborted) throw cancelled(ctx.signal);
      if (answerTooLarge(error)) throw new ModelEndpointError(ANSWER_TOO_LARGE, null);
      if (timeout.aborted) throw new ModelEndpointError(`the model endpoint did not answer within ${seconds(timeoutMs)}`, null);
      const failure = endpointError(error);
      if (slot && failure instanceof ModelEndpointError && failure.status === 429) {
        const pausedUntil = await slot.release({ rateLimitedForMs: failure.retryAfterMs });
        if (pausedUntil) throw new ModelCallDeferred(failure.message, pausedUntil);
      }
      throw failure;
    } finally {
      void slot?.release(outcome);
    }
  }

  function endpointError(error: unknown): Error {
    if (APICallError.isInstance(error)) {
      const status = error.statusCode;
      if (status === undefined) {
        const cause = error.cause as { code?: string; message?: string } | undefined;
        const why = cause?.code ?? cause?.message ?? error.message;
        return new ModelEndpointError(redact(`could not reach the model endpoint at ${originOf(options.baseUrl)}: ${why}`), null);
      }
      if (status >= 200 && status < 300) {
        return new ModelEndpointError(redact(`the model endpoint's answer is not a chat completion: ${error.message.split('\n')[0]!.slice(0, 200)}`), status);
      }
      const retryAfterMs = retryAfter(error.responseHeaders?.['retry-after']);
      const detail = detailOf(error.responseBody);
      const message = redact(
        `the model endpoint answered ${status}${http.STATUS_CODES[status] ? ` ${http.STATUS_CODES[status]}` : ''}` +
          (detail ? `: ${detail}` : '') +
          (retryAfterMs !== null ? ` (retry after ${seconds(retryAfterMs)})` : ''),
      );
      if (status === 429 && quotaExhausted(error.responseBody)) {
        // Not a rate limit: the account's quota or credit is used up, and stays so until someone tops it up.
        return new PermanentStepError(redact(`${message} (insufficient_quota: the provider account's quota is used up; no retry helps until it is raised or paid)`));
      }
      return PERMANENT_STATUSES.has(status) ? new PermanentStepError(message) : new ModelEndpointError(message, status, retryAfterMs);
    }
    const message = error instanceof Error ? error.message : String(error);
    return new ModelEndpointError(redact(`the model call failed: ${message.split('\n')[0]!.slice(0, 300)}`), null);
  }

  /** Keeps the fields of the step's schema, adds `engine`, and validates; a mismatch fails the attempt. */
  function accept<T>(node: ModelNode, answer: unknown, usage: TokenUsage | null): T {
    const fields = Object.keys(SHAPES[node].properties ?? {});
    const object = answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Record<string, unknown>) : {};
    let output: Record<string, unknown> = { ...Object.fromEntries(fields.filter((f) => f in object).map((f) => [f, object[f]])), engine: 'model' };
    if (node === 'WRITER' && typeof output.subject === 'string' && typeof output.body === 'string') {
      output = { ...output, ...fitDraft({ subject: output.subject, body: output.body }, usage) };
    }
    try {
      assertStepOutput(node, output);
    } catch (error) {
      const where = (error as Error).message.replace(/^\w+ output does not match its schema /, '');
      throw new StepAttemptError(`the model's answer did not match the ${node} schema: ${where}`, usage);
    }
    return output as T;
  }

  async function step<T>(node: ModelNode, prompt: Prompt, user: string, ctx: RunContext): Promise<EngineResult<T>> {
    const { answer, usage, model } = await ask(node, prompt, user, ctx);
    return { output: accept<T>(node, answer, usage), model, promptVersion: prompt.version, usage };
  }

  return {
    name: 'model',
    analyse: (ctx) => step<AnalysisOutput>('ANALYSIS', analysisPrompt, analysisPrompt.render(ctx), ctx),
    strategise: (ctx) => step<StrategyOutput>('STRATEGY', strategyPrompt, strategyPrompt.render(ctx), ctx),
    write: async (ctx) => {
      const result = await step<WriterOutput>('WRITER', writerPrompt, writerPrompt.render(ctx), ctx);
      // Signed as every engine signs (src/agent/sign-off.ts), whatever closing the model wrote.
      const sender = ctx.sender ?? { name: ctx.senderName, signature: null };
      const body = withSignOff(result.output.body, sender).slice(0, BODY_MAX);
      return { ...result, output: { ...result.output, body } };
    },
  };
}

function usageOf(usage: LanguageModelUsage | undefined): TokenUsage | null {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined && usage.totalTokens === undefined)) return null;
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
}

/** The JSON object in an answer that wrapped it in a code fence or in prose; undefined when there is none. */
export function salvageJson(text: string | undefined): unknown {
  if (!text) return undefined;
  const candidate = fencedText(text) ?? text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  if (!candidate.trim()) return undefined;
  try {
    const value: unknown = JSON.parse(candidate);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the first code fence holds (```json … ```), or undefined when it is never closed. Found by position, not by
 * `/```(?:json)?\s*([\s\S]*?)```/`, which reads the rest of the answer again for each space after an open fence.
 */
function fencedText(text: string): string | undefined {
  const open = text.indexOf('```');
  if (open < 0) return undefined;
  let start = open + 3;
  if (text.slice(start, start + 4).toLowerCase() === 'json') start += 4;
  while (start < text.length && /\s/.test(text.charAt(start))) start++;
  const close = text.indexOf('```', start);
  return close < 0 ? undefined : text.slice(start, close);
}

function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the model call was cancelled');
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function originOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return '(an invalid URL)';
  }
}

function retryAfter(value: string | undefined): number | null {
  if (!value) return null;
  const secondsValue = Number(value);
  if (Number.isFinite(secondsValue) && secondsValue >= 0) return secondsValue * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** The endpoint's own one-line explanation (`{"error":{"message":…}}`), when it gave one. */
function detailOf(body: string | undefined): string | null {
  if (!body) return null;
  let text: unknown = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    text = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message ?? null);
  } catch {
    // Not JSON: a short plain-text body is still worth showing.
    if (/<html/i.test(body)) return null;
  }
  if (typeof text !== 'string' || !text.trim()) return null;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Whether a 429's body says the quota is exhausted rather than the rate exceeded: OpenAI answers
 * `{"error":{"code":"insufficient_quota","type":"insufficient_quota",…}}` for ever once an account's credit is spent.
 */
function quotaExhausted(body: string | undefined): boolean {
  if (!body || body.length > 65_536) return false;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; type?: unknown } };
    return parsed.error?.code === 'insufficient_quota' || parsed.error?.type === 'insufficient_quota';
  } catch {
    return false;
  }
}

class AnswerTooLarge extends Error {}

/** A fetch that stops reading an answer past `maxBytes`, by its Content-Length or as it streams in. */
function boundedFetch(base: typeof fetch, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    const tooLarge = () => new AnswerTooLarge(`the answer is larger than ${maxBytes} bytes`);
    if (Number(response.headers.get('content-length')) > maxBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    if (!response.body) return response;
    let read = 0;
    const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Whether the answer was refused for its size, however deep the AI SDK wrapped that. */
export function answerTooLarge(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; depth < 8 && cause instanceof Error; depth++) {
    if (cause instanceof AnswerTooLarge) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

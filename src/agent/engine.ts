// What a pipeline step knows about the run, and the interface every engine implements.
import type { AnalysisOutput, ResearchOutput, StrategyOutput, WriterOutput } from '../schemas/outputs.ts';

export interface LeadFacts {
  id: string;
  name: string;
  email: string | null;
  companyName: string | null;
  companyWebsite: string | null;
}

export interface CallFacts {
  id: string;
  title: string | null;
  transcript: string;
  occurredAt: Date | null;
}

export interface Sender {
  name: string | null;
  /** The signature the e-mail ends with, verbatim; null: a closing and the name. */
  signature: string | null;
}

/**
 * The latest version of the draft as the reviewer last saw it, which a regeneration builds on: a person's edit when
 * they edited it (`origin: 'edited'`), numbered as the version list numbers it (so after an edit of v1 it is v2).
 */
export interface PreviousDraft {
  version: number;
  subject: string;
  body: string;
  /** How the version was made: by WRITER (`generated`, `regenerated`) or by a person's edit (`edited`), to keep. */
  origin?: 'generated' | 'regenerated' | 'edited';
}

/** Everything a step may read: the lead, the call, and the outputs of the steps before it. */
export interface RunContext {
  runId: string;
  lead: LeadFacts;
  call: CallFacts;
  /** Name of the person the e-mail is signed by: `sender.name` when the worker found the sender. */
  senderName: string | null;
  /** Who signs the e-mail: the person who started the run, else the workspace's admin, else its mail sender name. */
  sender?: Sender;
  /** The version this WRITER run replaces, when a reviewer asked for another: the latest, a person's edit included. */
  previousDraft?: PreviousDraft | null;
  research?: ResearchOutput;
  analysis?: AnalysisOutput;
  strategy?: StrategyOutput;
  /** A reviewer's feedback on an earlier draft, when WRITER runs again. */
  feedback?: string | null;
  /** Where ANALYSIS's quotes were said, for the model's brief: looked up in the CPU pool before WRITER (brief.ts). */
  quoteLines?: ReadonlyMap<string, number>;
  /** Tokens the run may still spend on model calls; engines without a model ignore it. */
  tokensLeft?: number;
  signal?: AbortSignal;
}

/** The context without its abort signal, as it crosses to a CPU pool thread. */
export function detached<T extends RunContext>(ctx: T): T {
  const { signal: _signal, ...rest } = ctx;
  return rest as T;
}

export type EngineName = 'offline' | 'model';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** A step's output with what it took to make it, recorded on the step and in its events. */
export interface EngineResult<T> {
  output: T;
  /** The model that answered; null for the offline engine. */
  model: string | null;
  /** The version of the prompt (or of the rules) that produced the output. */
  promptVersion: string;
  usage: TokenUsage | null;
}

/** ANALYSIS, STRATEGY and WRITER go through an engine; RESEARCH is the same for every engine. */
export interface Engine {
  readonly name: EngineName;
  analyse(ctx: RunContext & { research: ResearchOutput }): Promise<EngineResult<AnalysisOutput>>;
  strategise(ctx: RunContext & { research: ResearchOutput; analysis: AnalysisOutput }): Promise<EngineResult<StrategyOutput>>;
  write(ctx: RunContext & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput }): Promise<EngineResult<WriterOutput>>;
}

/**
 * A step failure that another attempt cannot mend (the run's token budget is spent, the model endpoint refuses
 * the credentials): the step fails at once instead of being retried. Any other error is retried with backoff.
 */
export class PermanentStepError extends Error {
  /** Tokens spent before failing, when known, so the run's total stays right. */
  readonly usage: TokenUsage | null;
  constructor(message: string, usage: TokenUsage | null = null) {
    super(message);
    this.name = 'PermanentStepError';
    this.usage = usage;
  }
}

/** A failed attempt that spent tokens (a model answered, but not usably): retried, and its tokens counted. */
export class StepAttemptError extends Error {
  readonly usage: TokenUsage | null;
  constructor(message: string, usage: TokenUsage | null, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StepAttemptError';
    this.usage = usage;
  }
}

/** The longest a model endpoint's Retry-After may hold calls back: a misbehaving one cannot stop runs for hours. */
export const MAX_RETRY_AFTER_MS = 120_000;

/** A failed request to the model endpoint, with what the worker may want for its backoff. */
export class ModelEndpointError extends Error {
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  constructor(message: string, status: number | null, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'ModelEndpointError';
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A model call put off rather than failed: the endpoint asked to wait (a 429 with Retry-After), or no call slot came
 * free in time (src/agent/engines/limiter.ts). The worker puts the step back in the queue, due at `retryAt`, without
 * counting an attempt: waiting for the provider is not the step failing. But not for ever: a step the endpoint has
 * refused (`refused`) for longer than LLM_RATE_LIMIT_GIVE_UP_MINUTES fails its run.
 */
export class ModelCallDeferred extends Error {
  readonly retryAt: Date;
  /** Tokens spent before the call was put off (a WRITER's first draft), so the run's total stays right. */
  readonly usage: TokenUsage | null;
  /** True when the endpoint refused (a 429, or the pause one set); false when only this installation's slots were full. */
  readonly refused: boolean;
  constructor(message: string, retryAt: Date, usage: TokenUsage | null = null, { refused = true }: { refused?: boolean } = {}) {
    super(message);
    this.name = 'ModelCallDeferred';
    this.retryAt = retryAt;
    this.usage = usage;
    this.refused = refused;
  }
}

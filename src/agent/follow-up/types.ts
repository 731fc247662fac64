// The follow-up writer's interface (DESIGN §13, §16), apart from its work so that the CPU pool's tasks and the writer
// share it without importing each other.
import type { CallFacts, EngineName, LeadFacts, Sender, TokenUsage } from '../engine.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';

export interface FollowUpInput {
  lead: LeadFacts;
  call: CallFacts;
  research?: ResearchOutput;
  analysis?: AnalysisOutput;
  strategy?: StrategyOutput;
  sender?: Sender;
  /** The touch this draft is: 2 for the first follow-up (the approved e-mail is touch 1). */
  touchNumber: number;
  /** How many touches the sequence has in all, touch 1 included. */
  touchCount: number;
  /** The step's instruction: "a short bump with one new point from the call". */
  instruction: string;
  /** The thread so far, touch 1 first: what this touch must not repeat, sentence or point. */
  earlier: { subject: string; body: string }[];
  /** The buyer's reply, when this is the answer to it ("Draft a response"). */
  reply?: { from: string | null; text: string } | null;
  /** A reviewer's feedback on an earlier version of this touch. */
  feedback?: string | null;
}

export interface FollowUpDraft {
  subject: string;
  body: string;
  /** What wrote it, for the run's trace and token count: set by writeFollowUp. */
  writtenBy?: WrittenBy;
}

export interface WrittenBy {
  engine: EngineName;
  /** The model that answered; null for the offline writer. */
  model: string | null;
  /** The prompt's version (prompts/follow-up.ts), or the offline rules' (FOLLOW_UP_RULES_VERSION). */
  promptVersion: string;
  /** Tokens the model call spent, its answer kept or not; null when no model was asked. */
  usage: TokenUsage | null;
}

/** What a model's follow-up is briefed with and checked against. */
export interface FollowUpBriefing {
  /** Points of the call no earlier touch made, in our words, best first. */
  freshPoints: string[];
  /** What every touch may say again: the agreed next step and its time. */
  allowed: string[];
  /** The word limit: 100, the reviewer's lower one, or 150 for an answer to a reply's questions. */
  limit: number;
}

/** The work of work.ts, in the caller's CPU pool or in place. */
export interface FollowUpWork {
  write(input: FollowUpInput): Promise<FollowUpDraft>;
  brief(input: FollowUpInput): Promise<FollowUpBriefing>;
  check(job: { draft: FollowUpDraft; input: FollowUpInput; briefing: FollowUpBriefing }): Promise<string[]>;
}

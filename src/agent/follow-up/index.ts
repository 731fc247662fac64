// WRITER for follow-ups (DESIGN §13) and for the answer to a buyer's reply (§16): touch n of a sequence, written from
// the call, the research and the earlier touches of the thread, held to §12's rules and to at most 100 words. The
// offline writer is what every installation without a model gets; with a model (`options.model`), the model writes
// it (model.ts) and its answer passes the same checks, else the offline writer's draft is used.
import type { CallFacts, Engine, LeadFacts, Sender } from '../engine.ts';
import { offlineRules } from '../engines/offline/rules.ts';
import { readCallFacts, type CallFacts as ReadFacts } from '../engines/offline/facts.ts';
import { readFeedback } from '../engines/offline/feedback.ts';
import type { ModelEngineOptions } from '../engines/model.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';
import { toOneLine } from '../../domain/validation.ts';
import { bodyWordCount as checkWords } from '../draft-checks.ts';
import { checkFollowUp, contextOf, earlierSentences, FOLLOW_UP_WORDS } from './checks.ts';
import { composeTouch, render, stepPhrase, type Composition, type Lines } from './offline.ts';
import { madeBefore, pointsOf, readEarlier } from './points.ts';
import { composeReply, readReply, REPLY_ANSWER_WORDS } from './reply.ts';

export { contextOf, FOLLOW_UP_WORDS } from './checks.ts';
export { REPLY_ANSWER_WORDS } from './reply.ts';

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
}

export interface FollowUpOptions {
  /** The installation's engine: ANALYSIS and STRATEGY are asked of it when the input has none. */
  engine?: Engine;
  signal?: AbortSignal;
  /** The model to write through (the LLM_* settings, as createModelEngine takes them); none: the offline writer. */
  model?: ModelEngineOptions;
}

const SUBJECT_MAX = 80;
/** An instruction is at most 500 characters (§13); a longer one is read this far. */
const INSTRUCTION_MAX = 500;
/** Drafts tried, each with the next fresh point, before the one without a point is kept. */
const ATTEMPTS_MAX = 4;

/** `Re: <touch 1's subject>`: the thread's subject, as a mail client shows a reply. */
export function threadSubject(earlier: FollowUpInput['earlier']): string {
  const first = toOneLine(earlier[0]?.subject ?? '').slice(0, 300) || 'Following up';
  const subject = /^re:\s/i.test(first) ? first : `Re: ${first}`;
  return subject.length <= SUBJECT_MAX ? subject : `${subject.slice(0, SUBJECT_MAX - 1).trimEnd()}…`;
}

/** The follow-up (or the answer to the reply) for this touch. */
export async function writeFollowUp(input: FollowUpInput, options: FollowUpOptions = {}): Promise<FollowUpDraft> {
  const full = await withSteps(input, options);
  if (options.model) {
    const { writeWithModel } = await import('./model.ts');
    const written = await writeWithModel(full, options.model, options.signal);
    if (written) return written;
  }
  options.signal?.throwIfAborted();
  return writeOffline(full);
}

/** The input with ANALYSIS and STRATEGY, asked of the engine (or the offline rules) when the caller had none. */
async function withSteps(input: FollowUpInput, options: FollowUpOptions): Promise<FollowUpInput & { research: ResearchOutput; analysis: AnalysisOutput; strategy: StrategyOutput }> {
  const research: ResearchOutput = input.research ?? {
    engine: 'offline', website: { url: input.lead.companyWebsite, fetched: false, status: null, error: null, title: null, description: null, summary: null }, facts: [], sources: [],
  };
  const ctx = contextOf({ ...input, research });
  const analysis = input.analysis ?? (options.engine ? (await options.engine.analyse({ ...ctx, research })).output : offlineRules.analyse({ ...ctx, research }).output);
  const strategy = input.strategy ?? (options.engine
    ? (await options.engine.strategise({ ...ctx, research, analysis })).output
    : offlineRules.strategise({ ...ctx, research, analysis }).output);
  return { ...input, instruction: input.instruction.slice(0, INSTRUCTION_MAX), research, analysis, strategy };
}

/**
 * The offline follow-up: with each fresh point in turn, the first draft that passes the checks; with none passing
 * (every point claims or copies more than it may), the note without a new point, which says only what is safe.
 */
export function writeOffline(input: FollowUpInput): FollowUpDraft {
  const facts = readCallFacts(input.call.transcript, input.lead.name, input.sender?.name ?? null, input.lead.companyName);
  const subject = threadSubject(input.earlier);
  const style = readFeedback(input.feedback, null);
  const sender = input.sender ?? { name: null, signature: null };
  if (input.reply?.text.trim()) {
    const read = readReply(input.reply.text);
    const lines = composeReply(read, facts, input.research, style.variant);
    const limit = read.kind === 'question' ? REPLY_ANSWER_WORDS : FOLLOW_UP_WORDS;
    return { subject, body: fitted(lines, input, sender, style, limit, facts) };
  }
  const composition = compositionOf(input, facts, style);
  const limit = Math.min(style.wordLimit ?? FOLLOW_UP_WORDS, FOLLOW_UP_WORDS);
  for (let at = 0; at < Math.min(ATTEMPTS_MAX, composition.fresh.length); at++) {
    const body = fitted(composeTouch(composition, at), input, sender, style, limit, facts);
    if (checkFollowUp({ subject, body }, input, limit, allowedPhrases(facts)).length === 0) return { subject, body };
  }
  return { subject, body: fitted(composeTouch({ ...composition, fresh: [] }, 0), input, sender, style, limit, facts) };
}

/** What every touch may say again: the agreed next step, and its time. */
export function allowedPhrases(facts: ReadFacts): string[] {
  const step = facts.nextStep;
  return step ? [stepPhrase(step), ...(step.when ? [step.when] : [])] : [];
}

function compositionOf(input: FollowUpInput, facts: ReadFacts, style: ReturnType<typeof readFeedback>): Composition {
  const said = readEarlier(input.earlier);
  const sentences = earlierSentences(input.earlier, allowedPhrases(facts));
  // What the reviewer asked to drop is no new point; what they asked to mention comes first.
  const dropped = style.omissions.map((o) => o.toLowerCase());
  const wanted = style.mentions.map((m) => m.toLowerCase());
  const fresh = pointsOf(facts, input.research)
    .filter((p) => !madeBefore(p.text, said) && !dropped.some((d) => p.text.toLowerCase().includes(d)))
    .sort((a, b) => Number(wanted.some((w) => b.text.toLowerCase().includes(w))) - Number(wanted.some((w) => a.text.toLowerCase().includes(w))));
  return {
    facts, leadName: input.lead.name, sender: input.sender ?? { name: null, signature: null },
    touchNumber: input.touchNumber, touchCount: input.touchCount, instruction: input.instruction,
    fresh, said, repeats: sentences.repeats, style,
  };
}

/** The body within the limit: the new point's sentence goes first, then the reference back; never the call to action. */
function fitted(lines: Lines, input: FollowUpInput, sender: Sender, style: ReturnType<typeof readFeedback>, limit: number, _facts: ReadFacts): string {
  let current = lines;
  let body = render(current, input.lead.name, sender, style);
  for (let i = 0; i < 4 && checkWords(body) > limit; i++) {
    const first = current.paragraphs[0] ?? [];
    if (first.length <= 1 && current.paragraphs.length <= 1) break;
    const paragraphs = first.length > 1 ? [first.slice(0, -1), ...current.paragraphs.slice(1)] : current.paragraphs.slice(1);
    current = { paragraphs };
    body = render(current, input.lead.name, sender, style);
  }
  return body;
}

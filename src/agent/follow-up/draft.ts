// The offline follow-up, whole: the fresh points, the touch (or the answer to the reply) composed, fitted to the word
// limit and checked; the first draft that passes is kept. Pure: a CPU pool thread runs it (work.ts).
import type { Sender } from '../engine.ts';
import { readCallFacts, type CallFacts as ReadFacts } from '../engines/offline/facts.ts';
import { keywords, omissionTerms, readFeedback } from '../engines/offline/feedback.ts';
import { bodyWordCount as checkWords } from '../draft-checks.ts';
import { toOneLine } from '../../domain/validation.ts';
import { checkFollowUp, earlierSentences, FOLLOW_UP_WORDS } from './checks.ts';
import { composeTouch, render, stepPhrase, type Composition, type Lines } from './offline.ts';
import { madeBefore, pointsOf, readEarlier, type Point } from './points.ts';
import { composeReply, readReply, REPLY_ANSWER_WORDS } from './reply.ts';
import type { FollowUpDraft, FollowUpInput } from './types.ts';

const SUBJECT_MAX = 80;
/** Drafts tried, each with the next fresh point, before the one without a point is kept. */
const ATTEMPTS_MAX = 4;

/** `Re: <touch 1's subject>`: the thread's subject, as a mail client shows a reply. */
export function threadSubject(earlier: FollowUpInput['earlier']): string {
  const first = toOneLine(earlier[0]?.subject ?? '').slice(0, 300) || 'Following up';
  const subject = /^re:\s/i.test(first) ? first : `Re: ${first}`;
  return subject.length <= SUBJECT_MAX ? subject : `${subject.slice(0, SUBJECT_MAX - 1).trimEnd()}…`;
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
    const limit = read.kind === 'question' ? REPLY_ANSWER_WORDS : FOLLOW_UP_WORDS;
    const { repeats } = earlierSentences(input.earlier, allowedPhrases(facts));
    const body = fitted(composeReply(read, facts, input.research, style.variant, { repeats }), input, sender, style, limit, facts);
    if (checkFollowUp({ subject, body }, input, limit, allowedPhrases(facts)).length === 0) return { subject, body };
    // An answer the checks refuse (a claim the call does not back, words pasted from it) becomes a promise to confirm.
    return { subject, body: fitted(composeReply(read, facts, input.research, style.variant, { answering: false }), input, sender, style, limit, facts) };
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
  const dropped = style.omissions.flatMap(omissionTerms);
  const wanted = style.mentions.flatMap(keywords);
  const asked = (p: Point): number => wanted.filter((k) => p.text.toLowerCase().includes(k)).length;
  const fresh = pointsOf(facts, input.research)
    .filter((p) => !madeBefore(p.text, said) && !dropped.some((t) => t.test(p.text)))
    .map((p) => (asked(p) > 0 ? { ...p, weight: p.weight + 100 * asked(p) } : p));
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

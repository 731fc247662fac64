// "Draft a response" (DESIGN §16): the answer to the buyer's reply, from what they wrote and what the call grounds.
// Interested: the concrete next step, the one agreed on the call when there was one. A question: answered from what
// the call or the research said, else a promise to confirm; never a new fact. Not now: a short, gracious note that
// asks for nothing. The reply is a stranger's text: read to a bound, by patterns without nested repetition.
import { classifyReply } from '../replies/classify.ts';
import { ownText } from '../replies/own-text.ts';
import { inOurWords, SaidIndex } from '../engines/offline/copying.ts';
import type { CallFacts, Sentence } from '../engines/offline/facts.ts';
import { isStopWord } from '../claims.ts';
import { restate } from '../engines/offline/writing.ts';
import type { ResearchOutput } from '../../schemas/outputs.ts';
import { stepPhrase, type Lines } from './offline.ts';

/** A reply is read this far: what a person answers is at the top, above the quoted thread. */
const REPLY_READ_MAX = 64 * 1024;
const OWN_READ_MAX = 4000;
const QUESTIONS_MAX = 2;
/** The most words an answer to a reply's questions may have: a question answered needs more room than a bump. */
export const REPLY_ANSWER_WORDS = 150;

export type ReplyKind = 'interested' | 'question' | 'not_now' | 'declined' | 'referral' | 'other';

export interface ReadReply {
  kind: ReplyKind;
  /** The buyer's questions, each as they wrote it (at most a sentence). */
  questions: string[];
  /** When they asked to come back ("in Q3", "after the summer"), as they wrote it. */
  later: string | null;
  /** The person a referral names, as written. */
  person: string | null;
  /** The time the buyer proposes to talk ("Tuesday", "Thursday at 3pm", "tomorrow"), as they wrote it. */
  proposed: string | null;
}

const QUESTION_WORDS = new Set(['quick', 'question', 'before', 'after', 'about', 'does', 'did', 'can', 'could', 'would', 'will', 'what', 'how', 'when', 'where', 'which', 'who', 'why', 'you', 'your', 'yours', 'have', 'has', 'there', 'any', 'much', 'many', 'work', 'need', 'also', 'just', 'quick', 'wondering']);
const DAY = String.raw`(?:Monday|Tuesday|Wednesday|Thursday|Friday|tomorrow|next week)`;
const HOUR = String.raw`(?:\s(?:at|around)\s\d{1,2}(?:[:.]\d{2})?\s?(?:am|pm)?|\s(?:morning|afternoon))?`;
/** A time to talk the buyer proposes: a day, maybe an hour, beside a word for meeting or a "works". */
const PROPOSED = new RegExp(String.raw`\b(?:(?:talk|call|chat|meet|speak|catch up|connect|demo)\b[^.?!\n]{0,30}?\b(${DAY}${HOUR})|(${DAY}${HOUR})\s(?:works|is good|is fine|suits))`, 'i');
const LATER = /\b(?:in|after|until|around|from|by)\s(?:the\s)?(?:Q[1-4]|(?:January|February|March|April|May|June|July|August|September|October|November|December)|(?:next|the new) (?:year|quarter|month)|(?:the )?summer|(?:the )?autumn|(?:the )?fall|(?:the )?spring|(?:the )?winter|a (?:few|couple of) (?:weeks|months))\b/i;

/** What the reply says, and what it asks. */
export function readReply(text: string): ReadReply {
  const own = ownText(text.slice(0, REPLY_READ_MAX)).slice(0, OWN_READ_MAX);
  const { classification, person } = classifyReply({ headers: {}, text: own, date: null });
  // A question that proposes a time ("Could we talk on Tuesday?") is answered by taking the time, not by a promise
  // to confirm it; the rest are asked as written, without a leading "And".
  const questions = own.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/)
    .filter((s) => s.endsWith('?') && s.length <= 300 && keysOf(s).length > 0 && !PROPOSED.test(s))
    .map((s) => s.replace(/^(?:and|also|but|so|plus)[,\s]+(\p{L})/iu, (_, first: string) => first.toUpperCase()))
    .slice(0, QUESTIONS_MAX);
  const later = LATER.exec(own)?.[0] ?? null;
  const match = PROPOSED.exec(own);
  const proposed = match ? (match[1] ?? match[2] ?? '').trim() : null;
  const kind: ReplyKind = classification === 'not_now' ? 'not_now'
    : classification === 'not_interested' || classification === 'unsubscribe' ? 'declined'
      : classification === 'referral' && person?.name ? 'referral'
        : questions.length > 0 ? 'question'
        : classification === 'interested' || proposed ? 'interested' : 'other';
  return { kind, questions, later, person: person?.name?.slice(0, 80) ?? null, proposed };
}

/** The words of a question that say what it is about: "which evidence fields do you need from Stripe?". */
function keysOf(question: string): string[] {
  const words = question.toLowerCase().split(/[^\p{L}\p{N}-]+/u);
  return [...new Set(words.filter((w) => w.length >= 4 && !isStopWord(w) && !QUESTION_WORDS.has(w)))].slice(0, 10);
}

/**
 * What the call said about a question: the rep's own answer when one speaks of it (the rep's words are ours to say),
 * else a research fact; null when nothing does, and the answer then promises to confirm.
 */
function answerOf(question: string, facts: CallFacts, research: ResearchOutput | undefined, said: SaidIndex): string | null {
  const keys = keysOf(question);
  if (keys.length === 0) return null;
  const hits = (text: string): number => keys.filter((k) => text.toLowerCase().includes(k)).length;
  const need = Math.min(2, keys.length);
  let best: Sentence | null = null;
  for (const s of facts.sentences) {
    if (s.text.endsWith('?') || hits(s.text) < need) continue;
    if (!best || hits(s.text) > hits(best.text) || (hits(s.text) === hits(best.text) && s.role === 'rep' && best.role !== 'rep')) best = s;
  }
  const keep = (w: string): boolean => /\d/.test(w) || /^[A-Z]/.test(w);
  if (best) {
    const clause = best.role === 'rep'
      ? best.text.replace(/[.!?]+$/, '').replace(/^(?:(?:yes|yeah|sure|right|okay|ok|great|of course|absolutely|good question)[,.!]?\s+)+/i, '')
      : restate(best.text, keys.find((k) => best!.text.toLowerCase().includes(k)) ?? null);
    const ours = inOurWords(clause, said, keep, true).replace(/[,;:\s]+$/, '');
    if (ours.split(/\s+/).length >= 4 && ours.split(/\s+/).length <= 30) return best.role === 'rep' ? ours : `as you said on the call, ${ours}`;
  }
  const fact = research?.facts.find((f) => hits(f.text) >= need && f.text.length <= 200);
  return fact ? `your website says ${fact.text.replace(/[.!?]+$/, '')}` : null;
}

/** The buyer's time taken: "Tuesday works for me", with the hour asked for when they named none. */
function acceptTime(proposed: string): string {
  const time = `${proposed.charAt(0).toUpperCase()}${proposed.slice(1)}`;
  if (/^next week$/i.test(proposed)) return `${time} works for me: which day and time suit you best? I’ll send a calendar invite.`;
  const hour = /\d|morning|afternoon/i.test(proposed);
  return hour ? `${time} works for me. I’ll send a calendar invite.` : `${time} works for me: what time suits you? I’ll send a calendar invite.`;
}

/** The answer's sentences: thanks, what the reply asks answered, and the next step. */
export function composeReply(
  read: ReadReply, facts: CallFacts, research: ResearchOutput | undefined, variant: number,
  { answering = true, repeats = () => false }: { answering?: boolean; repeats?: (sentence: string) => boolean } = {},
): Lines {
  const step = facts.nextStep;
  const stepText = step ? stepPhrase(step) : null;
  const said = new SaidIndex(facts.sentences.map((s) => s.text));
  switch (read.kind) {
    case 'not_now':
      return { paragraphs: [[
        'Thanks for letting me know, and understood.',
        read.later ? `I’ll leave it until ${read.later.replace(/^(?:in|after|until|around|from|by)\s/i, '')} and check in then.` : 'I’ll leave it with you for now.',
      ], ['No need to reply in the meantime.']] };
    case 'referral':
      return { paragraphs: [[`Thanks for pointing me to ${read.person}.`, `I’ll reach out to ${read.person} directly and keep it short.`]] };
    case 'declined':
      return { paragraphs: [['Thanks for letting me know, and understood.', 'I won’t follow up on this again.']] };
    case 'question': {
      const quoted = (q: string): string => `“${q.trim()}”`;
      const answered = read.questions.map((q) => ({ q, answer: answering ? answerOf(q, facts, research, said) : null }));
      const answers = answered.filter((a) => a.answer !== null).map(({ q, answer }) => {
        const asked = q.split(/\s+/).length <= 18 ? `You asked: ${quoted(q)} ` : '';
        const said = `${answer!.charAt(0).toUpperCase()}${answer!.slice(1)}.`;
        // What an earlier e-mail of the thread already said is pointed to, not said again.
        return repeats(said) ? `${asked}It’s in my earlier e-mail.` : `${asked}${said}`;
      });
      // What the call does not say is confirmed later, never guessed: one promise for all of it.
      const open = answered.filter((a) => a.answer === null).map((a) => a.q).filter((q) => q.split(/\s+/).length <= 18);
      if (open.length > 0) {
        answers.push(`${answers.length > 0 ? 'On' : 'You asked'} ${open.map(quoted).join(' and ')}${answers.length > 0 ? ',' : ':'} I’ll confirm ${open.length > 1 ? 'both' : 'that'} and come back to you shortly.`);
      } else if (answers.length === 0) answers.push('I’ll confirm that and come back to you shortly.');
      if (read.proposed) return { paragraphs: [['Thanks for the quick reply.'], [acceptTime(read.proposed)], answers] };
      const next = stepText ? `Happy to go through it in more depth on ${stepText}.` : 'Happy to go through it on a short call if that helps.';
      return { paragraphs: [['Thanks for the quick reply.'], answers, [next]] };
    }
    case 'interested':
    case 'other': {
      const thanks = variant % 2 === 0 ? 'Thanks for getting back to me, good to hear.' : 'Great to hear back from you, thank you.';
      const next = read.proposed ? acceptTime(read.proposed)
        : stepText && step?.when
        ? `Shall we go ahead with ${stepText}? I’ll send a calendar invite.`
        : stepText ? `Which day would suit you for ${stepText}? I’ll send a calendar invite.`
          : 'Would a 20-minute call next week suit you? Send me two or three times that work and I’ll set it up.';
      return { paragraphs: [[read.kind === 'interested' ? thanks : 'Thanks for your reply.', next]] };
    }
  }
}

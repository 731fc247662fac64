// The checks a follow-up is held to, whatever wrote it (DESIGN §12, §13): those of a first e-mail (no leak of the
// transcript's form, no run of 8 words pasted from it, every claim grounded: draft-checks.ts), at most 100 words
// (150 for an answer to a buyer's questions), and no sentence of an earlier touch of the thread said again. A
// follow-up carries one point, not every commitment: the first e-mail's commitment check is not one of them.
import { bodyText, bodyWordCount, checkDraft, CHECK_NAMES } from '../draft-checks.ts';
import { SaidIndex } from '../engines/offline/copying.ts';
import type { Draft } from '../grounding.ts';
import type { RunContext } from '../engine.ts';
import type { FollowUpInput } from './types.ts';

/** The most words a follow-up's body may have, greeting and signature not counted. */
export const FOLLOW_UP_WORDS = 100;
export const REPEATED = 'repeated from an earlier touch';

const TOUCH_READ_MAX = 6000;
const TOUCHES_READ_MAX = 12;
/** Sentences this short ("Thanks again.") are common courtesy, not a touch's content. */
const COURTESY_WORDS = 4;

const normal = (t: string): string => t.toLowerCase().replace(/[’']/g, "'").replace(/[^\p{L}\p{N}'%$€£]+/gu, ' ').trim();

function sentencesOf(body: string): string[] {
  return bodyText(body.slice(0, TOUCH_READ_MAX)).replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/).map((s) => s.trim()).filter(Boolean);
}

/** The earlier touches' sentences, and whether a new one repeats one: the same words, or a run of 8 of them. */
export function earlierSentences(earlier: FollowUpInput['earlier'], allowed: readonly string[] = []): { repeats: (sentence: string) => boolean } {
  const sentences = earlier.slice(0, TOUCHES_READ_MAX).flatMap((touch) => sentencesOf(touch.body));
  const exact = new Set(sentences.map(normal));
  const runs = new SaidIndex(sentences);
  return {
    repeats: (written) => {
      // The agreed step ("the call on Tuesday at 10 with Sam") is the call to action of every touch: said again, it
      // is no repeated sentence; the words around it must be new.
      const sentence = allowed.reduce((s, phrase) => (phrase.length >= 8 ? s.split(phrase).join('it') : s), written);
      const n = normal(sentence);
      return (n.split(' ').length > COURTESY_WORDS && exact.has(n)) || runs.copiedRun(sentence) !== null;
    },
  };
}

/** What the draft fails, each named as draft-checks.ts names failures, plus `repeated from an earlier touch: …`. */
export function checkFollowUp(draft: Draft, input: FollowUpInput, limit: number, allowed: readonly string[] = []): string[] {
  const ctx = contextOf({
    ...input,
    // The buyer's reply is theirs to have said: what it names, the answer may name.
    feedback: [input.feedback, input.reply?.text.slice(0, 8000)].filter(Boolean).join('\n') || null,
  });
  const failed = checkDraft(draft, ctx).failed
    .filter((f) => !f.startsWith(`${CHECK_NAMES.commitment}: `) && !f.startsWith(`${CHECK_NAMES.wordLimit}: `));
  const words = bodyWordCount(draft.body);
  if (words > limit) failed.push(`${CHECK_NAMES.wordLimit}: the body has ${words} words; at most ${limit} (greeting and signature not counted)`);
  const { repeats } = earlierSentences(input.earlier, allowed);
  for (const sentence of sentencesOf(draft.body).filter(repeats).slice(0, 5)) failed.push(`${REPEATED}: “${sentence.slice(0, 200)}”`);
  return failed;
}

/** The run's context as the checks and the engines read it. */
export function contextOf(input: FollowUpInput, signal?: AbortSignal): RunContext {
  return {
    runId: 'follow-up',
    lead: input.lead,
    call: input.call,
    senderName: input.sender?.name ?? null,
    ...(input.sender ? { sender: input.sender } : {}),
    ...(input.research ? { research: input.research } : {}),
    ...(input.analysis ? { analysis: input.analysis } : {}),
    ...(input.strategy ? { strategy: input.strategy } : {}),
    feedback: input.feedback ?? null,
    ...(signal ? { signal } : {}),
  };
}

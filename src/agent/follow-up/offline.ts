// The offline follow-up writer (DESIGN §13): a short note in the same thread that refers back to the earlier e-mail,
// makes ONE point none of the earlier touches made, does what the step's instruction asks, and keeps the call to
// action; the last touch of a sequence closes the loop politely. With the buyer's reply, it answers the reply instead
// (DESIGN §16). Deterministic: the same input writes the same draft, and `variant` writes another one.
import type { Sender } from '../engine.ts';
import { firstNameOf } from '../engines/offline/writing.ts';
import type { CallFacts, NextStep } from '../engines/offline/facts.ts';
import type { Style } from '../engines/offline/feedback.ts';
import { signOff } from '../sign-off.ts';
import { madeBefore, promisedResource, type Point, type Said } from './points.ts';
import { readIntent, type Intent } from './intent.ts';

export interface Composition {
  facts: CallFacts;
  leadName: string;
  sender: Sender;
  touchNumber: number;
  touchCount: number;
  instruction: string;
  /** The points none of the earlier touches made, best first. */
  fresh: Point[];
  said: Said;
  /** Whether a sentence repeats one of an earlier touch (the same, or a run of 8 of its words). */
  repeats: (sentence: string) => boolean;
  style: Style;
}

/** A draft's sentences before the greeting and the sign-off are put around them. */
export interface Lines {
  paragraphs: string[][];
}

const upperFirst = (t: string): string => t.charAt(0).toUpperCase() + t.slice(1);
/** "Your return rate…" after a colon reads "your return rate…"; a name ("Black Friday", "Aisha") keeps its capital. */
const lowerFirst = (t: string): string => (/^(?:You|Your|You’re|The|A|An|Every|Each|It|That|This|There|About|Around|One|Some|Most|All|If|When|No|Nothing)\b/.test(t) ? t.charAt(0).toLowerCase() + t.slice(1) : t);

function onWhen(when: string): string {
  if (/^(?:in|on|at|by|before|after|next|this|within|during|around|early|late|end)\b/i.test(when)) return when;
  return /^(?:\d|noon)/i.test(when) && !/^\d{1,2}\s(?:of\s)?[A-Z]/.test(when) ? `at ${when}` : `on ${when}`;
}

/** The agreed step as a phrase: "the call on Tuesday at 10 with Sam". */
export function stepPhrase(step: NextStep): string {
  const who = step.who.length > 0 ? ` with ${step.who.join(' and ')}` : '';
  return `the ${step.what}${step.when ? ` ${onWhen(step.when)}` : ''}${who}`;
}

/** The first of the wordings that repeats no sentence of an earlier touch; null when each does. */
function firstNew(c: Composition, wordings: string[], from = 0): string | null {
  for (let i = 0; i < wordings.length; i++) {
    const text = wordings[(from + i) % wordings.length]!;
    if (!c.repeats(text)) return text;
  }
  return null;
}

/** How the note refers back to the earlier e-mail: plainly, as a person would. */
function referBack(c: Composition, closing: boolean): string | null {
  const wordings = closing
    ? ['I don’t want to crowd your inbox, so this is my last note for now.', 'This is my last note on this for now.', 'One last note from me, then I’ll leave it with you.']
    : c.touchNumber <= 2
      ? ['A quick follow-up on my e-mail after our call.', 'Just following up on my last note.', 'Picking up the thread from my last e-mail.']
      : ['Following up once more on my earlier e-mails.', 'A short note to add to my earlier e-mails.', 'Coming back to my last note with one more thought.'];
  return firstNew(c, wordings, c.style.variant);
}

/** A point that is a figure alone ("about 1,100 returns a month") is introduced as one. */
const FIGURE_ALONE = /^(?:about|around|roughly|nearly|almost|over|under|some)?\s?(?:[$€£]?\d|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)\S*\s(?![^,]*\b(?:is|are|was|were|has|have|had|end|ends|take|takes|cost|costs|use|uses)\b)/i;

/** The one new point as a sentence, worded by its kind and by what the step asks. */
function pointSentence(point: Point, intent: Intent, c: Composition): string | null {
  const clause = lowerFirst(point.text);
  if (FIGURE_ALONE.test(clause)) {
    return firstNew(c, intent === 'close'
      ? [`Before I do, one figure from our call: ${clause}.`, `One figure from our call I keep in mind: ${clause}.`]
      : [`One figure from our call I keep coming back to: ${clause}.`, `One more figure from our call: ${clause}.`], c.style.variant);
  }
  const wordings: Record<Point['kind'], string[]> = {
    pain: intent === 'close'
      ? [`One point from our call I still keep in mind: ${clause}.`, `Before I do, one point from our call: ${clause}.`]
      : [`One thing I didn’t raise last time: ${clause}.`, `One more point from our call: ${clause}.`, `Something else from our call: ${clause}.`],
    deadline: [`On timing, one point from our call: ${clause}.`, `One date from our call I have in mind: ${clause}.`],
    condition: [`I’ve also kept in mind what you said: ${clause}.`, `Noted from our call, too: ${clause}.`],
    research: [`One thing I read on your website: ${clause}.`, `Your website mentions this: ${clause}.`],
  };
  return firstNew(c, wordings[point.kind], c.style.variant);
}

/** The call to action, kept from the first e-mail but never in its words. */
function callToAction(c: Composition, intent: Intent, point: boolean): string | null {
  const step = c.facts.nextStep;
  if (c.facts.notNow) {
    const callBack = c.facts.commitments.find((m) => m.who === 'rep' && m.when && /\b(?:call|ring|reach out|check in|be in touch|get back)\b/i.test(m.what));
    return firstNew(c, [
      ...(callBack?.when ? [`No need to reply; I’ll be in touch ${callBack.when.replace(/^In\b/, 'in')}, as agreed.`, `Nothing needed from you; we will speak ${callBack.when.replace(/^In\b/, 'in')}, as agreed.`] : []),
      'No need to reply to this.', 'Nothing needed from you in the meantime.',
    ]);
  }
  if (intent === 'close') {
    return firstNew(c, step
      ? [`Should I close the file for now, or is ${stepPhrase(step)} still worth keeping?`, `Shall I close the file on this, or do you still want ${stepPhrase(step)}?`]
      : ['Should I close the file for now, or would a short call still be useful?', 'Shall I close the file on this, or is a short call still worth it on your side?']);
  }
  if (step?.when) {
    return firstNew(c, [
      ...(point ? [`Shall we cover it on ${stepPhrase(step)}?`, `Worth a few minutes on ${stepPhrase(step)}?`] : []),`Does ${stepPhrase(step)} still work for you?`, `Is ${stepPhrase(step)} still good on your side?`, `Let me know if anything changes for ${stepPhrase(step)}.`], c.style.variant);
  }
  if (step) return firstNew(c, [`Which day would suit you for ${stepPhrase(step)}?`, `Shall we put a date on ${stepPhrase(step)}?`], c.style.variant);
  return firstNew(c, point
    ? ['Would a short call next week suit you to talk it through?', 'Could we find 20 minutes next week to talk it through?', 'Is a short call next week worth it on your side?']
    : ['Would a short call next week suit you?', 'Could we find 20 minutes next week?', 'Is a short call next week worth it on your side?'], c.style.variant);
}

/** What a "share a resource" step can point to honestly: a promise from the call, or an offer to write one up. */
function resourceSentence(c: Composition, point: Point | null): string | null {
  const resource = promisedResource(c.facts.commitments);
  const wordings = [
    ...(resource && !madeBefore(resource, c.said) ? [`I’ll send ${resource} as promised.`] : []),
    ...(resource ? [`If it helps, I can walk you through ${resource} in a few minutes.`] : []),
    ...(point ? ['If a short write-up on this would help, I’m happy to put one together.'] : []),
  ];
  return firstNew(c, wordings, 0);
}

/**
 * The touch's sentences: the reference back, the one new point (the `pointAt`-th fresh one), what the instruction
 * asks, and the call to action. Each is a wording no earlier touch used.
 */
export function composeTouch(c: Composition, pointAt: number): Lines {
  const intent = readIntent(c.instruction, c.touchNumber, c.touchCount);
  const closing = intent === 'close';
  const ordered = orderFor(c.fresh, intent);
  const point = ordered[pointAt] ?? null;
  const first: string[] = [];
  const back = referBack(c, closing);
  if (back) first.push(back);
  const made = point ? pointSentence(point, intent, c) : null;
  if (made) first.push(made);
  const second: string[] = [];
  if (intent === 'resource' && !c.facts.notNow) {
    const offer = resourceSentence(c, point);
    if (offer) second.push(offer);
  }
  const action = callToAction(c, intent, made !== null);
  if (action) second.push(action);
  return { paragraphs: [first, second].filter((p) => p.length > 0) };
}

/** The fresh points in the order the step wants them: the weightiest first, timing first for a timing step. */
function orderFor(points: Point[], intent: Intent): Point[] {
  const bonus = (p: Point): number => (intent === 'timing' && p.kind === 'deadline' ? 10 : 0);
  return [...points].sort((a, b) => b.weight + bonus(b) - (a.weight + bonus(a)));
}

/** The greeting as the first e-mail wrote it, for the style the feedback asks. */
export function greetingOf(leadName: string, style: Style): string {
  const first = firstNameOf(leadName);
  return style.formal ? `Dear ${leadName.trim() || 'Sir or Madam'},` : `${style.casual ? 'Hey' : 'Hi'} ${first ?? 'there'},`;
}

/** The whole body: greeting, paragraphs, and the sign-off every engine writes (sign-off.ts). */
const FORMAL: Array<[RegExp, string]> = [
  [/\bI[’']ll\b/g, 'I will'], [/\bI[’']m\b/g, 'I am'], [/\bI[’']ve\b/g, 'I have'], [/\bI[’']d\b/g, 'I would'], [/\bdon[’']t\b/g, 'do not'],
  [/\bdidn[’']t\b/g, 'did not'], [/\bwon[’']t\b/g, 'will not'], [/\bcan[’']t\b/g, 'cannot'], [/\byou[’']re\b/g, 'you are'], [/\bit[’']s\b/g, 'it is'],
  [/\bthat[’']s\b/g, 'that is'], [/!/g, '.'],
];
/** More formal (DESIGN §12): no contractions, no exclamation marks. */
const formalise = (text: string): string => FORMAL.reduce((t, [pattern, full]) => t.replace(pattern, full), text);

export function render(lines: Lines, leadName: string, sender: Sender, style: Style): string {
  const closing = style.formal ? 'Kind regards,' : style.casual ? 'Cheers,' : undefined;
  const written = lines.paragraphs.map((p) => p.map(upperFirst).join(' ')).join('\n\n');
  const text = style.formal ? formalise(written) : written;
  return `${greetingOf(leadName, style)}\n\n${text}\n\n${signOff(sender, closing === undefined ? {} : { closing })}`;
}

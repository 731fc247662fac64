// The brief of a follow-up e-mail, as the model writer is given it (DESIGN §12), the same the offline writer works
// from: the call's facts with the transcript lines they came from, the rep's commitments with their dates, the agreed
// next step as the call to action, the limits the draft is checked against (draft-checks.ts), and the reviewer's
// feedback as explicit instructions. Everything here reads a transcript or feedback once, by bounded patterns.
import { COPIED_RUN_WORDS, feedbackWordLimit, wordLimitOf } from '../draft-checks.ts';
import type { RunContext } from '../engine.ts';
import type { AnalysisOutput, KeyFacts, StrategyOutput } from '../../schemas/outputs.ts';
import { readTranscript } from '../transcript/index.ts';

/** The length of a gracious "not now" note. */
export const NOT_NOW_WORDS = 80;
/** Feedback is a reviewer's few sentences: a longer one is read only this far for instructions. */
const FEEDBACK_READ_MAX = 2000;

// ===============================================================================================================
// Where a quote was said

/** Words in lower case without punctuation or fillers, so that a quote cleaned of "um"s is found in its line. */
function plain(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'").replace(/\b(?:um+|uh+|erm|you know|like)\b/g, ' ')
    .replace(/[^\p{L}\p{N}']+/gu, ' ').trim();
}

/** Finds the transcript line a quote of it came from, by the first or last words of the quote. */
export interface LineFinder {
  lineOf(quote: string): number | null;
}

/**
 * How many quotes are looked up in one brief. A model's ANALYSIS may list any number of quotes: each look-up is one
 * search of the transcript, so their number is bounded, not the answer's.
 */
const LOOKUPS_MAX = 48;

/** Reads the transcript once, through the shared reader (src/agent/transcript/); each look-up is one search of it. */
export function lineFinder(transcript: string): LineFinder {
  const turns = readTranscript(transcript, { leadName: '', senderName: null, leadCompany: null }).utterances;
  const starts: number[] = [];
  let text = '';
  for (const turn of turns) {
    starts.push(text.length);
    text += `${plain(turn.text)}\n`;
  }
  const at = (offset: number): number => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return turns[low]!.line;
  };
  return {
    lineOf(quote) {
      if (turns.length === 0) return null;
      const words = plain(quote.slice(0, 600)).split(' ').filter(Boolean);
      if (words.length < 3) return null;
      for (const needle of [words.slice(0, 6).join(' '), words.slice(-6).join(' ')]) {
        const offset = text.indexOf(needle);
        if (offset >= 0) return at(offset);
      }
      return null;
    },
  };
}

/** ANALYSIS's quotes in the order the brief shows them, the first LOOKUPS_MAX of them: those whose line is looked up. */
export function quotesOf(analysis: AnalysisOutput): string[] {
  const facts = analysis.facts;
  return [
    ...analysis.painPoints, ...analysis.objections, ...analysis.buyingSignals,
    ...(facts ? [...facts.figures.map((f) => f.about), ...facts.budgetAndTiming] : []),
  ].slice(0, LOOKUPS_MAX);
}

/**
 * Where each quote was said: the line of every quote found in the transcript. It reads a stranger's transcript, so it
 * runs in the CPU pool (task `quoteLines`, src/cpu/tasks.ts) with its time budget, never on the event loop.
 */
export function quoteLines({ transcript, quotes }: { transcript: string; quotes: string[] }): Map<string, number> {
  const finder = lineFinder(transcript);
  const lines = new Map<string, number>();
  for (const quote of quotes.slice(0, LOOKUPS_MAX)) {
    if (lines.has(quote)) continue;
    const line = finder.lineOf(quote);
    if (line !== null) lines.set(quote, line);
  }
  return lines;
}

// ===============================================================================================================
// The call

function list(title: string, items: string[]): string {
  return items.length === 0 ? `${title}: (none)` : `${title}:\n${items.map((item) => `- ${item}`).join('\n')}`;
}

const sideOf = (side: 'rep' | 'prospect') => (side === 'rep' ? 'our side' : 'the prospect’s side');

/** What the buyer said, each quote with the transcript line it came from when it was found there (quoteLines). */
export function callFactsBlock(analysis: AnalysisOutput, lines: ReadonlyMap<string, number>): string {
  const quoted = (text: string) => {
    const line = lines.get(text);
    return line === undefined ? text : `${text} (line ${line})`;
  };
  const facts: KeyFacts | undefined = analysis.facts;
  return [
    list('Pain points (the prospect’s words)', analysis.painPoints.map(quoted)),
    list('Objections', analysis.objections.map(quoted)),
    list('Buying signals', analysis.buyingSignals.map(quoted)),
    `Sentiment: ${analysis.sentiment}`,
    ...(facts
      ? [
          'Facts of the call:',
          list(
            'Figures (with the sentence that says what they measure)',
            facts.figures.map((f) => `${f.value}: “${quoted(f.about)}”`),
          ),
          list('Dates and deadlines', facts.dates),
          list('People', facts.people.map((p) => `${p.name}${p.role ? `, ${p.role}` : ''} (${sideOf(p.side)})`)),
          list('Tools and systems in use', facts.tools),
          list('Budget and timing', facts.budgetAndTiming.map(quoted)),
        ]
      : []),
  ].join('\n');
}

const WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
const MONTH = 'january|february|march|april|may|june|july|august|september|october|november|december';
/** When a promise is due: "by Friday", "tomorrow", "by the end of the week", "on March 12", "next week". */
const WHEN = new RegExp(
  String.raw`\b(?:(?:by|before|on|until|this|next|early next|later this)\s+)?(?:the\s+)?` +
    String.raw`(?:${WEEKDAY}|today|tonight|tomorrow|end of (?:the\s+)?(?:day|week|month|quarter)|eod|eow` +
    String.raw`|(?:week|month|quarter)\b|(?:${MONTH})(?:\s+\d{1,2}(?:st|nd|rd|th)?)?` +
    String.raw`|\d{1,2}(?:st|nd|rd|th)?\s+(?:${MONTH}))\b`,
  'i',
);

/** When a commitment is due, as it was said, or null when no date was said. */
export function dueOf(commitment: string): string | null {
  return WHEN.exec(commitment.slice(0, 600))?.[0] ?? null;
}

/** The rep's promises, each with its date: every one must be in the e-mail. */
export function commitmentsBlock(analysis: AnalysisOutput): string {
  const commitments = analysis.facts?.commitments ?? [];
  if (commitments.length === 0) return 'What the salesperson promised on the call: (nothing)';
  return [
    'What the salesperson promised on the call (put each in the e-mail as a commitment, with its date):',
    ...commitments.map((c) => {
      const due = dueOf(c);
      return `- ${c} (${due ? `when: ${due}` : 'no date was said: give none'})`;
    }),
  ].join('\n');
}

/** The agreed next step, the e-mail's call to action; with none agreed, the one STRATEGY proposes. */
export function nextStepBlock(analysis: AnalysisOutput, strategy: StrategyOutput): string {
  if (analysis.nextSteps.length === 0) {
    return `No next step was agreed on the call: end by proposing one that fits it, such as: ${strategy.callToAction}`;
  }
  return list(
    'The next steps agreed on the call (end with the first as the call to action: who does what, by when)',
    analysis.nextSteps,
  );
}

/** What a buyer says when the answer is "not now": later, next year, on hold, no budget until. */
const NOT_NOW = new RegExp(
  String.raw`\b(?:not (?:right )?now|not the right time|not a priority (?:right now|this (?:year|quarter))` +
    String.raw`|(?:revisit|circle back|check back|reconnect|come back to (?:this|it)|talk again|pick (?:this|it) up) ` +
    String.raw`(?:in|next|after|later)|next (?:year|financial year|fiscal year)|on hold|no budget (?:this|until|for)` +
    String.raw`|not interested|timing (?:isn't|is not|isn’t) right|maybe later` +
    String.raw`|not (?:looking|buying) (?:right now|this year))\b`,
  'i',
);

/** Whether the buyer's answer on the call was "not now". */
export function saidNotNow(analysis: AnalysisOutput): boolean {
  if (analysis.sentiment === 'positive') return false;
  const said = [
    ...analysis.objections, ...analysis.painPoints, ...analysis.nextSteps, ...(analysis.facts?.budgetAndTiming ?? []),
  ];
  return said.some((text) => NOT_NOW.test(text.slice(0, 600)));
}

// ===============================================================================================================
// The limits and the feedback

/** The limits the draft is checked against, as the model is told them. */
export function limitsBlock(ctx: RunContext & { analysis: AnalysisOutput }): string {
  const notNow = saidNotNow(ctx.analysis);
  const words = notNow ? Math.min(NOT_NOW_WORDS, wordLimitOf(ctx)) : wordLimitOf(ctx);
  return [
    'Limits (the draft is checked against each; one that breaks any is sent back):',
    `- The body is at most ${words} words, not counting the greeting line and the sign-off.`,
    '- No speaker labels ("Ada:"), timestamps, transcript markup such as [inaudible], or fillers (um, uh).',
    `- No run of ${COPIED_RUN_WORDS} or more words copied from the transcript, even with the pronouns changed: `
      + 'say it in your own words.',
    '- No bullet list that repeats the call back.',
    '- Every promise above is in the e-mail with its date, and the agreed next step is its call to action.',
    notNow
      ? `- The prospect said not now: write a short, gracious note (at most ${NOT_NOW_WORDS} words) that thanks them, `
        + 'leaves the door open and asks for nothing they declined.'
      : null,
  ].filter((line): line is string => line !== null).join('\n');
}

const SHORTER =
  /\b(?:shorter|too long|more concise|concise|cut it down|trim it|briefer|brief|tighten|less wordy|wordy)\b/i;
const LONGER = /\b(?:longer|more detail|too short|expand|elaborate)\b/i;
const FORMAL = /\b(?:more formal|less casual|formal|professional)\b/i;
const CASUAL = /\b(?:more casual|less formal|casual|friendlier|more relaxed|warmer|less stiff)\b/i;
const ANGLE = /\b(?:another|different|new|fresh|other) (?:angle|approach|take|focus)\b/i;
const MENTION = /\b(?:mention|include|talk about|bring up|reference|highlight)\s+([^.,;:!?\n]{2,80})/i;
const DROP = new RegExp(
  String.raw`\b(?:drop|remove|don['’]t mention|do not mention|leave out|no mention of|skip|don['’]t talk about)` +
    String.raw`\s+([^.,;:!?\n]{2,80})`,
  'i',
);
const LEAD = /\b(?:lead|open|start|begin) with\s+([^.,;:!?\n]{2,80})/i;

/** "the pilot and drop the pricing talk" → "the pilot": what one instruction names ends where the next begins. */
const NEXT_INSTRUCTION =
  /\s+(?:and|but|then|also)\s+(?=(?:drop|remove|mention|make|keep|leave|lead|open|start|add|don|do not|skip|include)\b)/i;

function clause(found: string | undefined): string | undefined {
  return found?.split(NEXT_INSTRUCTION)[0]?.trim() || undefined;
}

/**
 * The reviewer's feedback as explicit instructions: a word limit, shorter or longer, more formal or more casual,
 * mention, drop or lead with something, another angle. What it asks that no rule reads stays in the feedback itself.
 */
export function feedbackInstructions(feedback: string): string[] {
  const text = feedback.slice(0, FEEDBACK_READ_MAX);
  const instructions: string[] = [];
  const limit = feedbackWordLimit(text);
  if (limit !== null) {
    instructions.push(
      `Keep the body to at most ${limit} words (greeting and sign-off not counted), with every commitment and the next `
        + 'step still in.',
    );
  } else if (SHORTER.test(text)) {
    instructions.push(
      'Make it clearly shorter than the latest version (about two-thirds of it), with every commitment and the next '
        + 'step still in.',
    );
  } else if (LONGER.test(text)) {
    instructions.push('Add detail from the call, within the word limit.');
  }
  if (CASUAL.test(text)) instructions.push('More casual: a friendly greeting, contractions and short sentences.');
  else if (FORMAL.test(text)) {
    instructions.push('More formal: no contractions, no “Hi” (greet with “Dear …”), and no exclamation marks.');
  }
  const lead = clause(LEAD.exec(text)?.[1]);
  if (lead) instructions.push(`Open the e-mail with ${lead}.`);
  const drop = clause(DROP.exec(text)?.[1]);
  if (drop) instructions.push(`Leave out ${drop} entirely.`);
  const mention = clause(MENTION.exec(text)?.[1]);
  if (mention && mention !== drop) {
    instructions.push(`Mention ${mention}, as far as the call or the research backs it.`);
  }
  if (ANGLE.test(text)) instructions.push('Build it around a different angle from the latest version’s.');
  return instructions;
}

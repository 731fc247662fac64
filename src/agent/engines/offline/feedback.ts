// A reviewer's feedback read into a style the writer follows, and what the latest version (a person's edit
// included) says the new one keeps: its register, and its length when it was already short.
import type { PreviousDraft } from '../../engine.ts';

export interface Style {
  formal: boolean;
  casual: boolean;
  /** The most body words (greeting and signature not counted), from "under 90 words", "shorter" or the latest version. */
  wordLimit: number | null;
  mentions: string[];
  omissions: string[];
  /** "Lead with the deadline": what the first sentence after the greeting is about. */
  lead: string | null;
  /** Which wording: 0 for a first draft; another angle or empty feedback takes the next. */
  variant: number;
}

/** Feedback is a reviewer's note; past this much it is read no further. */
const FEEDBACK_READ_MAX = 2000;
const WORD_LIMIT =
  /\b(under|below|fewer than|less than|at most|max(?:imum)?(?: of)?|no more than|not more than|within|up to)\s+(\d{1,4})\s+words\b|\b(\d{1,4})\s+words?\s*(?:max(?:imum)?|or (?:less|fewer)|at most|tops)?\b/i;

/** Words in a body as the limit counts them: the greeting line and everything from the signature on left out. */
export function bodyWords(body: string): number {
  const lines = body.split('\n');
  const sig = lines.findIndex((l) => l === '-- ');
  const main = (sig >= 0 ? lines.slice(0, sig) : lines).slice(/^\s*(hi|hey|hello|dear|good)\b/i.test(lines[0] ?? '') ? 1 : 0);
  return wordCount(main.join('\n'));
}

/** Words as a reader counts them: runs between spaces with a letter or digit in them. */
export function wordCount(text: string): number {
  let count = 0;
  for (const token of text.split(/\s+/)) if (/[\p{L}\p{N}]/u.test(token)) count++;
  return count;
}

/**
 * The grounding guard's note (src/agent/grounding.ts, groundingFeedback) names claims, not a reviewer's wishes: only the
 * reviewer's feedback quoted at its end is read as a request.
 */
function reviewerPart(feedback: string): string {
  if (!/^The previous draft made claims\b/.test(feedback)) return feedback;
  const at = feedback.indexOf('still applies:');
  return at >= 0 ? feedback.slice(at + 'still applies:'.length).trim() : '';
}

export function readFeedback(feedback: string | null | undefined, previous: PreviousDraft | null | undefined): Style {
  const text = reviewerPart((feedback ?? '').trim().slice(0, FEEDBACK_READ_MAX));
  const firstLine = previous?.body.split('\n')[0] ?? '';
  const style: Style = {
    formal: /^(dear|good (morning|afternoon))\b/i.test(firstLine),
    casual: /^hey\b/i.test(firstLine),
    wordLimit: null,
    mentions: [],
    omissions: [],
    lead: null,
    variant: 0,
  };
  const before = previous ? bodyWords(previous.body) : null;
  if (!text) {
    if (previous) style.variant = (previous.version % 3) || 1;
    if (before !== null) style.wordLimit = Math.max(before + 10, 60);
    return style;
  }
  if (/\b(formal|professional|polite|less casual)\b/i.test(text) && !/\b(less|not so|too) formal\b/i.test(text)) [style.formal, style.casual] = [true, false];
  if (/\b(casual|informal|friendl\w*|warmer|relaxed|less formal|too formal|not so formal|chatty)\b/i.test(text)) [style.casual, style.formal] = [true, false];
  const limit = WORD_LIMIT.exec(text);
  let asked = false;
  if (limit && (limit[2] || /\bwords?\b/.test(text))) {
    const n = Number(limit[2] ?? limit[3]);
    const under = limit[1] !== undefined && /^(under|below|fewer|less)/i.test(limit[1]);
    style.wordLimit = Math.max(20, under ? n - 1 : n);
    asked = true;
  } else if (/\b(short\w*|brief\w*|concise|too long|cut it down|trim|tighter|fewer words)\b/i.test(text)) {
    style.wordLimit = before !== null ? Math.floor(before * 0.8) : 80;
    asked = true;
  } else if (before !== null && !/\b(longer|more detail|expand|elaborate)\b/i.test(text)) {
    // The latest version's length is kept: "more formal" after "under 90 words" stays under 90.
    style.wordLimit = before + 5;
  }
  if (/\b(?:another|different|new|other|fresh)\s+(?:angle|approach|take|hook|direction)\b|\bchange the (?:angle|approach)\b/i.test(text)) style.variant = 2;
  const lead = /\b(?:(?:lead|open|start|begin)\s+(?:with|on|by)|focus(?:\s+more)?\s+on)\s+([^.;!?\n]{1,80})/i.exec(text);
  if (lead) style.lead = lead[1]!.trim();
  for (const m of text.matchAll(/\b(?:don'?t|do not|never|no need to|stop) (?:mention|bring up|talk about|include|reference)\s+([^.;!?\n]+)|\b(?:remove|drop|leave out|take out|cut|without|skip|lose)\s+(?:the\s+)?(?:mention of\s+|part about\s+|bit about\s+|line about\s+)?([^.;!?\n]+)/gi)) {
    const what = (m[1] ?? m[2] ?? '').trim();
    if (what && !/^(it|that|this|words?|\d)/i.test(what)) style.omissions.push(what.slice(0, 200));
  }
  for (const m of text.matchAll(/\b(?:mention|include|add|reference|talk about|bring up|say something about|highlight|cover)\s+(?:that\s+)?([^.;!?\n]+)/gi)) {
    const before12 = text.slice(Math.max(0, m.index - 12), m.index).toLowerCase();
    if (/(don'?t|do not|never|no need to|stop) $/.test(before12)) continue;
    const what = m[1]!.trim().replace(/\s+(too|as well|please)$/i, '');
    if (what && !/^(more|less|some|a bit|details?|it|that|this)\b/i.test(what)) style.mentions.push(what.slice(0, 200));
  }
  const understood = style.formal || style.casual || asked || style.lead || style.variant || style.mentions.length || style.omissions.length;
  if (!understood) style.variant = previous ? (previous.version % 3) || 1 : 1;
  return style;
}

const STOP_WORDS = new Set(['the', 'our', 'your', 'their', 'and', 'about', 'that', 'this', 'with', 'for', 'from', 'into', 'more', 'please', 'also', 'too', 'them', 'its', 'any', 'question', 'part', 'bit', 'thing']);

/** The words of a reviewer's request a sentence must contain to be about it. */
export function keywords(request: string): string[] {
  return [...new Set(request.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3 && !STOP_WORDS.has(w)))].slice(0, 6);
}

/** Terms that stand for a topic the reviewer named: "the pricing" is every price, figure and quote. */
export function omissionTerms(omission: string): RegExp[] {
  const terms = keywords(omission).map((k) => new RegExp(String.raw`\b${k.replace(/s$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i'));
  if (/\b(price|pricing|cost|costs|money|numbers|figures|quote)\b/i.test(omission)) terms.push(/\bpric|\bcost|\bquote|[$€£]\s?\d|\d\s?(?:k\b|euros|dollars|pounds)/i);
  return terms;
}

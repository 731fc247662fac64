// The grounding guard of the WRITER step, the same for every engine (DESIGN §3, §12): every specific claim a draft
// makes (a number, an amount, a year, a proper noun or a product name) must come from what the run already knows,
// and so must every qualitative claim about the buyer or what was said ("I know the timing is tight", claims.ts).
// A draft that claims more is written once more with feedback naming the claims; if it still does, it is kept and
// flagged for the salesperson who reviews it.
import { StepAttemptError, type Engine, type RunContext, type TokenUsage } from './engine.ts';
import { claimBacking, claimsIn, claimSupported, CLAIMS_CHECKED_MAX, type ClaimBacking, type ClaimKind } from './claims.ts';
import { trimEndOf } from './text.ts';
import { toOneLine } from '../domain/validation.ts';
import { BODY_MAX, SUBJECT_MAX } from '../schemas/runs.ts';

export interface Draft {
  subject: string;
  body: string;
}

export interface GroundingReport {
  grounded: boolean;
  /**
   * One entry per sentence with unsupported terms, `“300” in “Your 300-person team …”`, and one per unsupported
   * qualitative claim, `“I know the timing is tight.”: a claim about the buyer that nothing they said backs`.
   */
  unsupported: string[];
}

export type WriteContext = Parameters<Engine['write']>[0];

// ===============================================================================================================
// What the run knows

interface Sources {
  words: Set<string>;
  numbers: Set<string>;
  /** The words in order, sorted when a prefix is first looked up. */
  sorted?: string[];
}

/** Everything a claim may come from: RESEARCH, ANALYSIS, STRATEGY, the call, the lead, the sender, the reviewer. */
function collectSources(ctx: RunContext): Sources {
  const { research, analysis, strategy } = ctx;
  const texts: Array<string | null | undefined> = [
    ctx.lead.name, ctx.lead.email, ctx.lead.companyName, ctx.lead.companyWebsite, ctx.senderName, ctx.sender?.name, ctx.sender?.signature,
    ctx.call.title, ctx.call.transcript, ...dateForms(ctx.call.occurredAt),
    // The reviewer is the salesperson: what they ask the draft to mention is theirs to claim.
    ctx.feedback,
    research?.website.url, research?.website.title, research?.website.description, research?.website.summary,
    ...(research?.facts.flatMap((fact) => [fact.text, fact.source]) ?? []), ...(research?.sources ?? []),
    ...(analysis ? [...analysis.painPoints, ...analysis.objections, ...analysis.buyingSignals, ...analysis.nextSteps] : []),
    ...(strategy ? [strategy.angle, ...strategy.valuePropositions, strategy.callToAction, strategy.tone] : []),
  ];
  const text = normalise(texts.filter((t): t is string => typeof t === 'string').join('\n'));
  const words = new Set<string>();
  for (const token of text.match(WORD) ?? []) {
    const key = wordKey(token);
    words.add(key);
    for (const part of key.split(/[-.&']/)) if (part) words.add(part);
  }
  const numbers = new Set<string>();
  for (const match of text.matchAll(NUMBER)) for (const form of knownForms(match)) numbers.add(form);
  // "six hours" said grounds "6 hours" written: a draft may put a spelled-out number in digits.
  for (const word of words) if (SPELLED[word]) numbers.add(SPELLED[word]);
  return { words, numbers };
}

// Built once: toLocaleDateString with options builds a formatter at every call.
const BRITISH_DATE = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const AMERICAN_DATE = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'long', day: 'numeric', year: 'numeric' });

/** The call's date as a draft may write it: "3 March", "March 3, 2025", "2025-03-03". */
function dateForms(date: Date | null): string[] {
  if (!date || Number.isNaN(date.getTime())) return [];
  return [date.toISOString().slice(0, 10), BRITISH_DATE.format(date), AMERICAN_DATE.format(date)];
}

// ===============================================================================================================
// What the draft claims

/** A word, with inner apostrophes, hyphens, dots and ampersands: "Kestrel's", "300-person", "AT&T", "Node.js". */
const WORD = /[\p{L}\p{N}]+(?:['.&-][\p{L}\p{N}]+)*/gu;
/** A number with its currency, scale and unit: "$4,000", "€30 million", "15%", "2023", "3.5k", "40 euros". */
const NUMBER =
  /([$€£¥])?\s?(?<![\p{L}\p{N}.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:\s?(k|m|bn|thousand|million|billion)(?![\p{L}]))?(?:\s?(%|percent|per cent|dollars?|usd|euros?|eur|pounds?|gbp)(?![\p{L}]))?/giu;
/** About the meeting, not the company: "15 minutes", "a 30-minute call", "10am", "14:30". */
const NOT_A_CLAIM = [
  /(?<![\p{L}\p{N}])\d+\s?-?\s?(?:minutes?|mins?)(?![\p{L}])/giu,
  /(?<![\p{L}\p{N}])\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?![\p{L}])/giu,
  /(?<![\p{L}\p{N}])\d{1,2}:\d{2}(?![\p{N}])/gu,
  /\bhttps?:\/\/\S+/gi,
  // From the start of a run of address characters only: from each of them, a run with no @ would be read again.
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu,
];

/** Numbers as a call spells them, to their digits. */
const SPELLED: Record<string, string> = {
  two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10', eleven: '11', twelve: '12',
  thirteen: '13', fourteen: '14', fifteen: '15', sixteen: '16', seventeen: '17', eighteen: '18', nineteen: '19', twenty: '20',
  thirty: '30', forty: '40', fifty: '50', sixty: '60', seventy: '70', eighty: '80', ninety: '90', hundred: '100',
};

const SCALE: Record<string, number> = { k: 1e3, thousand: 1e3, m: 1e6, million: 1e6, bn: 1e9, billion: 1e9 };

const UNIT: Record<string, string> = {
  '%': '%', percent: '%', 'per cent': '%', dollar: '$', dollars: '$', usd: '$', euro: '€', euros: '€', eur: '€', pound: '£', pounds: '£', gbp: '£',
};

interface Quantity {
  /** The value at scale: "$4k" → "4000". */
  value: string;
  /** "$", "€", "£", "¥", "%" or "". */
  unit: string;
  /** The number as written, before its scale: "$4k" → "4". */
  written: string;
}

function quantityOf(match: RegExpMatchArray): Quantity {
  const whole = match[2]!.replace(/,/g, '').replace(/^0+(?=\d)/, '');
  const fraction = trimEndOf(match[3] ?? '', /0/);
  const written = fraction ? `${whole}.${fraction}` : whole;
  const scale = match[4] ? SCALE[match[4].toLowerCase()] : undefined;
  const value = scale ? String(Math.round(Number(written) * scale)) : written;
  return { value, unit: match[1] ?? UNIT[(match[5] ?? '').toLowerCase()] ?? '', written };
}

/** What the run knows a number as: its value, with and without its unit, and as written. */
function knownForms(match: RegExpMatchArray): string[] {
  const q = quantityOf(match);
  return [q.value, q.written, ...(q.unit ? [`${q.unit}${q.value}`] : [])];
}

/** The form a draft's number must be known by: "$2 million" needs $2000000, not a bare 2. */
function claimForm(match: RegExpMatchArray): string {
  const q = quantityOf(match);
  return `${q.unit}${q.value}`;
}

/**
 * Capitalised words that name nothing about the company: the pronoun I, days and months, greetings and closings,
 * titles, function words of a Title Case subject, and generic business acronyms.
 */
const COMMON = new Set([
  'i', "i'm", "i'll", "i've", "i'd",
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'mon', 'tue', 'tues', 'wed', 'thu', 'thurs', 'fri', 'sat', 'sun',
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
  'hi', 'hello', 'hey', 'dear', 'best', 'regards', 'kind', 'warm', 'warmly', 'cheers', 'thanks', 'thank', 'sincerely', 'yours', 'ps', 'p.s',
  'sir', 'madam', 'mr', 'mrs', 'ms', 'mx', 'dr', 'prof',
  'a', 'an', 'the', 'and', 'or', 'but', 'for', 'with', 'about', 'on', 'in', 'at', 'to', 'from', 'of', 'by', 'as', 'vs', 're', 'fw', 'fwd',
  'your', 'our', 'my', 'their', 'we', 'you', 'they', 'it', 'this', 'that', 'next', 'quick', 'follow', 'following', 'up', 'ok', 'okay', 'yes', 'no',
  'ai', 'api', 'apis', 'crm', 'erp', 'roi', 'kpi', 'kpis', 'faq', 'pdf', 'saas', 'b2b', 'b2c', 'ceo', 'cfo', 'cto', 'coo', 'cmo', 'cio', 'cro',
  'vp', 'hr', 'it', 'eta', 'asap', 'fyi', 'q&a', 'utc', 'gmt',
]);

function normalise(text: string): string {
  return text.normalize('NFC').replace(/[’‘`´]/g, "'").replace(/[\u00a0\u202f\u2009]/g, ' ');
}

function wordKey(token: string): string {
  return token.toLowerCase().replace(/'s$/, '');
}

function known(word: string, sources: Sources): boolean {
  const w = wordKey(word);
  if (sources.words.has(w)) return true;
  // Plural and singular: "Leeds team" / "the teams in Leeds", "Salesforce" / "Salesforce's".
  return sources.words.has(`${w}s`) || sources.words.has(`${w}es`) || (w.endsWith('s') && sources.words.has(w.slice(0, -1)));
}

/** Whether a known word begins with `word`: the first known word not before it in order does, if any does. */
function knownPrefix(word: string, sources: Sources): boolean {
  const w = wordKey(word);
  const sorted = (sources.sorted ??= [...sources.words].sort());
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < w) low = middle + 1;
    else high = middle;
  }
  return low < sorted.length && sorted[low]!.startsWith(w);
}

/** "HubSpot", "SOC", "Q3": capitals beyond the first letter, or digits, mark a name even at a sentence start. */
function distinctive(word: string): boolean {
  return /^.+\p{Lu}/u.test(word) || /\p{N}/u.test(word);
}

interface Sentence {
  text: string;
  /** Most of its words capitalised, as in a subject line: only distinctive words are read as names. */
  titleCase: boolean;
}

function sentencesOf(draft: Draft): Sentence[] {
  const segments = [draft.subject, ...draft.body.split(/\n+/)].map((s) => normalise(s).replace(/^\s*(?:[-*•]|\d{1,2}[.)])\s+/, '').trim());
  const sentences: Sentence[] = [];
  for (const segment of segments.filter(Boolean)) {
    const words = segment.match(WORD) ?? [];
    const longer = words.filter((w) => w.length >= 4 && !COMMON.has(w.toLowerCase()));
    const titleCase = longer.length >= 3 && longer.every((w) => /^\p{Lu}/u.test(w));
    for (const text of segment.split(/(?<=[.!?…]["')\]]?)\s+/)) if (text.trim()) sentences.push({ text: text.trim(), titleCase });
  }
  return sentences;
}

/** The terms of one sentence that nothing the run knows supports, as written in the draft. */
function unsupportedTerms(sentence: Sentence, sources: Sources): string[] {
  let text = sentence.text;
  for (const pattern of NOT_A_CLAIM) text = text.replace(pattern, ' ');
  const terms: string[] = [];

  for (const match of text.matchAll(NUMBER)) {
    if (!sources.numbers.has(claimForm(match))) terms.push(match[0].trim());
  }

  // A sentence starts at its first word and again after an opening quote.
  const starts = new Set<number>();
  const first = /[\p{L}\p{N}]/u.exec(text);
  if (first) starts.add(first.index);
  for (const quote of text.matchAll(/["“(]\s*(?=[\p{L}\p{N}])/gu)) starts.add(quote.index + quote[0].length);

  for (const match of text.matchAll(WORD)) {
    const token = match[0];
    if (!/\p{Lu}/u.test(token) || /^\p{N}/u.test(token)) continue;
    const atStart = starts.has(match.index);
    for (const part of token.split('-')) {
      if (part.length < 2 || !/\p{Lu}/u.test(part) || COMMON.has(wordKey(part))) continue;
      if ((atStart || sentence.titleCase) && !distinctive(part)) continue;
      // A name cut short with an ellipsis ("Handelsgesellsch…") is known when a known word begins with it.
      const cut = text[match.index + token.length] === '…' && part === token.split('-').at(-1);
      if (!known(part, sources) && !(cut && knownPrefix(part, sources))) terms.push(part.replace(/'s$/, ''));
    }
  }
  return [...new Set(terms)];
}

/**
 * Checks a draft against what the run knows. Unsupported are numbers, amounts, years and proper or product names
 * (a capitalised word not at a sentence start) that appear nowhere in RESEARCH, ANALYSIS, STRATEGY, the call, the
 * lead, the sender's name or the reviewer's feedback.
 */
export function checkGrounding(draft: Draft, ctx: RunContext): GroundingReport {
  const sources = collectSources(ctx);
  const unsupported = new Set<string>();
  // Built when the draft first makes a qualitative claim: most sentences make none.
  let backing: ClaimBacking | undefined;
  let claims = 0;
  for (const sentence of sentencesOf(draft)) {
    const quoted = sentence.text.length > 200 ? `${sentence.text.slice(0, 199)}…` : sentence.text;
    const terms = unsupportedTerms(sentence, sources);
    // A sentence already flagged for its terms is written again anyway: one entry says so.
    if (terms.length > 0) {
      unsupported.add(`${terms.map((t) => `“${t}”`).join(', ')} in “${quoted}”`);
      continue;
    }
    if (claims >= CLAIMS_CHECKED_MAX) continue;
    for (const claim of claimsIn(sentence.text)) {
      claims++;
      backing ??= claimBacking(ctx);
      if (claimSupported(claim.content, claim.kind, backing)) continue;
      unsupported.add(`“${quoted}”: ${CLAIM_WITHOUT_BACKING[claim.kind]}`);
      break;
    }
  }
  return { grounded: unsupported.size === 0, unsupported: [...unsupported] };
}

const CLAIM_WITHOUT_BACKING: Record<ClaimKind, string> = {
  buyer: 'a claim about the buyer that nothing they said backs',
  said: 'a claim about what was said or agreed that the call does not back',
};

// ===============================================================================================================
// The draft's bounds

export { BODY_MAX, SUBJECT_MAX };
/** An overrun up to this much is trimmed; beyond it the answer is not what was asked for and the attempt fails. */
const SUBJECT_TRIM_UP_TO = 160;
const BODY_TRIM_UP_TO = 6000;
/** A model's answer can be any size: over twice those before its whitespace is tidied, it is refused unread. */
const SUBJECT_UNTIDIED_UP_TO = 2 * SUBJECT_TRIM_UP_TO;
const BODY_UNTIDIED_UP_TO = 2 * BODY_TRIM_UP_TO;

/**
 * Fits a draft into the WRITER schema's bounds (subject ≤ 80, body ≤ 5,000): whitespace tidied, a small overrun
 * trimmed at a word or paragraph. An empty or far too long answer fails the attempt (retryable, tokens counted).
 */
export function fitDraft(draft: Draft, usage: TokenUsage | null): Draft {
  const untidiedSubject = draft.subject ?? '';
  const untidiedBody = draft.body ?? '';
  refuseOverrun('subject', untidiedSubject.length, SUBJECT_UNTIDIED_UP_TO, SUBJECT_MAX, usage);
  refuseOverrun('body', untidiedBody.length, BODY_UNTIDIED_UP_TO, BODY_MAX, usage);
  // A subject goes into a header: what a person could not type there (a line break, an encoded word) is dropped.
  const subject = toOneLine(untidiedSubject);
  // Matched from the first of a run of spaces only: from each of them, `[ \t]+$` would read a run inside a line again.
  const body = untidiedBody.replace(/\r\n?/g, '\n').replace(/(?<![ \t])[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();
  if (!subject) throw new StepAttemptError('the WRITER answer has an empty subject', usage);
  if (!body) throw new StepAttemptError('the WRITER answer has an empty body', usage);
  refuseOverrun('subject', subject.length, SUBJECT_TRIM_UP_TO, SUBJECT_MAX, usage);
  refuseOverrun('body', body.length, BODY_TRIM_UP_TO, BODY_MAX, usage);
  return { subject: trimSubject(subject), body: trimBody(body) };
}

function refuseOverrun(part: 'subject' | 'body', length: number, upTo: number, max: number, usage: TokenUsage | null): void {
  if (length > upTo) throw new StepAttemptError(`the WRITER answer's ${part} is ${length} characters, far over the ${max} allowed`, usage);
}

function trimSubject(subject: string): string {
  if (subject.length <= SUBJECT_MAX) return subject;
  const head = subject.slice(0, SUBJECT_MAX - 1);
  const space = head.lastIndexOf(' ');
  return `${trimEndOf(space > SUBJECT_MAX / 2 ? head.slice(0, space) : head, /[\s,;:–—-]/)}…`;
}

function trimBody(body: string): string {
  if (body.length <= BODY_MAX) return body;
  const head = body.slice(0, BODY_MAX);
  const paragraph = head.lastIndexOf('\n\n');
  if (paragraph > BODY_MAX * 0.8) return head.slice(0, paragraph).trimEnd();
  const sentence = Math.max(head.lastIndexOf('. '), head.lastIndexOf('.\n'), head.lastIndexOf('? '), head.lastIndexOf('! '));
  if (sentence > BODY_MAX * 0.8) return head.slice(0, sentence + 1);
  return `${head.slice(0, head.lastIndexOf(' ', BODY_MAX - 2)).trimEnd()}…`;
}

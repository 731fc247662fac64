// The facts of a call a follow-up must carry, each with the transcript lines it came from: the rep's commitments
// (who, what, when), the agreed next step, the buyer's pains with their figures, deadlines, the people on the
// buyer's side, and whether the buyer said "not now". Every pattern reads one sentence of bounded length, and every
// list is capped, so the work stays linear in the transcript (DESIGN §10).
import nlp from 'compromise';
import { readTranscript, type SpeakerRole } from './transcript.ts';

export interface Sentence {
  text: string;
  line: number;
  role: SpeakerRole;
  speaker: string | null;
  /** The sentence's place among all, for order and for what was said next. */
  index: number;
}

export interface Commitment {
  who: 'rep' | 'buyer';
  /** The action as said, without its time: "send you our SOC 2 Type II report under NDA". */
  what: string;
  /** "by Friday", "today", "within a week"; null when no time was said. */
  when: string | null;
  /** The sentence it came from. */
  text: string;
  lines: number[];
}

export interface NextStep {
  /** What was agreed: "demo", "session", "call". */
  what: string;
  /** When: "Tuesday at 10", "9 June, 2pm". */
  when: string | null;
  /** Who else joins, from the buyer's side: ["Sam"]. */
  who: string[];
  text: string;
  lines: number[];
}

export interface Pain {
  text: string;
  /** The figure it carries ("six hours a week", "$240,000"), if any. */
  figure: string | null;
  score: number;
  lines: number[];
  /** Read from call notes, which tell of the buyer in the third person ("she is frustrated that…"). */
  note?: boolean;
}

export interface CallFacts {
  sentences: Sentence[];
  commitments: Commitment[];
  nextStep: NextStep | null;
  pains: Pain[];
  deadlines: Pain[];
  conditions: Sentence[];
  stakeholders: string[];
  notNow: boolean;
}

/** How much of a sentence is read: a sentence that never ends is read this far. */
const SENTENCE_MAX = 400;
/** Sentences read for facts: a call has a few hundred; a hostile transcript is read no further. */
const SENTENCES_MAX = 3000;
const MAX_EACH = 8;

export const MONTHS = 'January|February|March|April|May|June|July|August|September|October|November|December';
const MONTH_SHORT = 'Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec';
const DAYS = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';
const ORDINAL = String.raw`\d{1,2}(?:st|nd|rd|th)?`;
/** One part of a time: a day, a date, a clock time. Runs of them ("Thursday 12 June at 14:00") make a `when`. */
const TIME_PART = new RegExp(
  String.raw`\b(?:${DAYS})\b|\b(?:${MONTHS}|${MONTH_SHORT})\.?\s${ORDINAL}\b|\b${ORDINAL}\s(?:of\s)?(?:${MONTHS})\b|\bthe\s\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\bat\s\d{1,2}(?:\s?(?:am|pm)\b)?(?![:.,]?\d|\s?(?:percent|%|people|days|weeks))(?:\s(?:Eastern|ET|CET|GMT|BST|PT|Pacific|UK time))?|\bin\s(?:the\s(?:first|second|third|last)\sweek\sof\s)?(?:${MONTHS})\b|\bnext\s(?:week|${DAYS})\b`,
  'gi',
);
/** When a commitment is due, said at the end of it. */
const DUE =
  new RegExp(String.raw`\s*,?\s*\b((?:by|before|on|within|in|over|later|first thing|early|at|after)\s(?:(?:the\s)?end of (?:the\s)?(?:day|week|month)(?:\s(?:${DAYS}))?|(?:${DAYS})|tomorrow|next week|the weekend|(?:a|one|two|three|the) (?:couple of )?(?:working |business )?(?:days?|weeks?|hours?)|(?:the\s)?(?:first|second|third|last) week of (?:${MONTHS})|(?:${MONTHS})(?:\s${ORDINAL})?|${ORDINAL}(?:\s(?:${MONTHS}))?)|today|tonight|tomorrow|next (?:week|month)|this (?:week|afternoon|morning|evening)|(?:right )?after (?:the |this )?call|end of (?:the )?(?:day|week)(?:\s(?:${DAYS}))?)\b`, 'i');
const PROMISE = /\b(?:I['’]ll|I will|I['’]m going to|I am going to|let me)\s(?:also\s|then\s|just\s|personally\s)?/i;
/** Where a promise's action ends: "bring a gateway so Denise can see it" is a promise to bring a gateway. */
const ACTION_END = /\s(?:so that|so|which|because|since|once|then|and we|and you)\s|,\s(?:they|so|which|who|because)\s/i;
const ACTION_VERB =
  /^(?:send|share|put together|set up|introduce|bring|run|get|prepare|draft|book|schedule|call|follow up|loop|forward|write|e-?mail|pull|arrange|connect|invite|check|confirm|work out|walk|include|add|sort|pass|reach out|ping|come|go through|look into|find|dig|build|draw up|make|have|deliver|provide|organi[sz]e)\b/i;
const PAIN_CUES: Array<[RegExp, number]> = [
  [/\b(manual(ly)?|by hand|by e-?mail|by phone|copy(ing)?|re-?typ\w*|spreadsheets?|screenshots?|paperwork|phone and e-?mail)\b/gi, 2],
  [/\b(slow|forever|ages|hours?|days?|time|wast\w*|bottleneck|backlog|behind|delay\w*|late|overtime|downtime|unplanned)\b/gi, 1],
  [/\b(out of date|outdated|(?:a |basically a |just a )guess\w*|guesswork|evenings|weekends)\b/gi, 1.5],
  [/\b(struggl\w*|frustrat\w*|killing|kills|babysit\w*|exhaust\w*|tired of|fed up|overwhelm\w*|drowning|nightmare|painful|pain|headache|mess|chaos|stress\w*|stale|breaking|broke)\b/gi, 2],
  [/\b(problem|issue|can'?t|cannot|unable|no way to|missing|miss|lose|losing|lost|errors?|mistakes?|wrong|broken|zero|nothing|nobody|fail\w*|fines?|won['’]t sign|blocked|loss)\b/gi, 1],
  [/\b(costs?|costing|expensive|spend\w*|paying|dollars|euros|pounds|revenue)\b|[$€£]\s?\d/gi, 1],
  [/\b(rate|empty|no-shows?|churn|returns?|refunds?|chargebacks?|disputes?|zero|fixed fee|can't bill)\b/gi, 1],
  [/\d/g, 0.5],
];
const FIGURE = new RegExp(
  String.raw`(?:[$€£]\s?\d[\d,.]*(?:\s?(?:k|m|million|thousand))?(?:\s(?:a|per)\s(?:year|month|week))?|\b\d[\d,.]*\s?(?:%|percent|k\b|thousand|million|dollars|euros|pounds)(?:\s(?:dollars|euros|pounds))?(?:\s(?:a|per)\s(?:year|month|week))?|\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|hundred|fourteen|eighteen)\s(?:[a-z-]+\s)?(?:hours?|days?|weeks?|months?|minutes?|slots|returns|searches|spreadsheets|tickets|orders|calls|people|patients|NDAs|batches|sites|locations|presses|lines|reps|users|customers|claims|invoices|shipments|trucks|stores|clinics)(?:\s(?:a|per|every|each)\s(?:year|month|week|day|morning|batch))?)`,
  'gi',
);
export const DEADLINE = new RegExp(String.raw`\b(?:until|by|before|deadline|go[- ]live|live by|opening|launch\w*|starts?|start by|window)\b.{0,60}\b(?:${MONTHS}|${DAYS}|Q[1-4]|Black Friday)\b|\b(?:${MONTHS})\s\d{1,2}\b.{0,40}\b(?:at the latest|deadline|go[- ]live)`, 'i');
const NOT_NOW =
  /\b(not now|not right now|not a priority|zero bandwidth|no bandwidth|check back in|circle back in|reach out (?:again )?in|talk (?:again )?in (?:Q[1-4]|the new year|(?:${MONTHS}))|next (?:year|quarter) (?:problem|at the earliest)|a Q[1-4] problem|hiring freeze|budget (?:is )?frozen|don['’]t put me in a sequence)\b/i;
export const CONDITION = /\b(?:I need to see|I want to see|has to|have to like|if (?:it|anything|onboarding|the)|not on a slide|non-starter|won['’]t sign|not signing|show me|needs? to be on|need payback|we['’]re out|I['’]ll need that in writing|nothing goes)\b/i;

/** A title or an abbreviation whose full stop ends no sentence: "Mr. Smith", "e.g. Salesforce". */
const ABBREVIATION = String.raw`(?<!\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Jr|Sr|vs|etc|approx|e\.g|i\.e|No|Inc|Ltd|Co)\.)`;
const SENTENCE_BREAK = new RegExp(String.raw`(?<=[.!?])${ABBREVIATION}\s+(?=["'“(]?[A-Z0-9])`);

function splitSentences(text: string): string[] {
  return text.replace(/\s+/g, ' ').split(SENTENCE_BREAK).map((s) => s.trim()).filter(Boolean);
}

/** A sentence cut off by the speaker ("it cost us $4,000 a month --") without its dangling dash; bounded text only. */
const DANGLING = /(?:\s+[-–—]+)+$/;

/** The call in sentences, each with its line and side. */
export function sentencesOf(transcript: string, leadName: string, senderName: string | null, leadCompany: string | null): Sentence[] {
  const read = readTranscript(transcript, { leadName, senderName, leadCompany });
  const sentences: Sentence[] = [];
  const first = leadName.trim().split(/\s+/).find((w) => /^[\p{L}][\p{L}'’-]{1,30}$/u.test(w) && !/^(?:dr|mr|mrs|ms|mx|prof)$/i.test(w));
  const reporter = first ? new RegExp(String.raw`^(?:${first}|she|he|they)\s(?:said|says|mentioned|noted|explained|told (?:us|me))(?:\sthat)?\s(?=\S)`, 'i') : null;
  for (const u of read.utterances) {
    for (const text of splitSentences(u.text)) {
      if (sentences.length >= SENTENCES_MAX) return sentences;
      const cut = text.length > SENTENCE_MAX ? text.slice(0, text.lastIndexOf(' ', SENTENCE_MAX) > 0 ? text.lastIndexOf(' ', SENTENCE_MAX) : SENTENCE_MAX) : text;
      let whole = cut.replace(DANGLING, '');
      // Notes report what the buyer said: "Ada said their team loses…" is what their team loses.
      if (u.role === 'unknown' && reporter) whole = whole.replace(reporter, '').replace(/^./, (c) => c.toUpperCase());
      if (whole) sentences.push({ text: whole, line: u.line, role: u.role, speaker: u.speaker, index: sentences.length });
    }
  }
  return sentences;
}

/** "I'll send X by Friday, and I'll introduce you to Y": each promise, its action and its time apart. */
export function promisesIn(sentence: string): Array<{ what: string; when: string | null }> {
  const found: Array<{ what: string; when: string | null }> = [];
  let rest = sentence;
  for (let i = 0; i < 4; i++) {
    const head = PROMISE.exec(rest);
    if (!head) break;
    rest = rest.slice(head.index + head[0].length);
    const next = PROMISE.exec(rest);
    let action = next ? rest.slice(0, next.index) : rest;
    if (next) rest = rest.slice(next.index);
    const due = DUE.exec(action);
    const when = due ? due[1]!.replace(/[.!]$/, '') : null;
    if (due) action = `${action.slice(0, due.index)} ${action.slice(due.index + due[0].length)}`;
    action = action.replace(/,\s(?:they|which|who)\s[^,]{0,120},\s(?:and\s)?/i, ' and ');
    const end = ACTION_END.exec(action);
    if (end) action = action.slice(0, end.index);
    action = action.replace(/\s+/g, ' ').replace(/\s+([,.])/g, '$1').replace(/[.!?,;\s]+$/, '').replace(/\s(?:and|then|so|plus)$/i, '').replace(/[.!?,;\s]+$/, '').trim();
    const vague = /^\w+(?:\s(?:over|across|through))?\s(?:it|that|this|them|those|something|things?|everything|anything)\b/i.test(action);
    if (ACTION_VERB.test(action) && !vague && action.split(' ').length >= 2) found.push({ what: action, when });
    if (!next) break;
  }
  return found;
}

/** How long the call has: "you have about twenty minutes", "I've only got 15 minutes". */
const TIME_BUDGET = /\b(?:have|['’]ve|got)\s(?:got\s)?(?:about|around|only|just|maybe|roughly)?\s?(?:\d{1,3}|\w+)\s(?:minutes|mins)\b(?!\s(?:a|per|every|each)\s)/i;

function painScore(text: string): number {
  let score = 0;
  for (const [cue, weight] of PAIN_CUES) score += weight * Math.min(3, text.match(cue)?.length ?? 0);
  return score;
}

/** The figure that says most about a pain: money, then a share, then time, then a count. */
function figureIn(text: string): string | null {
  let best: string | null = null;
  let rank = 0;
  for (const match of text.matchAll(FIGURE)) {
    const f = match[0].trim();
    const r = /[$€£]|dollars|euros|pounds|thousand|million/i.test(f) ? 4 : /%|percent/i.test(f) ? 3 : /hours?|days?|weeks?|minutes?|months?/i.test(f) ? 3 : 1;
    if (r > rank) [best, rank] = [f, r];
  }
  return best;
}

/** The agreed meeting: the last stretch of the call where a time is proposed and taken up. */
function nextStepOf(sentences: Sentence[], buyerNames: string[]): NextStep | null {
  const MEETING = /\b(demo|call|session|kickoff|kick-off|meeting|visit|walk|come out|review|workshop|walkthrough|check-in|invite|go through|sit down|catch up|trial|twenty minutes|thirty minutes|\d+ minutes|an hour)\b/i;
  let best: { at: number; parts: number } | null = null;
  for (const s of sentences) {
    const parts = (s.text.match(TIME_PART) ?? []).filter((p) => !/^in\s/i.test(p)).length;
    if (parts === 0) continue;
    // The header of call notes ("Call notes, 12 May.") dates the call; it agrees nothing.
    if (/^(?:call|meeting)\s(?:notes|summary|with)\b/i.test(s.text)) continue;
    const near = sentences.slice(Math.max(0, s.index - 2), s.index + 1).map((n) => n.text).join(' ');
    if (!MEETING.test(near) && !/\bworks?\b|\?/.test(s.text)) continue;
    if (promisesIn(s.text).some((p) => p.when && s.text.includes(p.when)) && !/\?|works/.test(s.text)) continue;
    if (!best || s.index >= best.at) best = { at: s.index, parts };
  }
  if (!best) return acceptedProposal(sentences, buyerNames);
  const window = sentences.slice(Math.max(0, best.at - 3), best.at + 2);
  let when: string | null = null;
  let most = 0;
  for (const s of window) {
    const spans = [...s.text.matchAll(TIME_PART)];
    if (spans.length === 0) continue;
    // The run of time parts close together: "Thursday the 14th at 12:30".
    const start = spans[0]!.index;
    let end = start + spans[0]![0].length;
    let count = 1;
    for (const m of spans.slice(1)) {
      if (m.index - end > 6) break;
      end = m.index + m[0].length;
      count++;
    }
    if (count > most) [most, when] = [count, s.text.slice(start, end).replace(/^at\s/i, '').replace(/[,\s]+$/, '')];
  }
  const said = window.map((s) => s.text).join(' ');
  const what = /\bkick-?off\b/i.exec(said)?.[0] ?? /\bdemo\b/i.exec(said)?.[0] ??
    (/\b(?:come out|visit)\b/i.test(said) ? 'visit' : (/\b(session|workshop|review|meeting|walkthrough)\b/i.exec(said)?.[1] ?? 'call'));
  const who = buyerNames.filter((n) => new RegExp(String.raw`\b${n}\b`).test(said)).slice(0, 3);
  return { what: what.toLowerCase(), when, who, text: window.find((s) => s.index === best!.at)!.text, lines: [...new Set(window.map((s) => s.line))] };
}

/** A rep's proposal of a step ("How about a two-week pilot at the Rotterdam depot?", "I'd suggest a pilot"). */
const PROPOSAL = /\b(?:how about|what about|why don['’]t we|shall we|should we|could we|can we|would you be open to|I['’]d suggest|I suggest|I propose|let['’]s|we could|my suggestion is)\b/i;
/** The step it names, with what follows it: "two-week pilot at the Rotterdam depot". */
const STEP_NAMED =
  /\b((?:[\w-]+\s){0,2}?(?:pilot|trial|proof of concept|poc|workshop|demo|onboarding|rollout|roll-out))\b((?:\s(?:at|in|with|for|on)\s(?:the\s|our\s|your\s)?(?:[\w&-]+)(?:\s(?:depot|site|team|office|warehouse|branch|store|clinic|plant|region|line))?){0,1})/i;
/** The buyer agreeing to it: "Yes, let's do that", "That works", "Agreed". */
const AGREES = /^(?:yes|yeah|yep|sure|absolutely|definitely|of course|agreed|deal|(?:that |this )?sounds (?:good|great|fine)|that works|works for (?:me|us)|let['’]s do (?:it|that)|go ahead|perfect|great|ok(?:ay)?,? let['’]s)\b/i;

/** A step the rep proposed and the buyer took up with no date said: it is still the agreed next step. */
function acceptedProposal(sentences: Sentence[], buyerNames: string[]): NextStep | null {
  for (let i = sentences.length - 1; i >= 0 && i >= sentences.length - 400; i--) {
    const s = sentences[i]!;
    if (s.role !== 'rep' || !PROPOSAL.test(s.text)) continue;
    const named = STEP_NAMED.exec(s.text);
    if (!named) continue;
    const answer = sentences.slice(i + 1, i + 3).find((n) => n.role !== 'rep');
    if (!answer || !AGREES.test(answer.text)) continue;
    const said = `${s.text} ${answer.text}`;
    const who = buyerNames.filter((n) => new RegExp(String.raw`\b${n}\b`).test(said)).slice(0, 3);
    const what = `${named[1]!.replace(/^(?:(?:to|for|with|of|in|on|a|an|the|short|quick|small)\s)+/i, '')}${named[2] ?? ''}`.replace(/\s+/g, ' ').trim();
    return { what: what.replace(/^./, (c) => c.toLowerCase()), when: null, who, text: s.text, lines: [...new Set([s.line, answer.line])] };
  }
  return null;
}

/** First names of the people on the buyer's side: speakers, and people they or the rep named. */
const ROLE_WORDS = /\b(lead|manager|developer|engineer|head|director|cfo|ceo|cto|coo|cio|vp|owner|founder|partner|associate|admin|team|runs|manages|loop|invite|forward|on the setup|joining|copy|cc)\b/i;

/** First names of the people on the buyer's side: its speakers, and people named with a role or a part to play. */
function stakeholdersOf(sentences: Sentence[], leadName: string): string[] {
  const leadFirst = leadName.trim().split(/\s+/)[0] ?? '';
  const names = new Set<string>();
  for (const s of sentences) if (s.role === 'buyer' && s.speaker && !/^(speaker \d+|prospect|customer|client|buyer)$/i.test(s.speaker)) names.add(s.speaker.split(/\s+/)[0]!);
  const reps = new Set(sentences.filter((s) => s.role === 'rep' && s.speaker).map((s) => s.speaker!.split(/\s+/)[0]!));
  let read = 0;
  for (const s of sentences) {
    if (read >= 400) break;
    if (!ROLE_WORDS.test(s.text) || !/\b[A-Z][a-z]+\b/.test(s.text.slice(1))) continue;
    read++;
    for (const person of nlp(s.text).people().out('array') as string[]) {
      const first = person.replace(/\b(?:Dr|Mr|Mrs|Ms|Prof)\.?\s*/g, '').replace(/['’]s\b/g, '').replace(/[^\p{L}' -]/gu, '').trim().split(/\s+/)[0];
      if (first && first.length > 1 && !reps.has(first) && /^[A-Z][a-z]/.test(first)) names.add(first);
    }
  }
  names.delete(leadFirst);
  // The lead is thanked as the reader, never as a stakeholder by the surname a label or a mention gave them.
  for (const part of leadName.trim().split(/\s+/)) names.delete(part.replace(/[^\p{L}'’-]/gu, ''));
  return [...names].slice(0, MAX_EACH);
}

/** What the buyer asked to be sent just before: "Can you send me the security documentation first?". */
const REQUEST = /\b(?:can|could|would) you (?:please )?(?:send|share|forward|e-?mail) (?:me|us|over) ((?:the|your|a|an|some)\s[^?,]{3,80}?)(?:\s(?:first|too|as well|please|over))?\?$/i;

/** "I'll send it over today", after the buyer asked for the security documentation: the promise names it. */
function resolveIt(s: Sentence, sentences: Sentence[]): string {
  if (!/\b(?:send|share|forward|e-?mail)\s(?:it|that|them|those)\b/i.test(s.text)) return s.text;
  for (const before of sentences.slice(Math.max(0, s.index - 2), s.index).reverse()) {
    if (before.role === 'rep') continue;
    const asked = REQUEST.exec(before.text);
    if (asked) return s.text.replace(/\b(send|share|forward|e-?mail)\s(?:it|that|them|those)(?:\s(?:over|across))?\b/i, (_m, verb: string) => `${verb} ${asked[1]!.replace(/^your\s/i, 'the ')}`);
  }
  return s.text;
}

/** A rep's offer, as a question: "Shall I send a short pilot plan?", "Want me to set up a call with your CFO?". */
const OFFER = /^(?:shall|should|can|could|may) I (.{3,160}?)\?$|^(?:do you want|would you like|want) me to (.{3,160}?)\?$|^would it help if I (.{3,160}?)\?$/i;
/** The buyer taking it: "Yes, send it next week", "Please do", "That would help". */
const ACCEPTS = /^(?:yes|yeah|yep|sure|please|absolutely|definitely|of course|that would (?:help|be great|be useful)|sounds good|go ahead|perfect|great)\b/i;

/** A rep's offer that the buyer's next words take, as the promise it became, with the time the buyer gave it. */
function acceptedOffer(s: Sentence, sentences: Sentence[]): string | null {
  const offer = OFFER.exec(s.text);
  if (!offer) return null;
  const answer = sentences.slice(s.index + 1, s.index + 3).find((next) => next.role !== 'rep');
  if (!answer || !ACCEPTS.test(answer.text)) return null;
  const action = (offer[1] ?? offer[2] ?? offer[3])!.replace(/^sent\b/i, 'send');
  const due = DUE.exec(answer.text);
  return `I'll ${action}${due && !DUE.test(action) ? ` ${due[1]}` : ''}.`;
}

export function readCallFacts(transcript: string, leadName: string, senderName: string | null, leadCompany: string | null): CallFacts {
  const sentences = sentencesOf(transcript, leadName, senderName, leadCompany);
  const commitments: Commitment[] = [];
  const pains: Pain[] = [];
  const deadlines: Pain[] = [];
  const conditions: Sentence[] = [];
  let notNow = false;
  // A sentence said again (a repeated transcript, a rep's recap) is one fact, so that copies crowd out no other.
  const seen = new Set<string>();
  for (const s of sentences) {
    const theirs = s.role !== 'rep';
    if (!theirs || s.role === 'unknown') {
      for (const p of promisesIn(acceptedOffer(s, sentences) ?? resolveIt(s, sentences))) {
        if (commitments.length < MAX_EACH && !commitments.some((c) => c.what === p.what)) commitments.push({ who: 'rep', ...p, text: s.text, lines: [s.line] });
      }
    }
    if (!theirs) continue;
    if (NOT_NOW.test(s.text)) notNow = true;
    if (/\?$/.test(s.text)) continue;
    const key = s.text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    if (seen.has(key)) continue;
    seen.add(key);
    // "No problem, you have about twenty minutes": the time the call has, and a problem denied, are no pain.
    if (TIME_BUDGET.test(s.text)) continue;
    const figure = figureIn(s.text);
    const score = painScore(s.text.replace(/\bno (?:problem|issue|worries)\b/gi, '')) + (figure ? 2 : 0);
    const ownPromise = /^(?:I can|I['’]ll|I will|we['’]ll|will do)\b/i.test(s.text);
    // "They are exhausted by Friday" names a day but is no deadline: a sentence that says this much of a pain is one.
    if (DEADLINE.test(s.text) && !ownPromise && score < 4) {
      if (deadlines.length < MAX_EACH) deadlines.push({ text: s.text, figure, score, lines: [s.line] });
    } else if (score >= 3 && !ownPromise && pains.length < 200) pains.push({ text: s.text, figure, score, lines: [s.line], ...(s.role === 'unknown' ? { note: true } : {}) });
    if (CONDITION.test(s.text) && conditions.length < MAX_EACH) conditions.push(s);
  }
  pains.sort((a, b) => b.score - a.score || a.lines[0]! - b.lines[0]!);
  const stakeholders = stakeholdersOf(sentences, leadName);
  return {
    sentences,
    commitments,
    nextStep: notNow ? null : nextStepOf(sentences, stakeholders),
    pains: pains.slice(0, MAX_EACH),
    deadlines,
    conditions,
    stakeholders,
    notNow,
  };
}

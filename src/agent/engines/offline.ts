// The built-in engine: deterministic rules, no network, no model. It keeps the prospect's own words from the call,
// and the WRITER says nothing about the lead's company that is not in RESEARCH facts or the call (DESIGN §3, §5).
import type { CpuPool } from '../../cpu/pool.ts';
import { detached, type Engine, type EngineResult, type RunContext } from '../engine.ts';
import type { AnalysisOutput, Fact, KeyFacts, StrategyOutput, WriterOutput } from '../outputs.ts';
import { signOff as standardSignOff } from '../sign-off.ts';
import { factWeight, isPromise, promisesIn, readFacts } from './call-facts.ts';
import { trimEndOf } from '../text.ts';
import { toOneLine } from '../../domain/validation.ts';

type AnalyseContext = Parameters<Engine['analyse']>[0];
type StrategiseContext = Parameters<Engine['strategise']>[0];
type WriteContext = Parameters<Engine['write']>[0];

/** The version of these rules, recorded on every step they produce, as a prompt's version is for a model. */
export const OFFLINE_RULES_VERSION = 'offline-2';

const result = <T>(output: T): EngineResult<T> => ({ output, model: null, promptVersion: OFFLINE_RULES_VERSION, usage: null });

/** The rules, run where they are called: in a CPU pool thread (src/cpu/tasks.ts), or by tests of the rules. */
export const offlineRules = {
  analyse: (ctx: AnalyseContext): EngineResult<AnalysisOutput> => result(analyseCall(ctx)),
  strategise: (ctx: StrategiseContext): EngineResult<StrategyOutput> => result(chooseStrategy(ctx)),
  write: (ctx: WriteContext): EngineResult<WriterOutput> => result(writeDraft(ctx)),
};

/** The offline engine: its rules read a stranger's transcript, so they run in the CPU pool, never on the event loop. */
export function createOfflineEngine(cpu: CpuPool): Engine {
  return {
    name: 'offline',
    analyse: (ctx) => cpu.run('analyse', detached(ctx), { signal: ctx.signal }),
    strategise: (ctx) => cpu.run('strategise', detached(ctx), { signal: ctx.signal }),
    write: (ctx) => cpu.run('write', detached(ctx), { signal: ctx.signal }),
  };
}

// ===============================================================================================================
// Reading the transcript

type Role = 'rep' | 'prospect' | 'note';

interface Utterance {
  role: Role;
  /** The sentence cleaned up; `said` is as it was said, for the tone of it. */
  text: string;
  said: string;
  position: number;
}

const TIMESTAMP = String.raw`(?:[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?\s*)`;
/**
 * "[00:01:15] Grace: …", "**Ada**: …": the head of a speaker's line, up to the colon. Its text is the rest of the line,
 * taken without a pattern: `:\s+(.*)$` backtracks over every split of a long run of spaces before a carriage return.
 */
const SPEAKER_HEAD = new RegExp(String.raw`^\s*${TIMESTAMP}?(?:\*\*)?([A-Za-z][\w.'’ ()-]{0,40}?)(?:\*\*)?\s*${TIMESTAMP}?:(?=\s)`);
/** Ends a line as `.` does not reach over: a line with one of these after its colon is no speaker's line. */
const LINE_BREAK = /[\r\u2028\u2029]/;
/** Labels that head a line of notes, not a person speaking. */
const NOTE_LABELS = /^(note|notes|summary|next steps?|action items?|agenda|date|time|attendees|participants|title|subject|call|meeting|follow[- ]?ups?|pain points?|objections?|todo|to do)$/i;
const REP_LABELS = /^(rep|sales|sales ?rep|sales ?person|salesperson|seller|account executive|ae|sdr|bdr|me|agent|host|interviewer|us)$/i;
const PROSPECT_LABELS = /^(prospect|customer|client|lead|buyer|them|guest)$/i;

interface Turn {
  speaker: string | null;
  text: string;
}

function readTurns(transcript: string): { turns: Turn[]; labelled: boolean } {
  const lines = transcript.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  const parsed = lines.map((line) => {
    const head = SPEAKER_HEAD.exec(line);
    const text = head ? line.slice(head[0].length).trim() : '';
    if (!head || LINE_BREAK.test(text) || head[1]!.trim().split(/\s+/).length > 4) return { speaker: null, label: null, text: line };
    const label = head[1]!.trim();
    if (NOTE_LABELS.test(label)) return { speaker: null, label, text };
    return { speaker: label, label, text };
  });
  const speakers = new Set(parsed.map((p) => p.speaker).filter((s): s is string => s !== null));
  const labelledLines = parsed.filter((p) => p.speaker !== null).length;
  const labelled = speakers.size >= 2 || (speakers.size === 1 && labelledLines >= 2 && labelledLines * 2 >= parsed.length);
  if (!labelled) return { turns: [{ speaker: null, text: lines.join(' ') }], labelled: false };

  const turns: Turn[] = [];
  for (const p of parsed) {
    const previous = turns.at(-1);
    // An unlabelled line continues the turn before it; a note line stands alone.
    if (p.speaker === null && p.label === null && previous) previous.text += ` ${p.text}`;
    else turns.push({ speaker: p.speaker, text: p.text });
  }
  return { turns, labelled: true };
}

function nameMatches(label: string, name: string | null): boolean {
  if (!name) return false;
  const bare = label.toLowerCase().replace(/\s*\(.*\)\s*$/, '').trim();
  const full = name.toLowerCase().trim();
  const first = full.split(/\s+/)[0] ?? '';
  return bare === full || bare === first || (first.length > 0 && bare.split(/\s+/)[0] === first);
}

/** Decides who is selling and who is buying; the prospect's side may have several people. */
function assignRoles(turns: Turn[], leadName: string, senderName: string | null): Map<string, Role> {
  const speakers = [...new Set(turns.map((t) => t.speaker).filter((s): s is string => s !== null))];
  const roles = new Map<string, Role>();
  for (const speaker of speakers) {
    if (nameMatches(speaker, leadName) || PROSPECT_LABELS.test(speaker)) roles.set(speaker, 'prospect');
    else if (nameMatches(speaker, senderName) || REP_LABELS.test(speaker)) roles.set(speaker, 'rep');
  }
  const known = [...roles.values()];
  const unknown = speakers.filter((s) => !roles.has(s));
  if (unknown.length === 0) return roles;
  if (known.includes('rep') || known.includes('prospect')) {
    // Only the buyer known: the others are the sellers. Otherwise the others are the buyer's colleagues.
    const other: Role = known.includes('prospect') && !known.includes('rep') ? 'rep' : 'prospect';
    for (const s of unknown) roles.set(s, other);
    return roles;
  }
  // Nobody recognisable: the one who asks the most questions is selling (the first to speak, on a tie).
  const said = new Map<string, string[]>(speakers.map((s) => [s, []]));
  for (const t of turns) if (t.speaker !== null) said.get(t.speaker)!.push(t.text);
  let rep: string | undefined;
  let most = -1;
  for (const speaker of speakers) {
    const sentences = splitSpoken(said.get(speaker)!.join(' '));
    const share = sentences.length === 0 ? 0 : sentences.filter((s) => s.endsWith('?')).length / sentences.length;
    if (share > most) [rep, most] = [speaker, share];
  }
  for (const s of speakers) roles.set(s, s === rep ? 'rep' : 'prospect');
  return roles;
}

function utterances(ctx: RunContext): Utterance[] {
  const { turns, labelled } = readTurns(ctx.call.transcript);
  const roles = labelled ? assignRoles(turns, ctx.lead.name, ctx.senderName) : new Map<string, Role>();
  const reported = reportedSpeech(ctx.lead.name);
  const result: Utterance[] = [];
  for (const turn of turns) {
    const role: Role = turn.speaker === null ? 'note' : (roles.get(turn.speaker) ?? 'prospect');
    for (const sentence of splitSpoken(turn.text)) {
      const text = cleanSpoken(cutAtWord(sentence, SENTENCE_READ_MAX), role === 'note' ? reported : null);
      if (text.split(' ').length >= 3) result.push({ role, text, said: sentence, position: result.length });
    }
  }
  return result;
}

/**
 * How much of a sentence the cleaning reads. What it keeps is cut to 220 characters anyway; a few times that leaves
 * room for the fillers and stutters it drops, and bounds its work on a sentence that never ends.
 */
const SENTENCE_READ_MAX = 1000;

const SPOKEN_ABBREVIATIONS = /\b(mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|approx|inc|ltd)\.$/i;
/** The longest of SPOKEN_ABBREVIATIONS with its full stop, and the character before it for the `\b`. */
const ABBREVIATION_TAIL = 8;

function splitSpoken(text: string): string[] {
  const pieces = text.replace(/\s+/g, ' ').split(/(?<=[.!?…])\s+(?=["'“(]?[A-Z0-9])/);
  // Only the end of a sentence can be an abbreviation: testing the whole of a growing "Mr. Mr. Mr. …" is quadratic,
  // and so is gluing it together piece by piece.
  const sentences: string[][] = [];
  let tail = '';
  for (const piece of pieces) {
    if (sentences.length > 0 && SPOKEN_ABBREVIATIONS.test(tail)) {
      sentences.at(-1)!.push(piece);
      tail = `${tail} ${piece}`.slice(-ABBREVIATION_TAIL);
    } else {
      sentences.push([piece]);
      tail = piece.slice(-ABBREVIATION_TAIL);
    }
  }
  return sentences.map((s) => s.join(' ').trim()).filter(Boolean);
}

const LEADING_FILLERS =
  /^(?:(?:yeah|yes|yep|yup|so|well|okay|ok|right|oh|and|but|look|honestly|basically|actually|i mean|you know|sure|mm+|hm+|um+|uh+|er+|understood|got it|great|perfect|absolutely|cool|nice)\b[,.!]?\s+)+/i;

/** "Ada said their reps…" in call notes: the words before what was said. */
function reportedSpeech(leadName: string): RegExp {
  const first = escapeRegExp(leadName.trim().split(/\s+/)[0] ?? '');
  return new RegExp(
    String.raw`^(?:${first ? `${first}|` : ''}she|he|they|the prospect|the customer|the client)\s+(?:said|mentioned|explained|noted|told (?:me|us)|complained|shared|admitted)(?: that)?,?\s+`,
    'i',
  );
}

/**
 * One sentence in the speaker's words, without the "um"s and stutters speech is full of; from call notes, without
 * the `reported` "Ada said" before it.
 */
function cleanSpoken(sentence: string, reported: RegExp | null): string {
  let text = sentence
    .replace(/\s*\b(?:um+|uh+|erm+|er|hmm+|ah)\b[,.]?/gi, '')
    .replace(/,\s*(?:you know|i mean|like),/gi, ',')
    .replace(/\b(?!(?:had|that)\b)(\w+)(?:[,\s]+\1\b)+/gi, '$1');
  text = endingDashAsStop(text)
    // From the start of a run of spaces only: from each of its spaces, `\s+` would read the rest of the run again.
    .replace(/(?<!\s)\s+([,.!?;:])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  text = text.replace(LEADING_FILLERS, '');
  if (reported) text = text.replace(reported, '');
  text = trimEndOf(text.replace(/^[,;:\s]+/, ''), /[,;:\s]/);
  if (!text) return '';
  text = text.charAt(0).toUpperCase() + text.slice(1);
  if (!/[.!?…]$/.test(text)) text += '.';
  return shortenSentence(text, 220);
}

/** "we tried the agency --" → "we tried the agency.": a sentence broken off with a dash ends with a full stop. */
function endingDashAsStop(text: string): string {
  const end = trimEndOf(text, /\s/).length;
  let start = end;
  if (text[end - 1] === '—' || text[end - 1] === '–') start = end - 1;
  else {
    while (start > 0 && text[start - 1] === '-') start--;
    if (end - start < 2) return text;
  }
  return `${trimEndOf(text.slice(0, start), /\s/)}.`;
}

/** At most `max` characters of `text`, cut at a space in its second half if there is one, never inside a character. */
function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  if (space > max / 2) return text.slice(0, space);
  // Never between the halves of a surrogate pair: PostgreSQL refuses half a character in a JSON column.
  return text.slice(0, /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max);
}

function shortenSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  const clause = Math.max(head.lastIndexOf(', '), head.lastIndexOf('; '), head.lastIndexOf(' — '));
  if (clause > max * 0.5) return `${head.slice(0, clause)}.`;
  return `${head.slice(0, head.lastIndexOf(' '))}…`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ===============================================================================================================
// ANALYSIS

const PAIN_CUES: Array<[RegExp, number]> = [
  [/\b(manual(ly)?|by hand|copy(ing)?[- ]?(and[- ])?past(e|ing)|re-?typ(e|ing)|re-?key(ing)?|double[- ]entry|spreadsheets?|excel|paperwork)\b/gi, 2],
  [/\b(copy(ing)?|chas(e|ing)|track(ing)? down)\b/gi, 1],
  [/\b(slow|takes? (us )?(forever|ages|hours|days|weeks)|time[- ]consuming|wast(e|es|ed|ing)|bottleneck|backlog|behind|delay(s|ed)?|hours|late)\b/gi, 1.5],
  [/\b(struggl\w*|frustrat\w*|annoy\w*|exhaust\w*|tired of|sick of|fed up|burn(ed|t)?[- ]?out|overwhelm\w*|drowning|nightmare|painful|pain|headache|hate|mess|chaos|stress\w*)\b/gi, 2],
  [/\b(problem|issue|challenge|hard to|difficult|can't|cannot|couldn't|unable|no way to|lack of|missing|miss(es|ed)?|lose|losing|lost|slip(s|ping)?|fall(s|ing)? through the cracks|errors?|mistakes?|wrong|broken|clunky)\b/gi, 1],
  [/\b(out of date|outdated|inaccurate|unreliable|guess(work)?|no visibility|no idea|blind)\b/gi, 1],
  [/\b(costs?|costing|expensive|spend(s|ing)?|paying|churn\w*)\b/gi, 1],
  [/\b(always|constantly|every (single )?(week|day|time|month)|never|too (much|many|long)|so much)\b/gi, 0.5],
  [/\d+\s*(%|percent|hours?|hrs|days?|weeks?|minutes?|k\b)|[$€£]\s*\d/gi, 1],
];

type ObjectionTopic = 'price' | 'timing' | 'security' | 'incumbent' | 'effort' | 'authority';

const OBJECTIONS: Array<{ topic: ObjectionTopic; pattern: RegExp; needsConcern: boolean }> = [
  { topic: 'price', pattern: /\b(too expensive|expensive|not cheap|can'?t afford|don'?t have (the |a |any )?budget|cheaper|discount|over (our |my )?budget|no budget|budget (is |was )?(tight|limited|frozen|cut|gone))\b/i, needsConcern: false },
  { topic: 'price', pattern: /\b(price|pricing|priced|cost|costs|budget)\b/i, needsConcern: true },
  { topic: 'security', pattern: /\b(security|secure|compliance|compliant|soc ?2|gdpr|hipaa|iso ?27001|data (residency|privacy|protection)|infosec|pen(etration)? test|legal review|procurement|dpa)\b/i, needsConcern: false },
  { topic: 'timing', pattern: /\b(not (the )?right time|bad time|too busy|bandwidth|timing|hiring freeze|code freeze|not a priority|other priorities|in the middle of)\b/i, needsConcern: false },
  { topic: 'incumbent', pattern: /\b(already (use|using|have|pay(ing)? for|work with|signed)|current (vendor|tool|provider|contract)|locked in|contract (runs|until|ends|renews))\b/i, needsConcern: false },
  { topic: 'effort', pattern: /\b(integrat\w+|implementation|implement|onboard\w*|learning curve|adopt\w*|change management|migrat\w+|training|set ?up)\b/i, needsConcern: true },
  { topic: 'authority', pattern: /\b(not my (decision|call)|need to (run it|check) (by|with)|(sign[- ]?off|approval) from|convince (my|our))\b/i, needsConcern: false },
];
const CONCERN =
  /\b(worr\w*|concern\w*|hesitant|not sure|unsure|skeptic\w*|sceptic\w*|risk\w*|afraid|problem|issue|can'?t|cannot|won'?t|tight|limited|frozen|too (much|expensive|high|long)|how (long|hard|much work)|blocker|push ?back|hard|difficult|need to (check|get|clear|pass|go through)|have to (go through|get|check)|question|depends)\b/i;

const BUYING_SIGNALS: RegExp[] = [
  /\bbudget\b.{0,30}\b(approved|allocated|set aside|signed off|in place|there|available|earmarked)\b/i,
  /\b(we|i) (have|got|'ve got|’ve got) (the |a |some )?budget\b/i,
  /\b(pilot|trial|proof of concept|poc)\b/i,
  /\b(timeline|deadline|go[- ]live|by (the )?(end of )?(q[1-4]|this quarter|next quarter|the quarter|the month|next month|the year|january|february|march|april|may|june|july|august|september|october|november|december))\b/i,
  /\b(decision[- ]?maker|i (make|own|sign off on|have the final say|can sign)|my (call|decision)|final say)\b/i,
  /\bif\b.{0,80}\b(shows?|proves?|works?|delivers?|results?|pays? off|saves?)\b/i,
  /\b(interested|keen|excited|love to|would like to|want to (see|try|move|start)|sounds (great|good)|makes sense|let'?s (do|try|set up|move|start)|ready to|move forward|roll (it )?out|expand|(bring|loop) in (our|my) (cfo|ceo|cto|coo|vp|head|boss|manager|director))\b/i,
];

const NEXT_STEP =
  /\b(i'll|i’ll|i will|we'll|we’ll|we will|let's|let’s|next step|follow[- ]up|send (over|you|me|us|it|the)|schedule|set up|book|calendar|invite|demo|loop in|bring in|share|circle back|get back to|talk (again|next)|meet (again|next)|by (monday|tuesday|wednesday|thursday|friday|tomorrow|next week|end of (the )?week))\b/i;
const REQUEST = /^(?:can|could|would|will) you (?:please )?(.+?)\??$/i;

const POSITIVE = /\b(great|love|like (that|this|it|the)|interested|excited|helpful|impressive|impressed|perfect|makes sense|keen|exactly|definitely|amazing|useful|valuable|promising|sounds (great|good)|good)\b/i;
const NEGATIVE =
  /\b(not interested|no thanks|waste of (my |our )?time|not convinced|don'?t see (the|how|why)|doubt|skeptic\w*|sceptic\w*|unhappy|disappointed|not for us|pass on|not a fit|not (good|great|helpful|useful)|not now)\b/i;

/** Each cue counts up to twice: "out of date … basically a guess" says more than either alone. */
function painScore(text: string): number {
  let score = 0;
  for (const [cue, weight] of PAIN_CUES) score += weight * Math.min(2, text.match(cue)?.length ?? 0);
  return score;
}

/** Every topic an objection touches, most pressing first: "too expensive, and we already use HubSpot". */
function objectionTopics(text: string): ObjectionTopic[] {
  const topics = OBJECTIONS.filter(
    ({ pattern, needsConcern }) => pattern.test(text) && (!needsConcern || CONCERN.test(text.replace(pattern, ''))),
  ).map(({ topic }) => topic);
  return [...new Set(topics)];
}

function objectionTopic(text: string): ObjectionTopic | null {
  return objectionTopics(text)[0] ?? null;
}

function analyseCall(ctx: AnalyseContext): AnalysisOutput {
  const all = utterances(ctx);
  // The prospect's side speaks for the prospect; call notes written by anyone do too. The rep does not.
  const theirs = all.filter((u) => u.role !== 'rep');

  const pains: Array<Utterance & { score: number }> = [];
  const objections: Utterance[] = [];
  const signals: Utterance[] = [];
  for (const u of theirs) {
    const question = u.text.endsWith('?');
    const score = question ? 0 : painScore(u.text);
    // "Can you send me the security documents?" is a next step, not an objection.
    const topic = REQUEST.test(u.text) ? null : objectionTopic(u.text);
    // "We already use spreadsheets and it's a nightmare" is a pain, not loyalty to a vendor.
    const strongPain = score >= 3 && (topic === 'incumbent' || topic === 'effort');
    if (topic && !strongPain) objections.push(u);
    else if (score >= 2) pains.push({ ...u, score });
    const negated = /\b(no|not|don'?t|never)\b[^.]{0,20}\b(pilot|budget|interested|timeline)\b/i.test(u.text);
    if (!negated && BUYING_SIGNALS.some((signal) => signal.test(u.text)) && !(question && !/\b(pilot|trial)\b/i.test(u.text))) {
      signals.push(u);
    }
  }

  const nextSteps = all
    .map((u) => {
      const request = REQUEST.exec(u.text);
      if (request && u.role !== 'rep') return { ...u, text: sentenceCase(trimEndOf(request[1]!, /[?.]/)) + '.' };
      return u.text.endsWith('?') ? null : u;
    })
    .filter((u): u is Utterance => u !== null && NEXT_STEP.test(u.text));

  const painPoints = pains.sort((a, b) => b.score - a.score || a.position - b.position);
  return {
    engine: 'offline',
    painPoints: distinct(painPoints.map((u) => u.text)).slice(0, 5),
    objections: distinct(objections.map((u) => u.text)).slice(0, 4),
    buyingSignals: distinct(signals.map((u) => u.text)).slice(0, 4),
    nextSteps: distinct(nextSteps.map((u) => u.text)).slice(-4),
    sentiment: sentimentOf(theirs, signals.length, objections.length),
    facts: readFacts(all),
  };
}

function sentimentOf(theirs: Utterance[], signals: number, objections: number): AnalysisOutput['sentiment'] {
  let score = signals - objections * 0.5;
  for (const u of theirs) {
    if (NEGATIVE.test(u.said)) score -= 1.5;
    else if (POSITIVE.test(u.said)) score += 1;
  }
  if (score >= 2) return 'positive';
  if (score <= -1) return 'negative';
  return 'neutral';
}

function distinct(texts: string[]): string[] {
  const seen = new Set<string>();
  return texts.filter((text) => {
    const key = text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function sentenceCase(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ===============================================================================================================
// What the call was about, in a few words

type PainKind = 'time' | 'manual' | 'errors' | 'morale' | 'cost' | 'visibility' | 'slow' | 'other';

interface Concern {
  /** A short noun phrase for a subject line: "15 hours a week copying call notes", "manual data entry". */
  phrase: string;
  kind: PainKind;
  /** What the time goes on, when the prospect put a number on it: "copying call notes into Salesforce". */
  activity?: string;
}

const STOP_AT = /^(and|but|because|which|so|that|when|while|just|every|each|then|or|since|to)$/i;

function firstWords(text: string, max: number): string {
  const words: string[] = [];
  for (const raw of text.split(/\s+/)) {
    const word = trimEndOf(raw, /[.,;:!?…"”)]/);
    if (!word || STOP_AT.test(word)) break;
    words.push(word);
    if (words.length >= max || word !== raw) break;
  }
  while (words.length > 0 && /^(the|a|an|of|on|in|into|for|with|to|at|by|our|my|their)$/i.test(words.at(-1)!)) words.pop();
  return words.join(' ');
}

function kindOf(text: string): PainKind {
  if (/\b(exhaust\w*|burn\w* ?out|tired of|sick of|fed up|overwhelm\w*|stress\w*|morale|drowning)\b/i.test(text)) return 'morale';
  if (/\b(manual(ly)?|by hand|copy\w*|re-?typ\w*|re-?key\w*|double[- ]entry|spreadsheets?|paperwork)\b/i.test(text)) return 'manual';
  if (/\b(errors?|mistakes?|wrong|inaccurate|out of date|outdated|unreliable)\b/i.test(text)) return 'errors';
  if (/\b(visibility|no idea|can'?t see|don'?t know|blind)\b/i.test(text)) return 'visibility';
  if (/\b(hours?|days?|weeks?|minutes?|time[- ]consuming|forever|ages|wast\w*)\b/i.test(text)) return 'time';
  if (/\b(slow|behind|backlog|delay\w*|late|bottleneck)\b/i.test(text)) return 'slow';
  if (/\b(costs?|costing|expensive|spend\w*|paying|churn\w*|[$€£]\s*\d)\b/i.test(text)) return 'cost';
  return 'other';
}

const KIND_PHRASES: Record<PainKind, string> = {
  time: 'the time lost to busywork',
  manual: 'the manual work',
  errors: 'errors and rework',
  morale: 'the strain on your team',
  cost: 'the cost of the current process',
  visibility: 'the lack of visibility',
  slow: 'slow turnaround',
  other: 'what you shared on our call',
};

const TOPIC_PHRASES: Record<ObjectionTopic, string> = {
  price: 'budget',
  timing: 'timing',
  security: 'the security review',
  incumbent: 'your current setup',
  effort: 'the effort to get started',
  authority: 'getting sign-off',
};

/** The concern the e-mail is about: the strongest pain point, else the first objection. */
function mainConcern(analysis: AnalysisOutput): Concern {
  const pain = analysis.painPoints[0];
  if (pain) return concernOf(pain);
  const topic = analysis.objections.map(objectionTopic).find((t): t is ObjectionTopic => t !== null);
  return topic ? { phrase: TOPIC_PHRASES[topic], kind: 'other' } : { phrase: KIND_PHRASES.other, kind: 'other' };
}

function concernOf(pain: string | undefined): Concern {
  if (!pain) return { phrase: KIND_PHRASES.other, kind: 'other' };
  const kind = kindOf(pain);

  const hours =
    /(?:about |around |roughly |over |nearly |almost |at least )?(\d[\d,.]*\+?\s*(?:hours?|hrs|days?|minutes?|mins)(?:\s+(?:a|per|each|every)\s+(?:week|day|month|rep|person|head))?)\s*(.*)$/i.exec(pain);
  if (hours) {
    const activity = firstWords(hours[2]!.replace(/^(on|doing|spent|just|of|in)\s+/i, ''), 5);
    if (!activity) return { phrase: hours[1]!, kind: 'time' };
    const gerund = /^\w+ing\b/i.test(activity);
    return { phrase: `${hours[1]} ${gerund ? '' : 'on '}${activity}`, kind: 'time', activity: gerund ? activity : `on ${activity}` };
  }

  const money = /((?:[$€£]\s?\d[\d,.]*(?:\s?k\b)?|\d[\d,.]*(?:\s?k)? (?:dollars|euros|pounds))(?:\s+(?:a|per|each|every)\s+(?:week|month|year|quarter))?)\s*(.*)$/i.exec(pain);
  if (money && kind === 'cost') {
    const on = /^on\s+/i.test(money[2]!) ? firstWords(money[2]!.replace(/^on\s+/i, ''), 4) : '';
    return { phrase: on ? `${money[1]} on ${on}` : `${money[1]} in cost`, kind: 'cost' };
  }

  const struggle = /\bstruggl\w* (?:with|to) (.+)$/i.exec(pain);
  if (struggle) {
    const what = firstWords(struggle[1]!, 5);
    if (what) return { phrase: /\bstruggl\w* to /i.test(pain) ? `the struggle to ${what}` : lowerFirst(what), kind };
  }

  const manualThing = /\bmanual ((?:[a-z]+[- ]?){1,2})/i.exec(pain);
  if (manualThing) {
    const what = firstWords(manualThing[1]!, 2);
    if (what && !/^(work|process|steps?)$/i.test(what)) return { phrase: `manual ${what.toLowerCase()}`, kind: 'manual' };
  }

  const state =
    /\b(?:is|are) (?:so |really |always |too |completely |just )*(slow|manual|broken|clunky|outdated|unreliable|out of date|a nightmare|a mess|painful|a pain|a problem|an issue|a challenge|a headache|hard|difficult)\b/i.exec(pain);
  const thing = state ? subjectOf(pain.slice(0, state.index)) : null;
  if (state && thing) {
    const adjective = state[1]!.toLowerCase();
    const phrase = /^(slow|manual|broken|clunky|outdated|unreliable)$/.test(adjective)
      ? `the ${adjective} ${thing}`
      : adjective === 'out of date'
        ? `the out-of-date ${thing}`
        : `the ${thing}`;
    const stateKind: PainKind = adjective === 'slow' ? 'slow' : adjective === 'manual' ? 'manual' : /date|outdated|unreliable/.test(adjective) ? 'errors' : kind;
    return { phrase, kind: stateKind };
  }

  return { phrase: KIND_PHRASES[kind], kind };
}

/**
 * The thing a clause is about, from the words before its verb: "the dashboard you saw earlier" → "dashboard",
 * "honestly our CRM" → "crm". Null for a pronoun ("it is slow" names nothing).
 */
function subjectOf(before: string): string | null {
  const clause = before.split(/,|;|\b(?:and|but|because|so|that|since|when)\b/i).at(-1) ?? '';
  const words = clause.trim().split(/\s+/).filter(Boolean);
  const start = words.findIndex((w) => !/^(the|our|my|their|your|this|that|these|those|honestly|really|just|also|a|an)$/i.test(w));
  const noun: string[] = [];
  for (const word of start < 0 ? [] : words.slice(start)) {
    if (/^(i|you|we|they|he|she|it|which|who|there|everything|everyone)$/i.test(word)) break;
    noun.push(word.toLowerCase());
  }
  return noun.length > 0 && noun.length <= 3 ? noun.join(' ') : null;
}

function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

// ===============================================================================================================
// STRATEGY

function companyOf(ctx: RunContext): string {
  const named = ctx.lead.companyName?.trim();
  if (named) return named;
  const title = ctx.research?.website.title;
  if (title) {
    // The part in the fewest words, the first of them on a tie: "Kestrel Logistics | Route planning for …".
    let brand: string | undefined;
    let fewest = Infinity;
    for (const part of title.split(/(?<!\s)\s+[|–—:·-]\s+/)) {
      const words = part.trim() ? part.trim().split(' ').length : Infinity;
      if (words < fewest) [brand, fewest] = [part.trim(), words];
    }
    if (brand && brand.length <= 40) return brand;
  }
  const website = ctx.lead.companyWebsite ?? ctx.research?.website.url;
  if (website) {
    try {
      return new URL(/^[a-z]+:\/\//i.test(website) ? website : `https://${website}`).hostname.replace(/^www\./, '');
    } catch {
      // Not a URL: fall through.
    }
  }
  return 'your team';
}

function firstNameOf(name: string): string | null {
  const words = name.trim().split(/\s+/).filter((w) => !/^(dr|mr|mrs|ms|mx|prof)\.?$/i.test(w));
  const first = words[0];
  return first && /^[\p{L}][\p{L}'’-]*$/u.test(first) ? first : null;
}

function mentionsPilot(ctx: RunContext & { analysis: AnalysisOutput }): boolean {
  return /\b(pilot|trial|proof of concept|poc)\b/i.test([...ctx.analysis.buyingSignals, ...ctx.analysis.nextSteps, ctx.call.transcript].join(' '));
}

/** The research fact most related to what the prospect said, or the first concrete one. */
function relevantFacts(facts: Fact[], analysis: AnalysisOutput, count: number): Fact[] {
  const words = (text: string): Set<string> =>
    new Set(text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length >= 4 && !COMMON_WORDS.has(w)));
  const spoken = words([...analysis.painPoints, ...analysis.buyingSignals].join(' '));
  const ranked = facts
    .filter((fact) => fact.text.length <= 220)
    .map((fact, index) => {
      const overlap = [...words(fact.text)].filter((w) => spoken.has(w)).length;
      return { fact, index, score: overlap * 2 + (/\d/.test(fact.text) ? 1 : 0) };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index);
  return ranked.slice(0, count).map((r) => r.fact);
}

const COMMON_WORDS = new Set(['that', 'this', 'with', 'have', 'from', 'they', 'their', 'them', 'what', 'when', 'your', 'about', 'more', 'than', 'into', 'every', 'just', 'really', 'week', 'would', 'could', 'there', 'which', 'were', 'been', 'will']);

function chooseStrategy(ctx: StrategiseContext): StrategyOutput {
  const company = companyOf(ctx);
  const firstName = firstNameOf(ctx.lead.name) ?? ctx.lead.name;
  const pain = ctx.analysis.painPoints[0];
  const concern = mainConcern(ctx.analysis);
  const fact = relevantFacts(ctx.research.facts, ctx.analysis, 1)[0];
  const pilot = mentionsPilot(ctx);

  const angle = [
    pain ? `Lead with ${concern.phrase}, in ${firstName}’s own words (“${pain}”)` : `Build on the call with ${company}`,
    fact ? `and connect it to what ${possessive(company)} site says (“${fact.text}”)` : null,
    pilot ? 'then propose a short pilot' : 'then propose a short follow-up call',
  ]
    .filter(Boolean)
    .join(', ');

  const propositions: string[] = [];
  const kinds = new Set<PainKind>();
  for (const p of ctx.analysis.painPoints) {
    const c = concernOf(p);
    if (kinds.has(c.kind)) continue;
    kinds.add(c.kind);
    propositions.push(proposition(c));
  }
  const topics = new Set(ctx.analysis.objections.flatMap(objectionTopics));
  if (topics.has('price')) propositions.push('Prove the value in a small first step before any larger commitment');
  if (topics.has('security')) propositions.push('Answer the security questions early so the review does not hold things up');
  if (topics.has('incumbent')) propositions.push('Start without replacing the tools the team already uses');
  if (topics.has('timing') || topics.has('effort')) propositions.push('Keep the effort on the team’s side small');
  if (propositions.length === 0) propositions.push(`Make the next step easy for ${company}`);

  const tone =
    ctx.analysis.sentiment === 'positive'
      ? 'warm, direct and confident'
      : ctx.analysis.sentiment === 'negative'
        ? 'empathetic, low-pressure and brief'
        : 'helpful and concise';

  return {
    engine: 'offline',
    angle: `${angle}.`,
    valuePropositions: propositions.slice(0, 4),
    callToAction: callToAction(ctx, company, concern, pilot),
    tone: topics.has('security') ? `${tone}; precise on security` : tone,
  };
}

function possessive(name: string): string {
  return /s$/i.test(name) ? `${name}’` : `${name}’s`;
}

function proposition(concern: Concern): string {
  switch (concern.kind) {
    case 'time':
      return `Give the team back ${/^\d/.test(concern.phrase) ? `the ${concern.phrase}` : concern.phrase}`;
    case 'manual':
      return `Take ${concern.phrase.startsWith('the ') ? concern.phrase : `the ${concern.phrase}`} off the team’s plate`;
    case 'errors':
    case 'visibility':
      return concern.phrase.startsWith('the ') ? `Fix ${concern.phrase}` : `Cut down on ${concern.phrase}`;
    case 'morale':
      return 'Take the grind off the team so they can focus on the work that matters';
    case 'cost':
      return /^[$€£\d]/.test(concern.phrase) ? `Bring the ${concern.phrase.replace(/ in cost$/, '')} down` : `Bring down ${concern.phrase}`;
    case 'slow':
      return `Speed up ${concern.phrase.replace(/^(the )?slow /, 'the ')}`;
    default:
      if (concern.phrase === KIND_PHRASES.other) return 'Follow through on what was discussed on the call';
      return concern.phrase.startsWith('the ') ? `Fix ${concern.phrase}` : `Solve ${concern.phrase}`;
  }
}

function callToAction(ctx: StrategiseContext, company: string, concern: Concern, pilot: boolean): string {
  const notNow = ctx.analysis.objections.some((o) => objectionTopics(o).includes('timing')) || ctx.analysis.sentiment === 'negative';
  if (notNow && !pilot) {
    return 'Would it help if I checked back in a couple of months? Until then, I’m happy to send anything that would be useful when the timing is right.';
  }
  const resultsCondition = ctx.analysis.buyingSignals.some((s) => /\bif\b.{0,80}\b(shows?|proves?|works?|results?)\b/i.test(s));
  if (pilot) {
    const length = /\b(one|two|three|four|six|\d{1,2})[- ]week (pilot|trial)\b/i.exec(ctx.call.transcript)?.[1];
    const pilotName = length ? `a ${length.toLowerCase()}-week pilot` : 'a short pilot';
    const focus = concern.activity
      ? `, measured on the time spent ${concern.activity},`
      : concern.kind === 'other'
        ? ''
        : `, focused on ${concern.phrase},`;
    return `Would ${pilotName} with a few people on your team${focus} work for you? ${
      resultsCondition ? 'If it shows results, we can plan the rollout from there.' : 'I can send a one-page plan this week.'
    }`;
  }
  if (ctx.analysis.nextSteps.some((s) => /\b(demo|meet|call|calendar|schedule|book)\b/i.test(s))) {
    const demo = ctx.analysis.nextSteps.some((s) => /\bdemo\b/i.test(s));
    return `Does 30 minutes next week work ${demo ? 'for the demo' : 'to go through the details'}? Send me a time that suits you and I’ll confirm.`;
  }
  return `Would you have 20 minutes next week to go through how this could work for ${company}?`;
}

// ===============================================================================================================
// WRITER

interface Style {
  formal: boolean;
  casual: boolean;
  short: boolean;
  long: boolean;
  /** Feedback asked for something this engine cannot act on: change the wording so the new draft differs. */
  reworded: boolean;
  mentions: string[];
  omissions: string[];
  /** The most words the body may have, greeting and signature included ("keep it under 100 words"). */
  wordLimit: number | null;
  /** "Try another angle": lead with another of the prospect's concerns. */
  angle: boolean;
  /** "Focus on the downtime": lead with what the call said about it. */
  focus: string | null;
  /** Which wording and layout: 0 is the first draft's; a regeneration without feedback takes the next one. */
  variant: number;
}

const PLAIN_STYLE: Style = {
  formal: false, casual: false, short: false, long: false, reworded: false, mentions: [], omissions: [],
  wordLimit: null, angle: false, focus: null, variant: 0,
};

/** "under 100 words", "no more than 80 words", "100 words max": the limit, one less where "under" means fewer. */
const WORD_LIMIT =
  /\b(under|below|fewer than|less than|at most|max(?:imum)?(?: of)?|no more than|not more than|within|up to)\s+(\d{1,4})\s+words\b|\b(\d{1,4})\s+words?\s+(?:max(?:imum)?|or (?:less|fewer)|at most|tops)\b/i;

/** Reads a reviewer's feedback for the requests a rule can honour. */
function readFeedback(feedback: string | null | undefined): Style {
  const text = (feedback ?? '').trim().slice(0, FEEDBACK_READ_MAX);
  const style: Style = { ...PLAIN_STYLE, mentions: [], omissions: [] };
  if (!text) return style;
  style.formal = /\b(formal|professional|polite|less casual)\b/i.test(text) && !/\b(less|not so|too) formal\b/i.test(text);
  style.casual = /\b(casual|informal|friendl\w*|warmer|relaxed|less formal|too formal|not so formal)\b/i.test(text);
  const limit = WORD_LIMIT.exec(text);
  if (limit) {
    const n = Number(limit[2] ?? limit[3]);
    const under = limit[1] !== undefined && /^(under|below|fewer|less)/i.test(limit[1]);
    style.wordLimit = Math.max(1, under ? n - 1 : n);
  }
  style.short = style.wordLimit !== null || /\b(short\w*|brief\w*|concise|too long|cut it down|trim|tighter|fewer words)\b/i.test(text);
  style.long = !style.short && /\b(longer|more detail\w*|too short|expand|elaborate)\b/i.test(text);
  style.angle = /\b(?:another|different|new|other|fresh)\s+(?:angle|approach|take|hook|direction)\b|\bchange the (?:angle|approach)\b/i.test(text);
  const focus = /\b(?:focus|lead|concentrate|open)\s+(?:more\s+)?(?:on|with)\s+([^.;!?\n]{1,80})/i.exec(text);
  if (focus) style.focus = focus[1]!.trim();
  for (const match of text.matchAll(/\b(?:don'?t|do not|never|no need to|stop) (?:mention|bring up|talk about|include|reference)\s+([^.;!?\n]+)|\b(?:remove|drop|leave out|take out|without)\s+(?:the\s+)?(?:mention of\s+|part about\s+|bit about\s+)?([^.;!?\n]+)/gi)) {
    const what = (match[1] ?? match[2] ?? '').trim();
    if (what && !/^(it|that|this)\b/i.test(what)) style.omissions.push(what.slice(0, 300));
  }
  for (const match of text.matchAll(/\b(?:mention|include|add|reference|talk about|bring up|say something about|highlight)\s+(?:that\s+)?([^.;!?\n]+)/gi)) {
    const what = match[1]!.trim().replace(/(?<!\s)\s+(too|as well|please)$/i, '');
    const before = text.slice(Math.max(0, match.index - 12), match.index).toLowerCase();
    if (/(don'?t|do not|never|no need to|stop) $/.test(before)) continue;
    if (what && !/^(more|less|some|a bit|detail|details|a line|a sentence|it|that|this)\b/i.test(what)) style.mentions.push(what.slice(0, 300));
  }
  style.reworded = !style.formal && !style.casual && !style.short && !style.long && !style.angle && !style.focus &&
    style.mentions.length === 0 && style.omissions.length === 0;
  if (style.reworded) style.variant = 1;
  return style;
}

/** Feedback is a reviewer's note; past this much it is read no further. */
const FEEDBACK_READ_MAX = 2000;

const PRONOUNS: Array<[RegExp, string]> = [
  [/\bI am\b/g, 'you are'],
  [/\bI'm\b|\bI’m\b/g, 'you’re'],
  [/\bI was\b/g, 'you were'],
  [/\bI wasn't\b|\bI wasn’t\b/g, 'you weren’t'],
  [/\bI've\b|\bI’ve\b/g, 'you’ve'],
  [/\bI'd\b|\bI’d\b/g, 'you’d'],
  [/\bI'll\b|\bI’ll\b/g, 'you’ll'],
  [/\bI\b/g, 'you'],
  [/\b[Ww]e're\b|\b[Ww]e’re\b/g, 'you’re'],
  [/\b[Ww]e've\b|\b[Ww]e’ve\b/g, 'you’ve'],
  [/\b[Ww]e'd\b|\b[Ww]e’d\b/g, 'you’d'],
  [/\b[Ww]e'll\b|\b[Ww]e’ll\b/g, 'you’ll'],
  [/\b[Ww]e\b/g, 'you'],
  [/\b[Mm]y\b/g, 'your'],
  [/\b[Oo]ur\b/g, 'your'],
  [/\b[Oo]urs\b/g, 'yours'],
  [/\bmine\b/g, 'yours'],
  [/\bme\b/g, 'you'],
  [/\bus\b/g, 'you'],
  [/\bmyself\b/g, 'yourself'],
  [/\bourselves\b/g, 'yourselves'],
];

const THIRD_PERSON_VERBS: Record<string, string> = { is: 'are', was: 'were', has: 'have', does: 'do', "'s": "'re", '’s': '’re' };

/**
 * "We spend hours on it." → "you spend hours on it"; from call notes, "She is frustrated…" → "you are
 * frustrated…". Null when a faithful rewording is not safe.
 */
function inSecondPerson(sentence: string, leadFirstName: string | null): string | null {
  if (/\b(you|your|yours|let me|let us)\b/i.test(sentence) || /["“”]/.test(sentence)) return null;
  let text = trimEndOf(sentence, /[.!…]/);
  const subject = leadFirstName ? `She|He|${escapeRegExp(leadFirstName)}` : 'She|He';
  const third = new RegExp(String.raw`^(?:${subject})(['’]s)?\s+((?:also|really|still|often|usually|never|always|just)\s+)?([a-z]\w*)`).exec(text);
  if (third) {
    const [whole, contraction, adverb = '', verb = ''] = third;
    const agreed = contraction
      ? `you${THIRD_PERSON_VERBS[contraction]} ${adverb}${verb}`
      : `you ${adverb}${THIRD_PERSON_VERBS[verb] ?? verb.replace(/(?<![su])s$/, '').replace(/ie$/, 'y')}`;
    text = agreed + text.slice(whole.length);
    text = text.replace(/\b(her|his)\b/g, 'your').replace(/\b(him)\b/g, 'you').replace(/\b(herself|himself)\b/g, 'yourself');
  }
  text = text.replace(/^They(['’]re)\b/, 'you$1').replace(/^They\b/, 'you').replace(/^Their\b/, 'your');
  for (const [pattern, replacement] of PRONOUNS) text = text.replace(pattern, replacement);
  return lowerCommonStart(text);
}

/**
 * Lower-cases the first word when it is an ordinary word, so "Salesforce is slow" keeps its capital while
 * "Planning the loads takes days" reads on mid-sentence: a capitalised gerund is hardly ever a name.
 */
function lowerCommonStart(text: string): string {
  const word = text.split(/\s+/)[0] ?? '';
  const first = word.toLowerCase().replace(/[^a-z’']/g, '');
  const ordinary = COMMON_STARTS.has(first) || /^[A-Z][a-z]{2,}ing$/.test(word);
  return ordinary ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/**
 * A research fact in a sentence that says where it came from, reworded no further than its pronouns: the site's
 * "we" is the lead's company, never the sender's. Copy that speaks to the reader ("cut your costs") is quoted.
 */
function factSentence(fact: Fact, formal: boolean, another: boolean): string {
  const opener = another ? 'It also says that' : formal ? 'I also noted on your website that' : 'I also saw on your site that';
  const text = trimEndOf(fact.text.trim(), /[.!…]/);
  const reworded = /\b(we|our|ours|us|I|my)\b/.test(text) || /^(We|Our)\b/.test(text) ? inSecondPerson(text, null) : lowerCommonStart(text);
  if (reworded && !/["“”]/.test(text) && !/\b(you|your)\b/i.test(text)) return `${opener} ${reworded}.`;
  return `${formal ? 'Your website says' : 'Your site says'}: “${fact.text.trim()}”`;
}

const COMMON_STARTS = new Set([
  'a', 'about', 'after', 'all', 'almost', 'also', 'an', 'around', 'at', 'because', 'before', 'customers', 'during', 'each',
  'even', 'every', 'everyone', 'everything', 'for', 'founded', 'from', 'getting', 'half', 'hundreds', 'if', 'in', 'it',
  'it’s', "it's", 'its', 'just', 'keeping', 'last', 'many', 'millions', 'more', 'most', 'nearly', 'no', 'nobody', 'none',
  'now', 'often', 'on', 'once', 'one', 'only', 'over', 'plans', 'pricing', 'right', 'since', 'so', 'some', 'sometimes',
  'still', 'teams', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'those', 'thousands', 'today',
  'too', 'two', 'three', 'usually', 'we', 'when', 'with', 'you', 'you’re', 'you’ve', 'you’d', 'you’ll', 'your',
]);

function objectionSentence(topic: ObjectionTopic, pilot: boolean): string {
  switch (topic) {
    case 'price':
      return pilot
        ? 'On cost: a pilot lets you judge the results before committing to anything larger.'
        : 'On cost: we can keep the first step small, so you can judge the value before committing to more.';
    case 'security':
      return 'On security, I’m happy to get our answers to your team early, so the review doesn’t hold anything up.';
    case 'timing':
      return 'I know the timing is tight, so I’ll keep the effort on your side to a minimum.';
    case 'incumbent':
      return 'I know you already have something in place; nothing would need to be replaced on day one.';
    case 'effort':
      return 'I’m happy to walk through exactly what setting this up would involve for your team.';
    case 'authority':
      return 'If it helps, I’m glad to join a call with anyone else who should weigh in.';
  }
}

/** Why the concern is worth solving, said without repeating it and without a claim about their company. */
const WORTH_SOLVING: Record<PainKind, string> = {
  time: 'That’s time your team could spend on more valuable work, and it’s the first thing I’d want to give back.',
  manual: 'Nobody should have to do that by hand, and it’s the first thing I’d want to take off your team’s plate.',
  errors: 'Getting that right at the source would save a lot of rework further down the line.',
  morale: 'That kind of grind wears a team down, and it’s the part I’d most like to take away.',
  cost: 'That adds up quickly, so it’s worth seeing what a better setup would save.',
  visibility: 'It’s hard to plan well without that view, so it’s the first thing I’d want to fix.',
  slow: 'Speeding that up is where I think we could help most.',
  other: 'That’s where I think we could help most.',
};

// Built once: toLocaleDateString with options builds a formatter at every call.
const DAY_AND_MONTH = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', timeZone: 'UTC' });

function callDate(occurredAt: Date | null): string {
  if (!occurredAt || Number.isNaN(occurredAt.getTime())) return '';
  return ` on ${DAY_AND_MONTH.format(occurredAt)}`;
}

const CONTRACTIONS: Array<[RegExp, string]> = [
  [/\bI’m\b|\bI'm\b/g, 'I am'],
  [/\bI’d\b|\bI'd\b/g, 'I would'],
  [/\bI’ll\b|\bI'll\b/g, 'I will'],
  [/\bI’ve\b|\bI've\b/g, 'I have'],
  [/\byou’re\b|\byou're\b/gi, 'you are'],
  [/\byou’ve\b|\byou've\b/gi, 'you have'],
  [/\byou’ll\b|\byou'll\b/gi, 'you will'],
  [/\byou’d\b|\byou'd\b/gi, 'you would'],
  [/\bdoesn’t\b|\bdoesn't\b/gi, 'does not'],
  [/\bdon’t\b|\bdon't\b/gi, 'do not'],
  [/\bwon’t\b|\bwon't\b/gi, 'will not'],
  [/\bcan’t\b|\bcan't\b/gi, 'cannot'],
  [/\bit’s\b|\bit's\b/gi, 'it is'],
  [/\bthat’s\b|\bthat's\b/gi, 'that is'],
  [/\bthere’s\b|\bthere's\b/gi, 'there is'],
  [/\blet’s\b|\blet's\b/gi, 'let us'],
  [/\bwe’re\b|\bwe're\b/gi, 'we are'],
  [/\bwe’ll\b|\bwe'll\b/gi, 'we will'],
];

/** Expands contractions in the writer's own words; quoted words (“…” or "…") stay as they were said. */
function formalise(text: string): string {
  const expand = (part: string): string =>
    CONTRACTIONS.reduce(
      (t, [pattern, full]) => t.replace(pattern, (found) => (/^[A-Z]/.test(found) ? sentenceCase(full) : full)),
      part,
    );
  // A loop rather than `/(“[^”]*”|"[^"]*")/`, which reads to the end again from every quote that is never closed.
  let result = '';
  let from = 0;
  const unclosed = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    const close = text[i] === '“' ? '”' : text[i] === '"' ? '"' : null;
    if (close === null || unclosed.has(close)) continue;
    const end = text.indexOf(close, i + 1);
    if (end < 0) {
      unclosed.add(close);
      continue;
    }
    result += expand(text.slice(from, i)) + text.slice(i, end + 1);
    from = end + 1;
    i = end;
  }
  return result + expand(text.slice(from));
}

function subjectLine(company: string, concern: Concern, style: Style, variant: number): string {
  const fit = (make: (c: string) => string): string | null => {
    const words = concern.phrase.split(' ');
    for (let n = words.length; n >= Math.min(2, words.length); n--) {
      const candidate = make(firstWords(words.slice(0, n).join(' '), n) || words.slice(0, n).join(' '));
      if (candidate.length <= 80) return candidate;
    }
    return null;
  };
  const shortCompany = company.length > 40 ? `${company.slice(0, 39).trimEnd()}…` : company;
  if (variant === 2 && !style.formal) return `${shortCompany}: next steps after our call`.slice(0, 80);
  const make = style.short
    ? (c: string) => `${shortCompany}: ${c}`
    : style.formal
      ? (c: string) => `Follow-up to our call: ${c} at ${shortCompany}`
      : variant === 1 || style.casual
        ? (c: string) => `${shortCompany}: about ${c}`
        : (c: string) => `Following up: ${c} at ${shortCompany}`;
  if (concern.phrase === KIND_PHRASES.other) return `${shortCompany}: following up on our call`.slice(0, 80);
  return fit(make) ?? fit((c) => `${shortCompany}: ${c}`) ?? `Following up with ${shortCompany}`.slice(0, 80);
}

/** How many wordings and layouts there are; regenerations without feedback go round them. */
const VARIANTS = 3;

function writeDraft(ctx: WriteContext): WriterOutput {
  const style = readFeedback(ctx.feedback);
  const previous = ctx.previousDraft ?? null;
  // Without feedback, a new version takes the next wording; with it, the first one changed as asked.
  const start = previous && !ctx.feedback?.trim() ? previous.version % VARIANTS : style.variant;
  const unchanged = ctx.feedback?.trim() && !previous ? composeDraft(ctx, PLAIN_STYLE) : null;
  let draft = composeDraft(ctx, { ...style, variant: start });
  // A request that changed nothing ("leave out the pricing" when there was none), or a version that came out as
  // the one it replaces, still deserves a new draft: the next wording.
  for (let i = 1; i < VARIANTS; i++) {
    const same = (previous && draft.body === previous.body) || (unchanged && draft.body === unchanged.body && draft.subject === unchanged.subject);
    if (!same) break;
    draft = composeDraft(ctx, { ...style, variant: start + i });
  }
  return draft;
}

/** A paragraph: sentences in a row, or a list of items under a head. */
interface Block {
  head: string | null;
  items: string[];
  list: boolean;
}

const text = (...items: string[]): Block => ({ head: null, items: items.filter(Boolean), list: false });

/** Words as a reader counts them: runs between spaces with a letter or digit in them ("-" of a list is none). */
export function wordCount(body: string): number {
  let count = 0;
  for (const token of body.split(/\s+/)) if (/[\p{L}\p{N}]/u.test(token)) count++;
  return count;
}

/**
 * The draft, at the leanest level that fits the word limit: each level leaves out more (the research fact and the
 * objections, then most of the recap, then the promises), and past the last the body is cut at a word.
 */
function composeDraft(ctx: WriteContext, style: Style): WriterOutput {
  const first = style.long ? -1 : style.short ? 1 : 0;
  let draft = composeAt(ctx, style, first);
  if (style.wordLimit === null) return draft;
  for (let lean = Math.max(first, 1); wordCount(draft.body) > style.wordLimit && lean <= 4; lean++) draft = composeAt(ctx, style, lean);
  if (wordCount(draft.body) > style.wordLimit) draft = { ...draft, body: cutToWords(draft.body, style.wordLimit) };
  return draft;
}

/** The body cut to `limit` words, keeping its signature when there is room for it. */
function cutToWords(body: string, limit: number): string {
  const parts = body.split('\n\n');
  const signature = parts.length > 1 ? parts.at(-1)! : '';
  const room = limit - wordCount(signature);
  const take = (text: string, n: number): string => {
    let kept = 0;
    const out: string[] = [];
    for (const token of text.split(/(\s+)/)) {
      if (/[\p{L}\p{N}]/u.test(token)) {
        if (kept >= n) break;
        kept++;
      }
      out.push(token);
    }
    return out.join('').trimEnd();
  };
  if (room < 2 || !signature) return take(body, limit);
  return `${trimEndOf(take(parts.slice(0, -1).join('\n\n'), room), /[,;:\s]/)}\n\n${signature}`;
}

/** What the e-mail leads with: the strongest pain, or another concern when asked for another angle or a focus. */
function leadSentence(ctx: WriteContext, style: Style, facts: KeyFacts): { text: string; kind: 'pain' | 'objection' | 'said' } | null {
  const { painPoints, objections } = ctx.analysis;
  if (style.focus) {
    const keys = keywords(style.focus);
    const found = keys.length > 0
      ? [...painPoints, ...facts.budgetAndTiming, ...objections, ...facts.figures.map((f) => f.about)].find((s) => hasAll(s, keys))
      : undefined;
    if (found) return { text: found, kind: objections.includes(found) && !painPoints.includes(found) ? 'objection' : 'pain' };
  }
  if (style.angle || style.variant % VARIANTS === 2) {
    // Another of the prospect's pains; else what they said about budget and timing.
    const pain = painPoints.slice(1).find((p) => kindOf(p) !== 'other');
    if (pain) return { text: pain, kind: 'pain' };
    const said = facts.budgetAndTiming.find((s) => s !== painPoints[0]);
    if (said) return { text: said, kind: 'said' };
  }
  if (painPoints[0]) return { text: painPoints[0], kind: 'pain' };
  if (objections[0]) return { text: objections[0], kind: 'objection' };
  return null;
}

const STOP_WORDS = new Set(['the', 'our', 'your', 'their', 'and', 'about', 'that', 'this', 'with', 'for', 'from', 'into', 'more', 'please', 'also', 'too', 'them', 'its', 'any']);

/** The words of a reviewer's request that a sentence must contain to be about it. */
function keywords(request: string): string[] {
  return [...new Set(request.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3 && !STOP_WORDS.has(w)))].slice(0, 6);
}

function hasAll(sentence: string, keys: string[]): boolean {
  const words = new Set(sentence.toLowerCase().split(/[^\p{L}\p{N}]+/u));
  return keys.every((k) => words.has(k) || words.has(`${k}s`) || (k.endsWith('s') && words.has(k.slice(0, -1))));
}

/** The facts of the call, from ANALYSIS; an output stored before facts were read has them found again here. */
function factsOf(ctx: WriteContext, spoken: Utterance[]): KeyFacts {
  return ctx.analysis.facts ?? readFacts(spoken);
}

function composeAt(ctx: WriteContext, style: Style, lean: number): WriterOutput {
  const company = companyOf(ctx);
  const firstName = firstNameOf(ctx.lead.name);
  const spoken = utterances(ctx);
  const facts = factsOf(ctx, spoken);
  const pilot = mentionsPilot(ctx);
  const variant = style.variant % VARIANTS;
  const lead = leadSentence(ctx, style, facts);
  const concern = lead?.kind === 'pain' ? concernOf(lead.text) : mainConcern(ctx.analysis);

  const greeting = style.formal
    ? `Dear ${ctx.lead.name.trim() || 'Sir or Madam'},`
    : `${style.casual ? 'Hey' : 'Hi'} ${firstName ?? 'there'},`;

  const date = callDate(ctx.call.occurredAt);
  const opening = style.formal
    ? `Thank you for taking the time to speak with me${date}.`
    : variant === 1
      ? `I’ve been thinking some more about our conversation${date}.`
      : variant === 2
        ? `Here is a short recap of our call${date}, and of what happens next.`
        : lean >= 1
          ? `Thanks for the call${date}.`
          : `Thanks again for your time on our call${date}.`;

  const concernItems: string[] = [];
  if (lead?.kind === 'pain') {
    const reworded = inSecondPerson(lead.text, firstName);
    const mentionsCompany = lead.text.toLowerCase().includes(company.toLowerCase());
    concernItems.push(
      reworded
        ? `You mentioned that ${mentionsCompany ? '' : `at ${company}, `}${reworded}.`
        : `When we spoke about ${company}, you put it this way: “${lead.text}”`,
    );
    if (lean < 1) concernItems.push(WORTH_SOLVING[concern.kind]);
    const second = ctx.analysis.painPoints.find((p) => p !== lead.text);
    if (lean < 0 && second) {
      const reworded2 = inSecondPerson(second, firstName);
      if (reworded2) concernItems.push(`You also said that ${reworded2}.`);
    }
  } else if (lead?.kind === 'said') {
    const reworded = inSecondPerson(lead.text, firstName);
    concernItems.push(reworded ? `You mentioned that ${reworded}.` : `When we spoke about ${company}, you put it this way: “${lead.text}”`);
  } else if (lead?.kind === 'objection') {
    const reworded = inSecondPerson(lead.text, firstName);
    concernItems.push(
      reworded
        ? `You were clear that ${reworded}.`
        : `I appreciated your candour about where ${company} stands: “${lead.text}”`,
    );
    if (reworded) concernItems.push(`I appreciate the candour about where ${company} stands.`);
  } else {
    concernItems.push(`It was good to hear how things work at ${company}.`);
  }

  // The recap: what the prospect's side said that carries the call's facts, in their order, in the second person;
  // a list while there is room, a sentence when the draft must be short.
  const recapMax = lean < 0 ? 8 : lean === 0 ? 6 : lean === 1 ? 3 : lean === 2 ? 2 : lean === 3 ? 1 : 0;
  const recap = recapMax === 0 ? [] : recapOf(spoken, facts, lead?.text ?? null, firstName, recapMax);
  const recapBlock: Block | null = recap.length === 0
    ? null
    : variant === 1 || lean >= 2
      ? text(`${lean >= 2 ? 'I also noted that' : 'From our conversation, I noted that'} ${joinClauses(recap.map((r) => lowerUnlessName(trimEndOf(r, /[.!…]/), facts)))}.`)
      : { head: style.formal ? 'A few points I noted from our conversation:' : 'A few things I noted:', items: recap.map((r) => sentenceCase(ensureStop(r))), list: true };

  const researchFacts = lean >= 1 ? [] : relevantFacts(ctx.research.facts, ctx.analysis, lean < 0 ? 2 : 1);
  const factBlock = text(...researchFacts.map((fact, i) => factSentence(fact, style.formal, i > 0)));

  const topics = [...new Set(ctx.analysis.objections.flatMap(objectionTopics))];
  const objectionBlock = text(...(lean >= 1 ? [] : topics.slice(0, 2).map((t) => objectionSentence(t, pilot))));

  // Every promise the rep made, delivered on: said again with what it is, so the reader knows what follows.
  const promises = commitmentsOf(ctx, facts).slice(0, lean >= 4 ? 0 : lean === 3 ? 1 : 8);
  const promiseBlock: Block | null = promises.length === 0
    ? null
    : promises.length === 1 || lean >= 2
      ? text(`As promised, ${joinPromises(promises.map((p) => trimEndOf(p, /[.!…]/)))}.`)
      : { head: 'As promised, here is what follows from my side:', items: promises.map((p) => ensureStop(p)), list: true };

  const ctaSentences = splitSpoken(ensureStop(ctx.strategy.callToAction));
  const ctaBlock = text(...(lean >= 2 ? ctaSentences.slice(0, 1) : ctaSentences));

  const blocks: Array<Block | null> = variant === 2
    ? [text(opening), promiseBlock, text(...concernItems), recapBlock, factBlock, objectionBlock, ctaBlock]
    : [text(opening), text(...concernItems), recapBlock, factBlock, objectionBlock, promiseBlock, ctaBlock];
  let kept = omitFrom(blocks.filter((b): b is Block => b !== null && b.items.length > 0), style.omissions);

  const mentionItems = style.mentions.flatMap((m) => mentionOf(m, render(kept), spoken, ctx, firstName, style.formal));
  // Asked for by the reviewer: early, where a word limit's cut does not reach.
  if (mentionItems.length > 0) kept.splice(Math.min(2, kept.length), 0, text(...mentionItems));
  kept = kept.filter((b) => b.items.length > 0);

  let paragraphs = kept.map(renderBlock);
  if (style.formal) paragraphs = paragraphs.map(formalise);

  const body = [greeting, ...paragraphs, signOff(ctx, style)].join('\n\n').slice(0, 5000);
  let subject = subjectLine(company, concern, style, variant === 0 && (style.angle || style.focus) ? 1 : variant);
  if (omitFrom([text(subject)], style.omissions).length === 0) subject = `Following up with ${company}`.slice(0, 80);
  // The company's name is the lead's, as anyone typed or imported it; the subject goes into a header: one line.
  return { engine: 'offline', subject: toOneLine(subject) || 'Following up', body };
}

function render(blocks: Block[]): string {
  return blocks.map(renderBlock).join('\n\n');
}

function renderBlock(block: Block): string {
  if (!block.list) return block.items.join(' ');
  return [block.head, ...block.items.map((item) => `- ${item}`)].filter(Boolean).join('\n');
}

/** "a, b and c": clauses joined as one sentence reads them. */
function joinClauses(clauses: string[]): string {
  if (clauses.length <= 1) return clauses.join('');
  return `${clauses.slice(0, -1).join('; ')}; and ${clauses.at(-1)}`;
}

/** A clause to go mid-sentence: its first word lower-cased unless it names someone or something ("Daniel", "SAP"). */
function lowerUnlessName(clause: string, facts: KeyFacts): string {
  const word = clause.split(/[\s,;:]/)[0] ?? '';
  const named = /^I\b|^I’|\p{Lu}.*\p{Lu}/u.test(word) || facts.people.some((p) => p.name.split(' ')[0] === word) || facts.tools.includes(word);
  return named ? clause : clause.charAt(0).toLowerCase() + clause.slice(1);
}

/** "I’ll send X, I’ll book Y and I’ll share Z" → "I’ll send X, book Y and share Z". */
function joinPromises(promises: string[]): string {
  const rest = promises.slice(1).map((p) => p.replace(/^I’ll /, ''));
  const all = [promises[0]!, ...rest];
  return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(', ')} and ${all.at(-1)}`;
}

/** The sentences of the prospect's side that carry the most facts, at most `max`, in the order they were said. */
function recapOf(spoken: Utterance[], facts: KeyFacts, lead: string | null, firstName: string | null, max: number): string[] {
  const candidates: Array<{ text: string; weight: number; position: number }> = [];
  const seen = new Set<string>();
  for (const u of spoken) {
    // A request ("Please copy Daniel on it") was asked of the rep: the promises answer it, the recap does not.
    if (u.role === 'rep' || u.text.endsWith('?') || u.text === lead || seen.has(u.text) || REQUEST_START.test(u.text)) continue;
    // In notes, the rep's own promises and the heading of the notes are no part of what the prospect said.
    if (u.role === 'note' && (isPromise(u.text) || NOTES_HEADING.test(u.text))) continue;
    seen.add(u.text);
    const weight = factWeight(u.text, facts);
    if (weight === 0) continue;
    const reworded = inSecondPerson(u.text, firstName);
    if (reworded) candidates.push({ text: reworded, weight, position: u.position });
    // A transcript of thousands of such sentences: a draft keeps a few, so the candidates need not grow past a bound.
    if (candidates.length >= 200) break;
  }
  return candidates
    .sort((a, b) => b.weight - a.weight || a.position - b.position)
    .slice(0, max)
    .sort((a, b) => a.position - b.position)
    .map((c) => c.text);
}

const NOTES_HEADING = /^(?:call|meeting|notes?|chat|discovery call|demo)\s(?:with|on|from)\b/i;
const REQUEST_START = /^(?:please|let['’]s|can|could|would|will|send|copy|thanks|thank)\b/i;

/** The rep's promises: from the facts of the call, or, for an output without them, the next steps the rep said. */
function commitmentsOf(ctx: WriteContext, facts: KeyFacts): string[] {
  if (facts.commitments.length > 0) return facts.commitments;
  return ctx.analysis.nextSteps.flatMap((s) => promisesIn(s));
}

/**
 * What the draft says for "mention X": nothing when the draft already does; the call's or the website's own words
 * about X when they have some; nothing at all when neither does, so the draft claims nothing it cannot back.
 */
function mentionOf(request: string, body: string, spoken: Utterance[], ctx: WriteContext, firstName: string | null, formal: boolean): string[] {
  const keys = keywords(request);
  if (keys.length === 0 || hasAll(body, keys)) return [];
  const said = spoken.find((u) => hasAll(u.text, keys));
  if (said?.role === 'rep') return [`As I said on the call: ${lowerFirst(ensureStop(said.text))}`];
  if (said) {
    const reworded = inSecondPerson(said.text, firstName);
    return [reworded ? `You also mentioned that ${reworded}.` : `You also said: “${said.text}”`];
  }
  const fact = ctx.research.facts.find((f) => f.text.length <= 220 && hasAll(f.text, keys));
  return fact ? [factSentence(fact, formal, false)] : [];
}

/** The closing and who signs, as every engine signs (src/agent/sign-off.ts); the style picks the closing word. */
function signOff(ctx: WriteContext, style: Style): string {
  const closing = style.formal ? 'Kind regards,' : style.casual ? 'Cheers,' : 'Best regards,';
  return standardSignOff(ctx.sender ?? { name: ctx.senderName, signature: null }, { closing });
}

function ensureStop(text: string): string {
  const trimmed = text.trim();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** Drops every sentence and list item that names something the reviewer asked to leave out. */
function omitFrom(blocks: Block[], omissions: string[]): Block[] {
  if (omissions.length === 0) return blocks;
  const terms = omissions.flatMap((o) =>
    o
      .replace(/^(the|a|an|any|our|their|your)\s+/i, '')
      .split(/(?<!\s)\s+(?:and|or)\s+|,\s*/)
      .map((t) => t.trim())
      .filter((t) => t.length >= 3)
      .map((t) => new RegExp(String.raw`\b${escapeRegExp(t)}`, 'i')),
  );
  return blocks
    .map((block) => ({
      ...block,
      items: block.list
        ? block.items.filter((item) => !terms.some((term) => term.test(item)))
        : block.items.flatMap((item) => splitSpoken(item)).filter((sentence) => !terms.some((term) => term.test(sentence))),
    }))
    .filter((block) => block.items.length > 0);
}

// Qualitative claims in a draft: sentences that assert the buyer's state, feelings, priorities, urgency or situation
// ("I know the timing is tight", "your team is stretched") or what was said or agreed on the call ("as we agreed",
// "you asked for …"). Such a claim is supported when one sentence of what backs it shares enough of its content
// words, stemmed, with common synonyms taken as the same word (tight, urgent, deadline; stretched, busy).
//
// The draft, the transcript and a model's answers are a stranger's text (DESIGN §10): every pattern here reads a
// bounded piece of a sentence once, with no nested repetition; the backing text is indexed once, each index entry
// holds a bounded number of sentences, and a draft has a bounded number of claims checked, so the work stays
// linear in the draft and the call.
import type { RunContext } from './engine.ts';
import { type People, readTranscript, type Transcript } from './transcript/index.ts';

/** What backs a claim: the buyer's side for what they feel or said, the whole call for what both sides agreed. */
export type ClaimKind = 'buyer' | 'said';

export interface QualitativeClaim {
  kind: ClaimKind;
  /** The clause as written in the draft. */
  text: string;
  /**
   * What the claim asserts, compared with what backs it: the clause from its subject or from what follows "I know"
   * ("you're busy" in "I'll keep this short since I know you're busy"), in lower case.
   */
  content: string;
}

/** A sentence longer than this is no e-mail's: only its start is read for a claim. */
const CLAIM_READ_MAX = 600;
/** A claim's distinct content words that are compared; a sentence needs no more to be recognised. */
const CLAIM_WORDS_MAX = 24;
/** How many backing sentences one word or synonym group points to: the cap keeps a hostile call's index linear. */
const POSTINGS_MAX = 512;
/** How many claims of one draft are checked: a real e-mail has a few, and the rest of a hostile one is not read. */
export const CLAIMS_CHECKED_MAX = 200;
/** How far before a state word its subject ("you", "the timing", "I") is looked for. */
const SUBJECT_WINDOW = 8;

const WORD = /[\p{L}\p{N}]+(?:['.&-][\p{L}\p{N}]+)*/gu;

function normalise(text: string): string {
  return text.normalize('NFC').replace(/[’‘`´]/g, "'").replace(/[\u00a0\u202f\u2009]/g, ' ');
}

/** The words of a text in lower case, apostrophes made straight: "Kestrel's", "300-person", "you're". */
export function wordsOf(text: string): string[] {
  return (normalise(text).toLowerCase().match(WORD) ?? []);
}

// ===============================================================================================================
// Words: stems and synonyms

const SUFFIXES = [
  'ations', 'ation', 'ments', 'ment', 'ness', 'ingly', 'ings', 'ing', 'edly', 'ed', 'ers', 'er', 'ly', 'es', 'al',
];

/**
 * A word's stem, the same for its common inflections: "excited", "excitement" and "exciting" → "excit"; "priorities"
 * and "priority" → "prioriti". Crude, but applied alike to the draft and to what backs it.
 */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '').replace(/'/g, '');
  if (w.length <= 3 || /\d/.test(w)) return w;
  let stripped = false;
  for (const suffix of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length);
      stripped = true;
      break;
    }
  }
  if (!stripped && w.endsWith('s') && !/(?:ss|us|is)$/.test(w) && w.length > 3) w = w.slice(0, -1);
  if (w.length > 3) w = w.replace(/e$/, '').replace(/(?<=[^aeiou])y$/, 'i');
  // "stopped" → "stopp" → "stop"; "planned" → "plan".
  if (w.length > 4 && /([bdfgklmnprt])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/**
 * Words a buyer's state is told in, by what they mean. A state word ties a sentence to the buyer when its subject is
 * the buyer; one of its group must be in the sentence that backs it.
 */
const STATES: Record<string, string[]> = {
  urgent: [
    'tight', 'urgent', 'urgency', 'urgently', 'deadline', 'deadlines', 'asap', 'pressing', 'pressure', 'pressured',
    'rush', 'rushed', 'hurry', 'crunch', 'time-sensitive', 'ticking',
  ],
  busy: [
    'stretched', 'busy', 'overloaded', 'overwhelmed', 'swamped', 'slammed', 'exhausted', 'burned', 'burnt', 'burnout',
    'underwater', 'overworked', 'understaffed', 'short-staffed', 'stressed', 'stress', 'tired', 'hectic', 'drowning',
    'buried', 'overstretched',
  ],
  keen: [
    'excited', 'excitement', 'exciting', 'keen', 'interested', 'enthusiastic', 'eager', 'thrilled', 'loved',
    'impressed', 'curious', 'liked', 'happy', 'glad', 'pleased', 'positive',
  ],
  priority: [
    'priority', 'priorities', 'prioritise', 'prioritize', 'important', 'importance', 'critical', 'crucial', 'essential',
    'matters', 'must-have',
  ],
  approved: [
    'approved', 'approval', 'signed', 'greenlit', 'green-lit', 'allocated', 'funded', 'ring-fenced', 'sign-off',
  ],
  frustrated: [
    'frustrated', 'frustrating', 'frustration', 'annoyed', 'painful', 'pain', 'nightmare', 'struggle', 'struggling',
    'headache', 'tedious', 'mess', 'messy', 'broken', 'hate', 'slow', 'difficult', 'hard', 'challenging',
  ],
  worried: [
    'worried', 'worry', 'worries', 'concern', 'concerned', 'concerns', 'nervous', 'anxious', 'hesitant', 'unsure',
    'wary', 'sceptical', 'skeptical', 'cautious', 'risk', 'risky', 'afraid', 'fear', 'doubt', 'doubts', 'hesitation',
    'objection', 'objections',
  ],
  ready: ['ready', 'decided', 'convinced'],
  growing: ['growing', 'growth', 'scaling', 'expanding', 'expansion', 'hiring'],
};

/**
 * Words that mean the same as others for matching only: they do not make a sentence a claim, being as often about
 * what we do ("I'll send it quickly", "so your team can focus") as about the buyer.
 */
const RELATED: Record<string, string[]> = {
  urgent: ['quickly', 'quick', 'fast', 'immediately'],
  busy: ['capacity', 'bandwidth', 'thin', 'workload'],
  keen: ['interest', 'open', 'love'],
  priority: ['top', 'focus', 'focused'],
  approved: ['secured', 'sign', 'signoff'],
  worried: ['question', 'questions', 'issue', 'issues'],
  time: [
    'timing', 'timeline', 'timelines', 'time', 'schedule', 'deadline', 'deadlines', 'window', 'date', 'dates', 'when',
  ],
  money: ['budget', 'budgets', 'funding', 'money', 'spend', 'cost', 'costs', 'price', 'pricing', 'expensive', 'afford'],
  team: ['team', 'teams', 'staff', 'people', 'reps', 'colleagues', 'department', 'crew'],
  ask: ['asked', 'request', 'requested', 'want', 'wanted', 'need', 'needed', 'like'],
};

/** A stem's synonym groups, as keys that cannot be a word: "@urgent". */
const GROUPS = new Map<string, string[]>();
/** The stems of the state words. */
const STATE_STEMS = new Set<string>();
for (const [table, state] of [[STATES, true], [RELATED, false]] as const) {
  for (const [group, words] of Object.entries(table)) {
    for (const word of words) {
      const key = stem(word);
      if (state) STATE_STEMS.add(key);
      const groups = GROUPS.get(key) ?? [];
      groups.push(`@${group}`);
      GROUPS.set(key, groups);
    }
  }
}

/** What a word is matched by: its stem and its synonym groups ("tight" → "tight", "@urgent"). */
export function keysOf(word: string): string[] {
  const key = stem(word);
  return [key, ...(GROUPS.get(key) ?? [])];
}

/** Words that carry no content of their own: function words, the verbs of saying, courtesy. */
const STOP = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'so', 'if', 'then', 'than', 'that', 'this', 'these', 'those', 'it', "it's",
  'its', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'do', 'does', 'did', 'done', 'have', 'has', 'had',
  'having', 'will', 'would', 'shall', 'should', 'can', 'could', 'may', 'might', 'must', 'to', 'of', 'in', 'on', 'at',
  'by', 'for', 'with', 'about', 'from', 'into', 'onto', 'up', 'down', 'out', 'over', 'under', 'again', 'also', 'just',
  'only', 'very', 'really', 'quite', 'bit', 'little', 'lot', 'lots', 'much', 'many', 'more', 'most', 'some', 'any',
  'all', 'both', 'each', 'every', 'no', 'not', "n't", 'yes', 'as', 'how', 'what', 'which', 'who', 'whom', 'whose',
  'why', 'where', 'there', 'here', 'now', 'still', 'even', 'well', 'too', 'because', 'since', 'while', 'i', "i'm",
  "i've", "i'd", "i'll", 'me', 'my', 'mine', 'myself', 'we', "we're", "we've", "we'd", "we'll", 'us', 'our', 'ours',
  'you', "you're", "you've", "you'd", "you'll", 'your', 'yours', 'yourself', 'they', "they're", "they've", "they'd",
  "they'll", 'them', 'their', 'theirs', 'he', 'she', 'him', 'her', 'his', 'hers', "that's", "there's", "what's",
  "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "won't", "can't", "couldn't", "wouldn't",
  "shouldn't", "haven't", "hasn't", 'know', 'knew', 'understand', 'understood', 'realise', 'realize', 'appreciate',
  'gather', 'sense', 'recognise', 'recognize', 'aware', 'mentioned', 'mention', 'said', 'say', 'says', 'told', 'tell',
  'noted', 'shared', 'explained', 'raised', 'described', 'highlighted', 'pointed', 'flagged', 'brought', 'stressed',
  'emphasised', 'emphasized', 'confirmed', 'agreed', 'agree', 'discussed', 'discuss', 'expressed', 'seem', 'seems',
  'seemed', 'sound', 'sounds', 'sounded', 'feel', 'feels', 'felt', 'feeling', 'get', 'got', 'getting', 'make', 'made',
  'call', 'chat', 'conversation', 'thanks', 'thank', 'great', 'good', 'nice', 'hi', 'hello', 'dear', 'clearly',
  'definitely', 'certainly', 'obviously', 'already', 'right', 'currently', 'today', 'earlier',
]);

/** Whether a word carries no content of its own. */
export function isStopWord(word: string): boolean {
  return STOP.has(word);
}

// ===============================================================================================================
// Finding the claims in a draft

const OURS = new Set([
  'i', "i'm", "i've", "i'd", "i'll", 'me', 'my', 'myself', 'we', "we're", "we've", "we'd", "we'll", 'us', 'our', 'ours',
  'ourselves',
]);
const BUYER = new Set([
  'you', "you're", "you've", "you'd", "you'll", 'your', 'yours', 'yourself', 'they', "they're", "they've", 'their',
  'them',
]);
/** Nouns that, unless "our" or "my" stands before them, are the buyer's: "the timing", "your team", "budget". */
const BUYER_NOUNS = new Set([
  'timing', 'timeline', 'timelines', 'deadline', 'deadlines', 'schedule', 'things', 'budget', 'team', 'teams', 'reps',
  'staff', 'people', 'department', 'leadership', 'board', 'boss', 'everyone', 'company', 'business', 'quarter', 'week',
  'month', 'year',
]);
const POINTERS = new Set(['it', "it's", 'this', 'that', "that's", 'this is', 'these', 'those']);
/** Words before a subject that make what follows a wish, a question or a condition, not an assertion. */
const HYPOTHETICAL = new Set([
  'if', 'whether', 'unless', 'when', 'once', 'case', 'hope', 'hoping', 'wonder', 'wondering', 'should', 'whenever',
]);

/** "I know", "I understand", "I appreciate that": what follows is asserted as known. */
const KNOWING = new RegExp(
  String.raw`\b(?:i|we)(?: (?:fully|totally|completely|really|do))? ` +
    String.raw`(?:know|understand|realise|realize|appreciate|gather|sense|recognise|recognize` +
    String.raw`|can tell|can see|hear)\b` +
    String.raw`|\bi'm aware\b`,
);
const KNOWING_HOW = /\b(?:know|understand|appreciate|realise|realize) (?:just |all too well |only too well )?how\b/;
/** What the buyer said, asked or felt on the call, reported: "you mentioned", "as you said", "you asked for". */
const BUYER_SAID = new RegExp(
  String.raw`\b(?:you|your (?:team|colleagues?|boss|manager|cfo|ceo|cto|coo|cio))` +
    String.raw`(?: (?:also|clearly|specifically|rightly|both))? ` +
    String.raw`(?:mentioned|said|told (?:me|us)|noted|shared|explained|raised|described|highlighted|pointed out` +
    String.raw`|flagged|brought up|stressed|emphasi[sz]ed|asked|requested|expressed|made it clear|were clear` +
    String.raw`|let (?:me|us) know)\b|\bas you (?:said|mentioned|noted|put it|explained|described)\b`,
);
/** What both sides said or agreed: "as we agreed", "as discussed", "we agreed", "as I mentioned", "you agreed". */
const BOTH_SAID = new RegExp(
  String.raw`\bas (?:we|i) (?:agreed|discussed|said|mentioned|noted|decided)\b` +
    String.raw`|\bas (?:agreed|discussed|requested)\b` +
    String.raw`|\b(?:we|you) (?:both )?(?:agreed|decided|settled on|discussed)\b` +
    String.raw`|\bper our (?:call|conversation|discussion|agreement)\b`,
);

const KNOWING_VERBS = new Set([
  'know', 'understand', 'realise', 'realize', 'appreciate', 'gather', 'sense', 'recognise', 'recognize', 'hear', 'can',
  'fully', 'totally', 'completely', 'really', 'do',
]);

/** Words after which "you" or "them" is an object ("send you", "to you"), not who the sentence is about. */
const OBJECT_AFTER = new Set([
  'to', 'for', 'with', 'from', 'of', 'about', 'send', 'show', 'give', 'help', 'let', 'get', 'keep', 'thank', 'thanks',
  'see', 'meet', 'join', 'ask', 'tell', 'remind', 'walk', 'take', 'bring', 'offer', 'owe', 'support', 'update', 'reach',
  'call', 'email', 'e-mail', 'lets', 'letting', 'allow', 'allows', 'enable', 'enables', 'gives', 'helps', 'shows',
  'sends', 'saves', 'save', 'spare', 'spares', 'free', 'frees', 'by', 'than', 'like',
]);

/** Who a state word is about, found among the words before it, and where that word is. */
function subjectOf(words: string[], at: number): { kind: 'ours' | 'buyer' | 'pointer'; at: number } | null {
  for (let i = at - 1; i >= 0 && i >= at - SUBJECT_WINDOW; i--) {
    const word = words[i]!.replace(/'s$/, '');
    // "I know cost is a concern": the one who knows is not the one the state is about.
    if ((word === 'i' || word === 'we') && KNOWING_VERBS.has(words[i + 1] ?? '')) return null;
    if (OURS.has(word)) return { kind: 'ours', at: i };
    if ((word === 'you' || word === 'them') && i > 0 && OBJECT_AFTER.has(words[i - 1]!)) continue;
    if (BUYER.has(word)) return hypothetical(words, i) ? null : { kind: 'buyer', at: i };
    if (BUYER_NOUNS.has(word)) {
      const before = words[i - 1];
      if (before !== undefined && OURS.has(before)) return { kind: 'ours', at: i - 1 };
      // "your team", "the timing": what is asserted starts with the word that owns the noun.
      if (hypothetical(words, i)) return null;
      return { kind: 'buyer', at: before !== undefined && BUYER.has(before) ? i - 1 : i };
    }
    if (POINTERS.has(word)) return { kind: 'pointer', at: i };
  }
  return null;
}

/** Whether a wish, a question or a condition comes before the subject in its clause: "hope the rest of your week". */
function hypothetical(words: string[], at: number): boolean {
  for (let i = at - 1; i >= 0 && i >= at - SUBJECT_WINDOW; i--) if (HYPOTHETICAL.has(words[i]!)) return true;
  return false;
}

/** "… is a priority for you": a pointer's sentence is about the buyer when it says for whom. */
function forWhom(words: string[], at: number): 'ours' | 'buyer' | null {
  for (let i = at + 1; i < words.length && i <= at + 5; i++) {
    if (words[i] !== 'for' && words[i] !== 'to') continue;
    const whom = words[i + 1];
    if (whom !== undefined && BUYER.has(whom)) return 'buyer';
    if (whom !== undefined && OURS.has(whom)) return 'ours';
  }
  return null;
}

/**
 * The kind of claim a sentence makes, or null when it makes none. A question is not a claim, nor a sentence whose
 * state words are about our side ("I'm excited to show you") or about no one ("Happy to help").
 */
export function claimKind(sentence: string): ClaimKind | null {
  const text = normalise(sentence.length > CLAIM_READ_MAX ? sentence.slice(0, CLAIM_READ_MAX) : sentence).toLowerCase();
  return clauseClaim(text)?.kind ?? null;
}

/**
 * The clauses of a sentence that make a claim, each with its kind. A long sentence strings several together ("you
 * tried an agency; you have budget approved"): each is backed, or not, on its own.
 */
export function claimsIn(sentence: string): QualitativeClaim[] {
  const text = sentence.length > CLAIM_READ_MAX ? sentence.slice(0, CLAIM_READ_MAX) : sentence;
  const claims: QualitativeClaim[] = [];
  for (const clause of text.split(CLAUSE_BREAK)) {
    const lower = normalise(clause).toLowerCase();
    const claim = clause.trim() ? clauseClaim(lower) : null;
    if (claim !== null) claims.push({ kind: claim.kind, text: clause.trim(), content: lower.slice(claim.from) });
  }
  return claims;
}

/** Where a sentence's clauses part: a semicolon, a colon, a dash, a bracket, ", and" or ", but". */
const CLAUSE_BREAK = /[;:()\[\]]|\s[—–-]\s|,\s(?=(?:and|but)\s)/;

/** The kind of claim a clause (normalised, in lower case) makes, and where what it asserts starts in it. */
function clauseClaim(text: string): { kind: ClaimKind; from: number } | null {
  if (/\?["')\]]?\s*$/.test(text)) return null;
  if (BOTH_SAID.test(text)) return { kind: 'said', from: 0 };
  const said = BUYER_SAID.exec(text);
  if (said) return { kind: 'buyer', from: said.index };
  // "We know how hard it is to switch tools" says what is true of anyone, not what is true of this buyer.
  const known = KNOWING_HOW.test(text) ? null : KNOWING.exec(text);
  const knowing = known !== null;
  const after = known ? known.index + known[0].length : 0;
  const matches = [...text.matchAll(WORD)];
  const words = matches.map((match) => match[0]);
  for (let i = 0; i < words.length; i++) {
    if (!STATE_STEMS.has(stem(words[i]!))) continue;
    const subject = subjectOf(words, i);
    if (subject !== null && subject.kind === 'buyer') return { kind: 'buyer', from: matches[subject.at]!.index };
    if (subject !== null && subject.kind === 'pointer') {
      const whom = forWhom(words, i);
      if (whom === 'buyer' || (whom === null && knowing)) {
        return { kind: 'buyer', from: knowing ? after : matches[subject.at]!.index };
      }
    } else if (subject === null && knowing) {
      return { kind: 'buyer', from: after };
    }
  }
  return null;
}

/** The words of a claim compared with what backs it: its content words, the state words marked. */
function contentOf(sentence: string, names: Set<string>): Array<{ keys: string[]; state: boolean }> {
  const text = sentence.length > CLAIM_READ_MAX ? sentence.slice(0, CLAIM_READ_MAX) : sentence;
  const seen = new Set<string>();
  const content: Array<{ keys: string[]; state: boolean }> = [];
  for (const word of wordsOf(text)) {
    if (STOP.has(word) || names.has(word) || word.length < 2 || content.length >= CLAIM_WORDS_MAX) continue;
    const key = stem(word);
    if (seen.has(key)) continue;
    seen.add(key);
    content.push({ keys: keysOf(word), state: STATE_STEMS.has(key) });
  }
  return content;
}

// ===============================================================================================================
// What backs a claim

interface BackingIndex {
  /** For each word stem and synonym group, the backing sentences that have it (at most POSTINGS_MAX). */
  postings: Map<string, number[]>;
  size: number;
}

function buildIndex(texts: Iterable<string>): BackingIndex {
  const postings = new Map<string, number[]>();
  let size = 0;
  for (const text of texts) {
    const unit = size++;
    const keys = new Set<string>();
    for (const word of wordsOf(text)) for (const key of keysOf(word)) keys.add(key);
    for (const key of keys) {
      const list = postings.get(key);
      if (!list) postings.set(key, [unit]);
      else if (list.length < POSTINGS_MAX) list.push(unit);
    }
  }
  return { postings, size };
}

/** The last call read: one draft's checks (leaks, copied runs, grounding) read the same call, and read it once. */
let lastRead: { transcript: string; people: string; read: Transcript } | null = null;

/** The run's call as the shared reader (src/agent/transcript/) reads it: each turn with its speaker and side. */
export function readCall(ctx: RunContext): Transcript {
  const people: People = { leadName: ctx.lead.name, senderName: ctx.sender?.name ?? ctx.senderName, leadCompany: ctx.lead.companyName };
  const key = JSON.stringify(people);
  if (lastRead !== null && lastRead.transcript === ctx.call.transcript && lastRead.people === key) return lastRead.read;
  const read = readTranscript(ctx.call.transcript, people);
  lastRead = { transcript: ctx.call.transcript, people: key, read };
  return read;
}

/** The two indexes claims are checked against: what backs a claim about the buyer, and what backs one of agreement. */
export interface ClaimBacking {
  buyer: BackingIndex;
  said: BackingIndex;
  /** The lead's and the sender's names: "Ada, I know …" is not a claim about Ada's name. */
  names: Set<string>;
}

/**
 * What may back a qualitative claim. About the buyer: the buyer's lines of the call (a line of notes, or of a
 * speaker not known to be ours, counts), ANALYSIS's reading of what they said, RESEARCH, and the reviewer's
 * feedback (the reviewer is the salesperson, whose claim it is to make). Of what was said or agreed: the whole call
 * and ANALYSIS's next steps and commitments too. STRATEGY backs nothing: it is itself written from these.
 */
export function claimBacking(ctx: RunContext): ClaimBacking {
  const { utterances } = readCall(ctx);
  const { analysis, research } = ctx;
  const buyerSide: string[] = [
    ...(ctx.feedback ? [ctx.feedback] : []),
    ...(analysis
      ? [
          ...analysis.painPoints, ...analysis.objections, ...analysis.buyingSignals,
          ...(analysis.facts ? [...analysis.facts.figures.map((f) => f.about), ...analysis.facts.budgetAndTiming] : []),
        ]
      : []),
    ...(research
      ? [research.website.title, research.website.description, research.website.summary]
          .filter((t): t is string => typeof t === 'string')
          .concat(research.facts.map((f) => f.text))
      : []),
  ];
  const agreed = analysis ? [...analysis.nextSteps, ...(analysis.facts?.commitments ?? [])] : [];
  function* buyer(): Generator<string> {
    yield* buyerSide;
    // A turn not known to be ours counts as the buyer's, so that an unknown call never flags what its speakers said.
    for (const turn of utterances) if (turn.role !== 'rep') yield turn.text;
  }
  function* said(): Generator<string> {
    yield* buyerSide;
    yield* agreed;
    for (const turn of utterances) yield turn.text;
  }
  const names = new Set(wordsOf(`${ctx.lead.name} ${ctx.sender?.name ?? ''} ${ctx.senderName ?? ''}`));
  return { buyer: buildIndex(buyer()), said: buildIndex(said()), names };
}

/**
 * Whether one backing sentence has at least half of the claim's content words (a stem or a synonym in common), one of
 * its state words when it has some, and one of its other words when it has some: "the timing is tight" is backed by
 * "a hard deadline in March", not by "the timing works for us"; "your CFO is excited" not by "I'm keen".
 */
export function claimSupported(sentence: string, kind: ClaimKind, backing: ClaimBacking): boolean {
  const content = contentOf(sentence, backing.names);
  if (content.length === 0) return true;
  const index = kind === 'said' ? backing.said : backing.buyer;
  const needed = Math.ceil(content.length / 2);
  const hasState = content.some((word) => word.state);
  const hasOther = content.some((word) => !word.state);
  const counts = new Map<number, { all: number; state: number }>();
  for (const word of content) {
    const units = new Set<number>();
    for (const key of word.keys) for (const unit of index.postings.get(key) ?? []) units.add(unit);
    for (const unit of units) {
      const count = counts.get(unit) ?? { all: 0, state: 0 };
      count.all++;
      if (word.state) count.state++;
      counts.set(unit, count);
    }
  }
  for (const { all, state } of counts.values()) {
    if (all >= needed && (!hasState || state > 0) && (!hasOther || all > state)) return true;
  }
  return false;
}

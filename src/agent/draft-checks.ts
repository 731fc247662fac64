// The checks a draft is held to whatever wrote it (DESIGN §12): short enough, every commitment the rep made in it,
// nothing of the transcript's markup leaked into it, nothing pasted from the transcript, and every claim grounded.
// The WRITER step runs them on every draft (a model's draft that fails them is written once more, with the failures
// named as instructions); the offline writer may run them on its own drafts too. They read a stranger's transcript
// and a model's answer: each is read once by patterns without nested repetition, so the work stays linear in them.
import { isStopWord, keysOf, readCall, stem, wordsOf } from './claims.ts';
import type { RunContext } from './engine.ts';
import { checkGrounding, type Draft, type GroundingReport } from './grounding.ts';
import type { Transcript } from './transcript/index.ts';

/** The most words a first follow-up's body may have, greeting and signature not counted. */
export const FIRST_EMAIL_WORDS = 150;
/** A run of this many words in the transcript's order, pronouns swapped or not, is pasted from it. */
export const COPIED_RUN_WORDS = 8;
/** How many of each kind of failure are named: enough to mend a draft, and a hostile one cannot grow the report. */
const NAMED_MAX = 5;

/** The name each failed check starts with, as in `word limit: the body has 212 words; at most 150`. */
export const CHECK_NAMES = {
  wordLimit: 'word limit',
  commitment: 'commitment missing',
  leak: 'leak',
  copied: 'copied from the transcript',
  ungrounded: 'ungrounded',
} as const;

export interface DraftChecks {
  /** Whether every check passed. */
  passed: boolean;
  /** Each failure, starting with its check's name (CHECK_NAMES) and a colon; empty when every check passed. */
  failed: string[];
  /** The grounding check's own report, whose unsupported claims are among the failures. */
  grounding: GroundingReport;
}

/**
 * Checks a draft against the run it was written for:
 * - word limit: the body, without its greeting line and its signature (what follows a `-- ` line, or a closing such as
 *   "Best regards,"), has at most FIRST_EMAIL_WORDS words, or the limit the reviewer's feedback names;
 * - commitment missing: each of ANALYSIS's `facts.commitments` is in the draft: most of its content words, and its
 *   day or date;
 * - leak: no transcript speaker label before a colon at a line's start, no timestamp (`-->`, `h:mm:ss`), no
 *   `[inaudible]`-style marker or voice tag, no filler (um, uh);
 * - copied from the transcript: no run of COPIED_RUN_WORDS words in the transcript's order, pronouns swapped or not;
 * - ungrounded: what checkGrounding finds unsupported.
 * Pure and synchronous, for any engine; the pipeline runs it in the CPU pool.
 */
export function checkDraft(draft: Draft, ctx: RunContext): DraftChecks {
  const grounding = checkGrounding(draft, ctx);
  const failed = [
    ...wordLimitFailures(draft.body, ctx),
    ...missingCommitments(draft, ctx),
    ...leaks(draft, readCall(ctx)),
    ...copiedRuns(draft, readCall(ctx)),
    ...grounding.unsupported.map((entry) => `${CHECK_NAMES.ungrounded}: ${entry}`),
  ];
  return { passed: failed.length === 0, failed, grounding };
}

// ===============================================================================================================
// Word limit

/** The feedback is the reviewer's few words: a longer one is read only this far for its limit. */
const FEEDBACK_READ_MAX = 4000;
/** "under 100 words", "at most 80 words", "100 words max", "a 120-word limit". */
const WORD_LIMIT = [
  new RegExp(
    String.raw`\b(?:under|at most|no more than|max(?:imum)?(?: of)?|within|fewer than|less than|up to|below` +
      String.raw`|limit(?: it)? to|keep it to|cap(?: it)? at)\s+(?:about\s+|around\s+)?(\d{1,4})\s*words?\b`,
    'i',
  ),
  /\b(\d{1,4})[- ]?words?\s+(?:max(?:imum)?|or less|or fewer|limit|at most|tops)\b/i,
  /\ban?\s+(\d{1,4})[- ]word\s+(?:limit|cap|maximum|e-?mail|note|version)\b/i,
];

/** The word limit a reviewer's feedback sets, if it sets one. */
export function feedbackWordLimit(feedback: string | null | undefined): number | null {
  const text = feedback?.slice(0, FEEDBACK_READ_MAX);
  if (!text) return null;
  for (const pattern of WORD_LIMIT) {
    const match = pattern.exec(text);
    const limit = match ? Number(match[1]) : NaN;
    if (limit >= 10) return limit;
  }
  return null;
}

/** The limit the draft's body is held to: the reviewer's, or that of a first follow-up. */
export function wordLimitOf(ctx: RunContext): number {
  return feedbackWordLimit(ctx.feedback) ?? FIRST_EMAIL_WORDS;
}

const GREETING = /^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)\b/i;
const CLOSING = new RegExp(
  String.raw`^(?:best|best regards|best wishes|kind regards|warm regards|warmest regards|regards|many thanks|thanks` +
    String.raw`|thank you|cheers|sincerely|yours sincerely|yours truly|yours|all the best|talk soon|speak soon|warmly` +
    String.raw`|with thanks|thanks again|thanks so much)[,.!]?$`,
  'i',
);

/** The body without its greeting line and its signature: the words a reader reads as the e-mail. */
export function bodyText(body: string): string {
  const lines = body.split('\n');
  const dashes = lines.findIndex((line) => line === '-- ' || line.trim() === '--');
  let end = dashes >= 0 ? dashes : lines.length;
  // A closing ("Best regards,") starts the signature when it is among the last lines.
  for (let i = end - 1; i >= 0 && i >= end - 8; i--) {
    if (CLOSING.test(lines[i]!.trim())) {
      end = i;
      break;
    }
  }
  let start = 0;
  while (start < end && !lines[start]!.trim()) start++;
  const first = lines[start]?.trim() ?? '';
  if (start < end && GREETING.test(first) && first.split(/\s+/).length <= 6) start++;
  return lines.slice(start, end).join('\n');
}

/** How many words the body has, greeting and signature not counted. */
export function bodyWordCount(body: string): number {
  return wordsOf(bodyText(body)).length;
}

function wordLimitFailures(body: string, ctx: RunContext): string[] {
  const limit = wordLimitOf(ctx);
  const words = bodyWordCount(body);
  if (words <= limit) return [];
  return [
    `${CHECK_NAMES.wordLimit}: the body has ${words} words; at most ${limit} (greeting and signature not counted)`,
  ];
}

// ===============================================================================================================
// Commitments

/** Verbs and particles of a promise that a draft may put another way: "put together", "send over", "loop in". */
const PROMISE_WORDS = new Set([
  "i'll", 'will', 'send', 'sending', 'share', 'sharing', 'put', 'together', 'follow', 'following', 'give', 'take',
  'set', 'pull', 'go', 'come', 'check', 'look', 'loop', 'reach', 'circle', 'over', 'across', 'back', 'along', 'sure',
  'let', 'have', 'get', 'make', 'do', 'provide', 'prepare', 'draft', 'write', 'email', 'e-mail', 'forward', 'arrange',
  'book', 'schedule', 'organise', 'organize', 'also', 'then', 'some', 'couple', 'quick', 'quickly',
]);
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = [
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november',
  'december',
];
/** Words that date a promise; "today" is left out: a draft written the next day rightly says it was done. */
const DATE_WORDS = new Set([...WEEKDAYS, ...MONTHS, 'tomorrow', 'week', 'month', 'quarter', 'eod', 'eow']);

/** What makes one commitment: its date words, and its other content words. */
export interface CommitmentWords {
  dates: string[];
  content: string[];
}

export function commitmentWords(commitment: string): CommitmentWords {
  const dates: string[] = [];
  const content: string[] = [];
  for (const word of wordsOf(commitment.slice(0, 600))) {
    if (DATE_WORDS.has(word)) dates.push(word);
    else if (/^\d/.test(word) || (!isStopWord(word) && !PROMISE_WORDS.has(word) && word.length > 1)) content.push(word);
  }
  return { dates, content };
}

function missingCommitments(draft: Draft, ctx: RunContext): string[] {
  const commitments = ctx.analysis?.facts?.commitments ?? [];
  if (commitments.length === 0) return [];
  const present = new Set<string>();
  for (const word of wordsOf(`${draft.subject}\n${draft.body}`)) for (const key of keysOf(word)) present.add(key);
  const has = (word: string) => keysOf(word).some((key) => present.has(key));
  const failed: string[] = [];
  for (const commitment of commitments.slice(0, 16)) {
    const { dates, content } = commitmentWords(commitment);
    const found = content.filter(has).length;
    const enough = content.length === 0 || found >= Math.ceil(content.length * 0.6);
    if (enough && dates.every((date) => present.has(stem(date)))) continue;
    failed.push(`${CHECK_NAMES.commitment}: “${shortened(commitment)}”`);
  }
  return failed;
}

// ===============================================================================================================
// Leaks of the transcript's form

/** Labels a transcript tool writes whatever the call: "Speaker 1", "REP", "PROSPECT". */
const GENERIC_LABEL = new RegExp(
  String.raw`^(?:speaker\s?\d{1,3}|spk\s?\d{1,3}|participant\s?\d{1,3}|rep|prospect|customer|client|interviewer|host` +
    String.raw`|guest|agent|unknown)$`,
  'i',
);
/** A generic label anywhere: "Speaker 2" in any case, "REP" or "PROSPECT" as a transcript writes them. */
const GENERIC_ANYWHERE = /\b(?:[Ss]peaker\s?\d{1,3}|SPEAKER\s?\d{1,3}|REP|PROSPECT|CUSTOMER|INTERVIEWER)\b/;
const TIMESTAMP = /-->|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,3})?\b|\[\d{1,2}:\d{2}\]/;
const MARKER = new RegExp(
  String.raw`[[(](?:inaudible|crosstalk|cross-talk|laughter|laughs|laughing|music|silence|unintelligible` +
    String.raw`|indiscernible|pause|background noise|overlapping|noise|applause|coughs?|coughing|static|unclear` +
    String.raw`|no audio|blank_audio)[^\])\n]{0,30}[\])]|<\/?v(?:[\s.][^>\n]{0,60})?>|\bWEBVTT\b` +
    String.raw`|\b(?:inaudible|crosstalk)\b`,
  'i',
);
const FILLER = /(?<![\p{L}\p{N}'-])(?:u+m+|u+h+|u+h+m+|e+r+m+|mm-?hmm|uh-huh)(?![\p{L}\p{N}'-])/iu;

/** The call's speaker labels in lower case, each also with its company in brackets: "ada", "ada (kestrel)". */
function labelsOf(call: Transcript): Set<string> {
  const labels = new Set<string>();
  for (const speaker of call.speakers.slice(0, 1000)) {
    const label = speaker.label.toLowerCase();
    labels.add(label);
    labels.add(label.replace(/\s*\(.*\)\s*$/, ''));
    if (speaker.company) labels.add(`${label} (${speaker.company.toLowerCase()})`);
  }
  labels.delete('');
  return labels;
}

/**
 * The label that ends `before` ("… Ada", "Ada Lovelace (Kestrel)"), if it is one of the transcript's or a generic one:
 * the last one to four words before a colon or an Otter time, looked up; a bounded look back, at each colon once.
 */
function labelBefore(before: string, labels: Set<string>): string | null {
  const tail = before.slice(-80).replace(/\s*\([^()\n]{0,60}\)\s*$/, '').replace(/\s+$/, '');
  const words = tail.match(/[\p{L}\p{N}.'’-]+/gu) ?? [];
  for (let count = 1; count <= 4 && count <= words.length; count++) {
    const candidate = words.slice(-count).join(' ');
    const start = tail.length - candidate.length;
    // The words must stand together at the end, and begin a word.
    if (tail.slice(start) !== candidate || (start > 0 && /[\p{L}\p{N}]/u.test(tail.charAt(start - 1)))) continue;
    if (labels.has(candidate.toLowerCase()) || GENERIC_LABEL.test(candidate)) return candidate;
  }
  return null;
}

function leaks(draft: Draft, call: Transcript): string[] {
  const labels = labelsOf(call);
  const found = new Set<string>();
  const lines = `${draft.subject}\n${draft.body}`.split('\n');
  // The greeting line ("Dear Ada:") names the reader, not a speaker.
  const greeting = lines.findIndex((line, i) => i > 0 && line.trim() !== '');
  for (let i = 0; i < lines.length && found.size < NAMED_MAX; i++) {
    const line = lines[i]!.length > 2000 ? lines[i]!.slice(0, 2000) : lines[i]!;
    if (!(i === greeting && GREETING.test(line.trim()))) {
      for (const colon of line.matchAll(/\s?\(?\d{1,2}:\d{2}|:/g)) {
        const label = labelBefore(line.slice(0, colon.index), labels);
        if (label) found.add(`the speaker label “${label}:”`);
        if (found.size >= NAMED_MAX) break;
      }
    }
    const generic = GENERIC_ANYWHERE.exec(line);
    if (generic && !found.has(`the speaker label “${generic[0]}:”`)) found.add(`the speaker label “${generic[0]}”`);
    const time = TIMESTAMP.exec(line);
    if (time) found.add(`the timestamp “${time[0].trim()}”`);
    const marker = MARKER.exec(line);
    if (marker) found.add(`the transcript markup “${marker[0]}”`);
    const filler = FILLER.exec(line);
    if (filler) found.add(`the filler “${filler[0]}”`);
  }
  return [...found].slice(0, NAMED_MAX).map((what) => `${CHECK_NAMES.leak}: ${what}`);
}

// ===============================================================================================================
// Runs copied from the transcript

/** Pronouns and their verbs as one word each, so that "my reps spend" and "your reps spend" are the same run. */
const SWAPPED: Record<string, string> = {
  i: '@p', you: '@p', we: '@p', they: '@p', me: '@p', us: '@p', them: '@p',
  my: '@pp', your: '@pp', our: '@pp', their: '@pp', mine: '@pps', yours: '@pps', ours: '@pps', theirs: '@pps',
  "i'm": '@pb', "you're": '@pb', "we're": '@pb', "they're": '@pb', am: '@be', are: '@be', is: '@be',
  "i've": '@pv', "you've": '@pv', "we've": '@pv', "they've": '@pv', "i'll": '@pl', "you'll": '@pl', "we'll": '@pl',
  "they'll": '@pl', "i'd": '@pd', "you'd": '@pd', "we'd": '@pd', "they'd": '@pd',
  myself: '@px', yourself: '@px', ourselves: '@px', themselves: '@px', yourselves: '@px',
};
const FILLER_WORDS = new Set(['um', 'umm', 'uh', 'uhh', 'erm', 'uhm']);

function normalisedWords(text: string): string[] {
  const words: string[] = [];
  for (const word of wordsOf(text)) if (!FILLER_WORDS.has(word)) words.push(SWAPPED[word] ?? word);
  return words;
}

/** The call's runs of COPIED_RUN_WORDS words, each turn's words in order, as keys of a hash set. */
function transcriptShingles(call: Transcript): Set<string> {
  const shingles = new Set<string>();
  for (const turn of call.utterances) {
    const words = normalisedWords(turn.text);
    for (let i = 0; i + COPIED_RUN_WORDS <= words.length; i++) {
      shingles.add(words.slice(i, i + COPIED_RUN_WORDS).join(' '));
    }
  }
  return shingles;
}

function copiedRuns(draft: Draft, call: Transcript): string[] {
  const shingles = transcriptShingles(call);
  if (shingles.size === 0) return [];
  const runs: string[] = [];
  for (const line of draft.body.split('\n')) {
    if (runs.length >= NAMED_MAX) break;
    // The draft's words as written, for the report, beside their normalised forms, for the look-up.
    const written = normalise(line).match(/[\p{L}\p{N}]+(?:['.&-][\p{L}\p{N}]+)*/gu) ?? [];
    const kept = written.filter((word) => !FILLER_WORDS.has(word.toLowerCase()));
    const words = kept.map((word) => SWAPPED[word.toLowerCase()] ?? word.toLowerCase());
    let runEnd = -1;
    let runStart = -1;
    for (let i = 0; i + COPIED_RUN_WORDS <= words.length; i++) {
      if (!shingles.has(words.slice(i, i + COPIED_RUN_WORDS).join(' '))) continue;
      if (i > runEnd) {
        if (runStart >= 0) runs.push(kept.slice(runStart, runEnd).join(' '));
        runStart = i;
      }
      runEnd = i + COPIED_RUN_WORDS;
    }
    if (runStart >= 0) runs.push(kept.slice(runStart, runEnd).join(' '));
  }
  return runs.slice(0, NAMED_MAX).map((run) => `${CHECK_NAMES.copied}: “${shortened(run)}”`);
}

function normalise(text: string): string {
  return text.normalize('NFC').replace(/[’‘`´]/g, "'");
}

function shortened(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

// ===============================================================================================================
// The failures as instructions

/**
 * The feedback for the draft written again: each failure as an instruction, then the reviewer's own feedback, which
 * still applies. Ungrounded claims are listed as the grounding guard always listed them.
 */
export function checksFeedback(
  checks: DraftChecks, reviewerFeedback: string | null | undefined, ctx: RunContext,
): string {
  const lines: string[] = ['The previous draft failed these checks; write the e-mail again so that it passes them:'];
  const of = (name: string) => checks.failed.filter((entry) => entry.startsWith(`${name}: `));
  const words = of(CHECK_NAMES.wordLimit);
  if (words.length > 0) {
    lines.push(
      `- ${words[0]}. Cut the body to at most ${wordLimitOf(ctx)} words (greeting and signature not counted), `
        + 'keeping every commitment and the next step.',
    );
  }
  for (const entry of of(CHECK_NAMES.commitment)) {
    lines.push(`- ${entry}. Say it in the e-mail as a commitment of the salesperson, with its date.`);
  }
  const leaked = of(CHECK_NAMES.leak);
  if (leaked.length > 0) {
    lines.push(
      `- ${leaked.join('; ')}. No speaker labels, timestamps, transcript markup or fillers: write plain prose.`,
    );
  }
  for (const entry of of(CHECK_NAMES.copied)) {
    lines.push(
      `- ${entry}. Say it in your own words: no run of ${COPIED_RUN_WORDS} or more words from the transcript.`,
    );
  }
  const unsupported = checks.grounding.unsupported;
  if (unsupported.length > 0) {
    lines.push(
      '- The previous draft made claims that neither the research nor the call supports:',
      ...unsupported.map((entry) => `  - ${entry}`),
      '  Write the e-mail again without these claims: state only what the research facts, the website summary or the '
        + 'analysis say, and say nothing of the buyer’s feelings, priorities, timing or situation, or of what was said '
        + 'or agreed, that the buyer did not say on the call.',
    );
  }
  const reviewer = reviewerFeedback?.trim();
  if (reviewer) lines.push('', 'The reviewer’s feedback on the earlier draft still applies:', reviewer);
  return lines.join('\n');
}

// What a turn said, cleaned for reading: markup, timestamps, markers, fillers and stutters out; sentence case and a
// final stop where speech recognition gave none. One scan for markup and one pass over the words, each linear.
import { clockAt } from './lines.ts';

const FILLERS = new Set([
  'um', 'umm', 'ummm', 'uh', 'uhh', 'uhm', 'uhmm', 'erm', 'er', 'err', 'hmm', 'hmmm', 'hm', 'mm', 'mmm', 'mhm',
  'mm-hmm', 'mm-hm', 'uh-huh', 'ah', 'ahh', 'eh',
]);
/** Words said twice on purpose: "had had", "that that", "no no". */
const DOUBLED = new Set([
  'had', 'that', 'no', 'very', 'so', 'really', 'bye', 'yeah', 'ha', 'knock', 'many', 'far', 'more',
]);
/** Words that start a question when they start a sentence: "does it need wifi", "what's fixed price". */
const AUXILIARY = new Set([
  'can', 'could', 'do', 'does', 'did', 'is', 'are', 'was', 'were', 'would', 'will', 'have', 'has', 'should', 'shall',
  'may', 'isn\'t', 'aren\'t', 'don\'t', 'doesn\'t', 'what\'s', 'how\'s', 'where\'s', 'who\'s', 'when\'s',
]);
/** Question words ask only when a verb follows: "how do you…" asks, "when it failed…" does not. */
const QUESTION_WORD = new Set(['what', 'how', 'why', 'when', 'where', 'who', 'which']);
/** Words that start a clause: a comma before them belongs to the sentence, not to a filler dropped before them. */
const CLAUSE_START = new Set([
  'i', 'we', 'you', 'they', 'he', 'she', 'it', 'it\'s', 'that\'s', 'there\'s', 'we\'re', 'i\'m', 'and', 'but', 'so',
  'because', 'which', 'who', 'when', 'if', 'then',
]);
/** Days and months, written with a capital; "may" and "march" are left, being verbs as often. */
const CALENDAR = new Set([
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'january', 'february', 'april',
  'june', 'july', 'august', 'september', 'october', 'november', 'december',
]);
/** Words in parentheses that mark a sound, not speech: "(inaudible)", "(laughs)", "(crosstalk 00:12)". */
const MARKER = new RegExp(
  String.raw`^(?:inaudible|crosstalk|cross-talk|laugh|silence|pause|unintelligible|indiscernible|cough|music|noise`
  + String.raw`|background|overlapping|chuckl|sigh|applause|static|audio|no audio|unclear|garbled|phonetic|sp\b|\?)`,
  'i',
);
/** How far a bracket may reach to its closing one and still be markup: further, it is text. */
const BRACKET_MAX = 80;
const ENTITIES: Array<[string, string]> = [
  ['&amp;', '&'], ['&lt;', '<'], ['&gt;', '>'], ['&nbsp;', ' '], ['&quot;', '"'], ['&#39;', '\''], ['&apos;', '\''],
];

/**
 * `names`: people's and companies' names, folded, to capitalise in a lower-case transcript ("hi greg" → "Hi Greg").
 */
export function cleanText(raw: string, names: ReadonlySet<string> = new Set()): string {
  let text = stripMarkup(raw);
  if (text.includes('&')) for (const [entity, char] of ENTITIES) text = text.replaceAll(entity, char);
  const words = dropNoise(text.split(/\s+/).filter(Boolean));
  if (words.length === 0) return '';
  if (!/\p{Lu}/u.test(text)) capitalise(words, names);
  words[0] = upperFirst(words[0]!);
  return finish(words, !/[.!?]/.test(text)).join(' ');
}

/**
 * Removes tags (`<v Ada>`, `<i>`, `<00:00:01.000>`), bracketed markers and times (`[inaudible]`, `[00:03:12]`),
 * sound markers in parentheses, SSA tags (`{\an8}`), `-->` and markdown stars. The next position of each closing
 * character is kept, so a run of unclosed brackets is read once, not once per bracket.
 */
function stripMarkup(s: string): string {
  const parts: string[] = [];
  const next: Record<string, number> = { '>': -1, ']': -1, ')': -1, '}': -1, '[': -1 };
  const find = (char: string, from: number): number => {
    if (next[char]! !== Infinity && next[char]! < from) {
      const at = s.indexOf(char, from);
      next[char] = at < 0 ? Infinity : at;
    }
    return next[char]!;
  };
  let from = 0;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    let end = -1;
    let gap = ' ';
    if (c === '<') {
      const close = find('>', i);
      if (close - i <= BRACKET_MAX && /[\p{L}/\d]/u.test(s[i + 1] ?? '')) [end, gap] = [close + 1, ''];
    } else if (c === '[') {
      // Only the innermost of nested brackets: "[[inaudible]]" loses its inner pair, then the outer one is text.
      const close = find(']', i);
      if (close - i <= BRACKET_MAX && find('[', i + 1) > close) end = close + 1;
    } else if (c === '(') {
      const close = find(')', i);
      if (close - i <= BRACKET_MAX) {
        const inside = s.slice(i + 1, close).trim();
        if (MARKER.test(inside) || clockAt(inside, 0)?.end === inside.length) end = close + 1;
      }
    } else if (c === '{' && s[i + 1] === '\\') {
      const close = find('}', i);
      if (close - i <= BRACKET_MAX) [end, gap] = [close + 1, ''];
    } else if (c === '-' && s.startsWith('-->', i)) {
      end = i + 3;
    } else if (c === '*' && s[i + 1] === '*') {
      [end, gap] = [i + 2, ''];
    }
    if (end > i) {
      parts.push(s.slice(from, i), gap);
      from = end;
      i = end;
    } else {
      i++;
    }
  }
  parts.push(s.slice(from));
  return parts.join('');
}

function isWordChar(char: string): boolean {
  return /[\p{L}\p{N}]/u.test(char);
}

/** A word without the punctuation around it, lower case: "Um," → "um". Words over 40 characters are no fillers. */
function core(word: string): string {
  if (word.length > 40) return word;
  let start = 0;
  let end = word.length;
  while (start < end && !isWordChar(word[start]!)) start++;
  while (end > start && !isWordChar(word[end - 1]!)) end--;
  return word.slice(start, end).toLowerCase();
}

const ENDS_SENTENCE = /[.!?…]["'”’)]?$/;
const TRAILING_PUNCTUATION = /[,.;:!?…]+$/;

/** Drops timestamps, fillers, "you know" at a start, and stutters ("the the", "we, we", "can you can you", "w- we"). */
function dropNoise(tokens: string[]): string[] {
  const out: string[] = [];
  const folded: string[] = [];
  // A dropped word that started a sentence with a capital hands the capital on: "Um, so" → "So".
  let capitalNext = false;
  const push = (word: string) => {
    out.push(capitalNext ? upperFirst(word) : word);
    folded.push(core(word));
    capitalNext = false;
  };
  const drop = (token: string, atStart: boolean, next: string) => {
    if (atStart && /^\p{Lu}/u.test(token)) capitalNext = true;
    // A dropped word's full stop or question mark stays, on the word before it.
    const end = token.length <= 40 ? /[.!?…]+$/.exec(token)?.[0] : undefined;
    if (end && out.length > 0 && !TRAILING_PUNCTUATION.test(out.at(-1)!.slice(-3))) out[out.length - 1] += end;
    // "about, uh, nine" reads "about nine": the commas were the filler's. Before a new clause ("e-mail, um, it's")
    // the comma was the sentence's, and stays.
    else if (token.endsWith(',') && out.at(-1)?.endsWith(',') && !CLAUSE_START.has(next)) {
      out[out.length - 1] = out.at(-1)!.slice(0, -1);
    }
  };
  /** The word before, said again: it stays as first written, with the punctuation the repeat had. */
  const repeat = (token: string) => {
    const previous = out.at(-1)!.replace(/,$/, '');
    const end = token.length <= 40 ? TRAILING_PUNCTUATION.exec(token)?.[0] ?? '' : '';
    out[out.length - 1] = previous + end;
  };
  const plain = (w: string | undefined) => w !== undefined && (isWordChar(w.at(-1) ?? '') || w.endsWith(','));
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const word = core(token);
    const atStart = out.length === 0 || ENDS_SENTENCE.test(out.at(-1)!.slice(-3));
    const afterComma = out.length > 0 && out.at(-1)!.endsWith(',');
    const nextWord = i + 1 < tokens.length ? core(tokens[i + 1]!) : '';
    if (word === '') {
      // Punctuation alone ("," after a dropped marker) goes onto the word before; a dash alone starts nothing.
      const dash = token.length <= 10 && /^[-–—]+$/.test(token);
      if (out.length > 0 && token.length <= 10 && /^[,.;:!?…]+$/.test(token)) {
        if (!TRAILING_PUNCTUATION.test(out.at(-1)!.slice(-3))) out[out.length - 1] += token;
      } else if (out.length > 0) push(dash ? '—' : token);
      continue;
    }
    const clock = token.length <= 20 ? clockAt(token.replace(/^[[(]/, ''), 0) : null;
    if (clock && clock.colons === 2) continue;
    if (FILLERS.has(word)) {
      drop(token, atStart, nextWord);
      continue;
    }
    const pair = `${word} ${nextWord}`;
    if ((pair === 'you know' || pair === 'i mean') && (atStart || (afterComma && tokens[i + 1]!.endsWith(',')))) {
      drop(token, atStart, '');
      drop(tokens[i + 1]!, false, i + 2 < tokens.length ? core(tokens[i + 2]!) : '');
      i++;
      continue;
    }
    if (word === 'like' && atStart && token.endsWith(',')) {
      drop(token, atStart, nextWord);
      continue;
    }
    const previous = out.at(-1);
    if (previous !== undefined && word === folded.at(-1) && !DOUBLED.has(word) && plain(previous)) {
      repeat(token);
      continue;
    }
    const pairAgain = out.length >= 2 && word === folded.at(-2) && nextWord === folded.at(-1);
    if (pairAgain && plain(out.at(-2)) && plain(previous)) {
      repeat(tokens[i + 1]!);
      i++;
      continue;
    }
    // "w- we", "I- I think": a word broken off and said again.
    if (token.length <= 5 && token.endsWith('-') && nextWord.startsWith(word)) continue;
    push(token);
  }
  return out;
}

function upperFirst(word: string): string {
  for (let i = 0; i < word.length && i < 3; i++) {
    if (isWordChar(word[i]!)) return word.slice(0, i) + word[i]!.toUpperCase() + word.slice(i + 1);
  }
  return word;
}

/** A lower-case transcript: "i" and "i'm" as I, the names it knows, and the start of each sentence in capitals. */
function capitalise(words: string[], names: ReadonlySet<string>): void {
  for (let i = 0; i < words.length; i++) {
    const word = core(words[i]!);
    const sentenceStart = i > 0 && ENDS_SENTENCE.test(words[i - 1]!.slice(-3));
    if (word === 'i' || /^i['’](m|ve|ll|d)$/.test(word) || names.has(word) || CALENDAR.has(word) || sentenceStart) {
      words[i] = upperFirst(words[i]!);
    }
  }
}

/**
 * Ends the text with a full stop, or a question mark when it is a question; a trailing comma or dash goes. `bare`:
 * speech recognition gave no punctuation at all, so a question may also be asked at the end ("…so how many vans are
 * there"), which its last words tell.
 */
function finish(words: string[], bare: boolean): string[] {
  let last = words.at(-1)!;
  if (ENDS_SENTENCE.test(last.slice(-3))) return words;
  if (/^[-–—]+$/.test(last) && words.length > 1) {
    words.pop();
    last = words.at(-1)!;
  }
  last = last.length <= 40 ? last.replace(/[,;:\-–—]+$/, '') : last;
  words[words.length - 1] = `${last}${asks(words, bare) ? '?' : '.'}`;
  return words;
}

const SUBJECTS = new Set(['you', 'we', 'it', 'they', 'i', 'he', 'she', 'that', 'this', 'there', 'your', 'the']);
const HOW_MUCH = new Set(['many', 'much', 'long', 'often', 'soon', 'big']);

function asks(words: string[], bare: boolean): boolean {
  const at = (i: number) => (i < words.length ? core(words[i]!).replace('’', '\'') : '');
  const questionAt = (i: number) => AUXILIARY.has(at(i)) && (i === 0 || SUBJECTS.has(at(i + 1)))
    || (QUESTION_WORD.has(at(i)) && (AUXILIARY.has(at(i + 1)) || HOW_MUCH.has(at(i + 1))));
  if (questionAt(0)) return true;
  if (!bare) return false;
  for (let i = Math.max(1, words.length - 12); i < words.length; i++) if (questionAt(i)) return true;
  return false;
}

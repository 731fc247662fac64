// Reading a transcript's lines: where they break, the clock times and the speaker heads they start with. Every
// function here reads a line once, or a bounded part of it, so reading a hostile transcript stays linear in its size;
// the patterns run only on slices of at most HEAD_MAX characters, where no backtracking can cost more than a constant.

/**
 * A transcript's lines, trimmed and cut to LINE_MAX characters; the line at index i is line i + 1 of the original, as
 * an editor numbers it. Strings rather than objects: a hostile transcript may have a million lines.
 */
export type Lines = string[];

/**
 * The most of one line that is read. A real turn is far shorter; a longer line is a pasted blob, and cutting it bounds
 * what every later pass (cleaning, a writer's sentence splitting) may be handed in one piece.
 */
export const LINE_MAX = 16_384;
/** The most of a line's start that can be a speaker's head ("[00:03:12] Name (Company):"). */
export const HEAD_MAX = 120;

/**
 * The lines of `text`, broken at \n, \r\n, \r and the Unicode line and paragraph separators. Scanned by hand: a
 * regular expression's split of a million empty lines spent more time in the collector the more lines there were.
 */
export function splitLines(text: string): Lines {
  const lines: Lines = [];
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let i = start; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 10;
    if (code !== 10 && code !== 13 && code !== 0x2028 && code !== 0x2029) continue;
    // An empty line needs no slice: most of a hostile run of breaks is these.
    const line = i === start ? '' : cutLine(text.slice(start, i).trim());
    lines.push(line);
    if (code === 13 && text.charCodeAt(i + 1) === 10) i++;
    start = i + 1;
  }
  return lines;
}

/** At most LINE_MAX characters, cut at a space when one is near the end, never between the halves of a character. */
export function cutLine(text: string, max = LINE_MAX): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  if (space > max / 2) return text.slice(0, space);
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function digitsEnd(s: string, i: number, min: number, max: number): number {
  let j = i;
  while (j < s.length && j - i < max && isDigit(s.charCodeAt(j))) j++;
  return j - i >= min ? j : -1;
}

/**
 * The end of a clock time starting at `i` ("0:42", "12:05", "00:03:12", "00:00:01,200", "00:00:01.200"), or -1.
 * `colons` tells how many colons it had, so a caller can tell "00:03:12" (always a mark) from "12:30" (maybe a time).
 */
export function clockAt(s: string, i: number): { end: number; colons: number } | null {
  let j = digitsEnd(s, i, 1, 3);
  if (j < 0 || s[j] !== ':') return null;
  j = digitsEnd(s, j + 1, 2, 2);
  if (j < 0) return null;
  let colons = 1;
  if (s[j] === ':' && digitsEnd(s, j + 1, 2, 2) > 0) {
    j += 3;
    colons = 2;
  }
  if ((s[j] === '.' || s[j] === ',') && digitsEnd(s, j + 1, 1, 3) > 0) j = digitsEnd(s, j + 1, 1, 3);
  // "12:301" or "1:23pm" is not a clock mark: the time must end where the digits do.
  if (j < s.length && /[\p{L}\p{N}]/u.test(s[j]!)) return null;
  return { end: j, colons };
}

/** A clock time alone, maybe bracketed: "00:05:00", "[0:42]", "(12:31)". */
export function isClockOnly(text: string): boolean {
  const open = text[0] === '[' || text[0] === '(' ? 1 : 0;
  const clock = clockAt(text, open);
  if (!clock) return false;
  const close = open && (text[clock.end] === ']' || text[clock.end] === ')') ? 1 : 0;
  return clock.end + close === text.length && open === close;
}

/** A cue's timing line: "00:00:01.200 --> 00:00:06.800" with any cue settings after it. */
export function timingOf(text: string): 'dot' | 'comma' | null {
  const clock = clockAt(text, 0);
  if (!clock) return null;
  const arrow = text.indexOf('-->', clock.end);
  if (arrow < 0 || arrow > clock.end + 4) return null;
  return text.slice(0, clock.end).includes(',') ? 'comma' : 'dot';
}

/** The start of a line that speaks: who, with what company, and where the text begins. */
export interface Head {
  label: string;
  company: string | null;
  /** Where the text after the colon begins. */
  textStart: number;
  /** A clock time came before the label ("[00:03:12] Name:"). */
  stamped: boolean;
}

/** Words in brackets after a name that say how someone joined, not their company. */
const NOT_A_COMPANY =
  /^(guest|external|host|organi[sz]er|co-?host|presenter|you|me|unverified|verified|he\/him|she\/her|they\/them)$/i;
const NAME = /^[\p{L}\p{M}][\p{L}\p{M}\p{N} .,'’&-]*$/u;

/** "Aisha Karim (Brightpath)" → name and company, or null when it cannot be a speaker's label. */
export function labelOf(raw: string): { label: string; company: string | null; stamp: boolean } | null {
  let text = raw.trim();
  let company: string | null = null;
  let stamp = false;
  // A bracketed clock or company after the name: "Ada [00:01:02]", "Ada (Acme)".
  for (let round = 0; round < 2 && (text.endsWith(')') || text.endsWith(']')); round++) {
    const open = text.lastIndexOf(text.endsWith(')') ? '(' : '[');
    if (open <= 0) return null;
    const inside = text.slice(open + 1, -1).trim();
    text = text.slice(0, open).trim();
    if (isClockOnly(inside)) stamp = true;
    else if (company === null && inside && !NOT_A_COMPANY.test(inside)) company = inside;
  }
  if (text.startsWith('**') && text.endsWith('**')) text = text.slice(2, -2).trim();
  if (!text || text.length > 60 || !NAME.test(text) || text.split(' ').length > 5) return null;
  return { label: text, company, stamp };
}

/**
 * Reads "[00:03:12] Name (Company): text", "Name: text", "**Name**: text" or "00:12 - Name: text" at the start of a
 * line, or null. The colon must be followed by a space or end the line, so "https://" and "12:30" are no heads.
 */
export function speakerHead(line: string): Head | null {
  let i = 0;
  if ((line[0] === '-' || line[0] === '*' || line[0] === '>' || line[0] === '•') && line[1] === ' ') i = 2;
  let stamped = false;
  const open = line[i] === '[' || line[i] === '(' ? 1 : 0;
  const clock = clockAt(line, i + open);
  if (clock && (!open || line[clock.end] === ']' || line[clock.end] === ')')) {
    stamped = true;
    i = clock.end + open;
    while (line[i] === ' ' || line[i] === '\t' || line[i] === '-' || line[i] === '|' || line[i] === '–') i++;
  }
  let colon = -1;
  for (let j = i; j < line.length && j < i + HEAD_MAX; j++) {
    if (line[j] === ':') {
      colon = j;
      break;
    }
  }
  if (colon < 0) return null;
  const after = line[colon + 1];
  if (after !== undefined && after !== ' ' && after !== '\t' && after !== '*') return null;
  let raw = line.slice(i, colon);
  let textStart = colon + 1;
  // "**Ada:** text" has its closing stars after the colon.
  if (line.startsWith('**', colon + 1) && raw.startsWith('**')) {
    raw = `${raw}**`;
    textStart += 2;
  }
  const label = labelOf(raw);
  if (!label) return null;
  return { label: label.label, company: label.company, textStart, stamped: stamped || label.stamp };
}

/**
 * An Otter or Fireflies head: a name and a clock time alone on a line ("Marcus Feld  0:42", "Ada Lovelace - 01:02:03",
 * "Speaker 1 (0:42)"); the text is on the lines after it.
 */
export function otterHead(line: string): { label: string; company: string | null } | null {
  if (line.length > HEAD_MAX) return null;
  let end = line.length;
  if (line.endsWith(')') || line.endsWith(']')) end--;
  let start = end;
  while (start > 0 && /[\d:.,]/.test(line[start - 1]!)) start--;
  const clock = clockAt(line, start);
  if (!clock || clock.end !== end) return null;
  let nameEnd = start;
  if (end < line.length) {
    if (line[nameEnd - 1] !== '(' && line[nameEnd - 1] !== '[') return null;
    nameEnd--;
  }
  // The name and the time are apart: by spaces, a dash or a bar.
  const before = nameEnd;
  while (nameEnd > 0 && /[\s\-–|·]/.test(line[nameEnd - 1]!)) nameEnd--;
  if (nameEnd === before && end === line.length) return null;
  const label = labelOf(line.slice(0, nameEnd));
  return label && !label.stamp ? { label: label.label, company: label.company } : null;
}

// PostgreSQL writes JSON with spaces of its own: `{"id" : "…", "steps" : [{…}, ⏎ {…}]}` from json_build_object
// and json_agg, `{"a": 1, "b": 2}` from jsonb. A route that sends such text as it is passes it through here, so
// that every answer is compact JSON, as the serializer writes it everywhere else.

const SPACE = 32;
const TAB = 9;
const NEWLINE = 10;
const RETURN = 13;
const QUOTE = 34;
const BACKSLASH = 92;

const isSpace = (code: number) => code === SPACE || code === NEWLINE || code === RETURN || code === TAB;

/**
 * `json` (valid JSON, as PostgreSQL writes it) without the whitespace between its tokens, in one pass over the
 * text. Strings are copied as they are: whitespace inside one is part of its value.
 */
export function compactJson(json: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  const end = json.length;
  while (i < end) {
    const code = json.charCodeAt(i);
    if (code === QUOTE) {
      // Skip to the closing quote; an escape (\" or \\) takes two characters.
      i++;
      while (i < end) {
        const c = json.charCodeAt(i);
        if (c === BACKSLASH) i += 2;
        else if (c === QUOTE) break;
        else i++;
      }
      i++;
    } else if (isSpace(code)) {
      out += json.slice(from, i);
      while (i < end && isSpace(json.charCodeAt(i))) i++;
      from = i;
    } else {
      i++;
    }
  }
  return from === 0 ? json : out + json.slice(from);
}

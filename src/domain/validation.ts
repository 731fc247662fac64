// Small checks shared by the domain and the HTTP schemas.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

// The instants every part of leadrun keeps as they were given: written as YYYY-MM-DDTHH:mm:ss.sssZ (years up to
// 9999), stored by PostgreSQL and PGlite alike (a year past 9999 fails in PGlite), and read back faithfully (PGlite
// reads the years 1 to 99 as 19xx or 20xx). A margin below: nothing leadrun records happened before year 1000.
const EARLIEST_INSTANT = Date.parse('1000-01-01T00:00:00.000Z');
const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** A real instant (not an Invalid Date) that the database stores and gives back: years 1000 to 9999, in UTC. */
export function isStorableInstant(date: Date): boolean {
  const time = date.getTime();
  return time >= EARLIEST_INSTANT && time <= LATEST_INSTANT;
}

// The one rule for an e-mail address, wherever one is given (a lead's, a member's, a sender's, MAIL_FROM, the web
// UI's forms, the import): an address an e-mail can be sent to. The characters of RFC 5322's dot-atom before the @,
// and any character beyond ASCII (RFC 6531: sent with SMTPUTF8); a domain of at least two labels of letters (any
// script), digits and hyphens, which must have an IDNA form (müller.de is sent as xn--mller-kva.de). Quoted local
// parts ("a b"@example.com) and address literals (a@[10.0.0.1]) are not taken: no lead has one. Every pattern here
// is linear (DESIGN §10).
const LOCAL_CHARACTER = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~\-\u0080-\u{10FFFF}]$/u;
const LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\s]/u;
export const EMAIL_MESSAGE = 'must be an e-mail address';

/** The ASCII (IDNA) form of a domain, or null when it has none. The URL parser does it, in Node and in browsers. */
export function asciiDomain(domain: string): string | null {
  try {
    const host = new URL(`http://${domain}/`).hostname;
    return host === '' || host.startsWith('[') ? null : host;
  } catch {
    return null;
  }
}

/** Why `value` is not an e-mail address, in words a person can act on, or null when it is one. */
export function emailProblem(value: string): string | null {
  const problem = (why: string) => `${EMAIL_MESSAGE}: ${why}`;
  if (value.length > 254) return problem('longer than 254 characters');
  const at = value.indexOf('@');
  if (at < 0) return problem('no @');
  if (value.indexOf('@', at + 1) >= 0) return problem('more than one @');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (CONTROL.test(value)) return problem('it holds a space or a control character');
  if (local === '') return problem('nothing before the @');
  if (domain === '') return problem('nothing after the @');
  if (new TextEncoder().encode(local).length > 64) return problem('the part before the @ is longer than 64 bytes');
  for (const character of local) {
    if (!LOCAL_CHARACTER.test(character)) return problem(`the part before the @ holds "${character}"`);
  }
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return problem('a dot at the start or end of the part before the @, or two dots in a row');
  }
  const labels = domain.split('.');
  if (labels.length < 2) return problem('the domain has no dot');
  if (labels.some((label) => label === '')) return problem('the domain has a dot at its start or end, or two in a row');
  const wrong = labels.find((label) => !LABEL.test(label));
  if (wrong !== undefined) {
    return problem(`the domain's part "${wrong}" may hold only letters, digits and inner hyphens`);
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) return problem('the domain ends in a number');
  const ascii = asciiDomain(domain);
  if (ascii === null || ascii.length > 253 || ascii.split('.').some((label) => label.length > 63)) {
    return problem('the domain is not a name the DNS can hold');
  }
  return null;
}

export function isEmail(value: string): boolean {
  return emailProblem(value) === null;
}

// A lead's name: any text but a blank one. Written as a schema pattern, so that the API, the import (which validates
// its rows against the same schema) and the web UI refuse "   " with the same words.
export const NOT_BLANK_PATTERN = '\\S';
export const BLANK_MESSAGE = 'must not be blank';

/** Whether `value` holds something other than white space. */
export function isBlank(value: string): boolean {
  return !/\S/.test(value);
}

/** An absolute http or https URL with a host. */
export function isWebUrl(value: string): boolean {
  if (value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

// One line of text: the rule for every field that goes into a mail header (a subject; a person's, member's or
// sender's name). A line break there would start a header of its own, and readers take more than CR and LF for
// one (NEL U+0085, U+2028, U+2029); other control characters hide or reorder what is shown. An encoded word typed
// as such (=?utf-8?b?...?=) is decoded by the recipient's mail program into text other than the one reviewed.
const LINE_BREAKERS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029';
const LINE_BREAKER = new RegExp(`[${LINE_BREAKERS}]`);
const LINE_BREAKER_RUNS = new RegExp(`[${LINE_BREAKERS}]+`, 'g');
// Linear (DESIGN §10): neither run of [^?\s] can reach past the next question mark.
const ENCODED_WORD = /=\?[^?\s]*\?[bq]\?[^?\s]*\?=/i;
const ENCODED_WORDS = new RegExp(ENCODED_WORD.source, 'gi');

/** The same rule as a JSON schema pattern, for the schemas of fields checked with `oneLineProblem`. */
export const ONE_LINE_PATTERN = `^[^${LINE_BREAKERS}]*$`;

export const ONE_LINE_MESSAGE = 'must be one line of text, without control characters or encoded words (=?...?=)';

/** Why `value` cannot go into a mail header as it is, or null when it can. */
export function oneLineProblem(value: string): string | null {
  return LINE_BREAKER.test(value) || ENCODED_WORD.test(value) ? ONE_LINE_MESSAGE : null;
}

/**
 * Generated text (a model's or the offline engine's subject) made one line by the same rule: what would be refused
 * from a person is dropped instead, a line break becoming a space, and the spaces tidied.
 */
export function toOneLine(value: string): string {
  return value.replace(ENCODED_WORDS, ' ').replace(LINE_BREAKER_RUNS, ' ').replace(/\s+/g, ' ').trim();
}

// A company's website as people write it: `https://example.com`, or a bare host (`www.example.com`, `sato.example`,
// `example.com/about`), which is the https address of that host. A prefix like `ftp:` or `mailto:` is a scheme and
// stays one, to be refused; `sato.example:8080` holds a dot before its colon, so it is a host with a port.
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const BARE_HOST_START = /^[\p{L}\p{N}[]/u;
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;

export const WEBSITE_MESSAGE = 'must be an http or https URL, or a host name such as www.example.com';

function isBareHost(value: string): boolean {
  const scheme = SCHEME.exec(value);
  return !scheme || scheme[1]!.includes('.');
}

/** The address a website is stored as: a bare host gets `https://` before it; anything else is kept as it is. */
export function websiteUrl(value: string): string {
  return isBareHost(value) ? `https://${value}` : value;
}

/** Why `value` is not a website a lead can have, or null when it is one. */
export function websiteProblem(value: string): string | null {
  if (SPACE_OR_CONTROL.test(value)) return WEBSITE_MESSAGE;
  if (!isBareHost(value)) return isWebUrl(value) && /^https?:\/\/[^/?#]/i.test(value) ? null : WEBSITE_MESSAGE;
  // A bare host is a name with a dot (or an IP address): "hello" is a word, not a website.
  if (!BARE_HOST_START.test(value) || !isWebUrl(`https://${value}`)) return WEBSITE_MESSAGE;
  return new URL(`https://${value}`).hostname.includes('.') || value.startsWith('[') ? null : WEBSITE_MESSAGE;
}

// The words a reply adds: what its sender wrote above the e-mail it quotes. Clients mark the quoted e-mail in a few
// ways (`>` lines; "On … wrote:", "Am … schrieb", "Le … a écrit", "El … escribió"; Outlook's "From: … Sent:" block
// and "-----Original Message-----"), and a signature starts at "-- ". One pass over the lines, each pattern bounded.

const ORIGINAL_MESSAGE = /^-{2,}\s?(original message|ursprungliche nachricht|ursprüngliche nachricht|message d'origine|mensaje original)\s?-{2,}$/i;
const OUTLOOK_RULE = /^_{10,}$/;
const HEADER_FROM = /^(from|von|de)\s?:\s/i;
const HEADER_SENT = /^(sent|date|gesendet|datum|envoyé|enviado|fecha)\s?:\s/i;
// Capitalised as clients write it: a sentence of the reply may well begin with a lower-case "le" or "el".
const ATTRIBUTION_START = /^(On|Am|Le|El|Il|Op)\s/;
const ATTRIBUTION = /^(On|Am|Le|El|Il|Op)\s.{0,300}?(wrote|schrieb|a écrit|escribió|ha scritto|schreef)\s?:/;

/** The reply's own lines, trimmed, in order: quoted lines left out, reading stopped where the quoted e-mail begins. */
export function ownLines(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (ORIGINAL_MESSAGE.test(trimmed) || OUTLOOK_RULE.test(trimmed)) break;
    if (HEADER_FROM.test(trimmed) && lines.slice(i + 1, i + 4).some((l) => HEADER_SENT.test(l.trim()))) break;
    // "On Tue, 3 Mar 2026 at 10:00, Rep <rep@x> wrote:", which clients wrap over two or three lines.
    if (ATTRIBUTION_START.test(trimmed) && ATTRIBUTION.test(lines.slice(i, i + 3).map((l) => l.trim().slice(0, 400)).join(' '))) break;
    if (trimmed.startsWith('>')) continue;
    if (trimmed === '--' || line === '-- ') break;
    kept.push(trimmed);
  }
  return kept;
}

/** The reply's own words as one text, its paragraphs kept as line breaks. */
export function ownText(text: string): string {
  return ownLines(text).join('\n').trim();
}

// How every e-mail leadrun writes ends (DESIGN §12): one closing built here, used by every engine's draft and by the
// message a delivery sends, so that no two paths sign the same sender differently.
//
//   Best regards,          the closing line: "Best regards," or the variant the writer chose ("Kind regards,")
//   Grace Hopper           the sender's name, once
//   --                     "-- " (dash dash space), the separator mail clients know, only when a signature is set
//   Grace Hopper           the signature, verbatim
//   Head of Sales
//
// A signature that already opens with the sender's name (above, the usual case) would show the name twice, once on
// each side of the separator: the name line is then left out, and the signature, which is the sender's own text,
// says it. A signature is never altered, so that the message a delivery sends can recognise it at the body's end.
import type { Sender } from './engine.ts';

export const DEFAULT_CLOSING = 'Best regards,';

/** The line that opens a signature block (RFC 3676 §4.3): a mail client can tell the signature from the text. */
export const SIGNATURE_SEPARATOR = '-- ';

export interface SignOffOptions {
  /** The closing line, e.g. "Kind regards," or "Cheers,"; "Best regards," when left out or blank. */
  closing?: string;
}

/**
 * The lines that follow the body of an e-mail, joined by `\n`, without a leading blank line: the closing, the sender's
 * name (unless the signature opens with it), and `-- ` with the signature when one is set.
 */
export function signOff(sender: Sender, options: SignOffOptions = {}): string {
  const { closing, name, signature } = partsOf(sender, options);
  return [closing, ...(name ? [name] : []), ...(signature ? [signatureBlock(signature)] : [])].join('\n');
}

/**
 * What signOff writes, line by line. A signature that opens with a closing of its own ("Cheers,\nGrace") brings the
 * closing: it replaces the writer's, and the rest of the signature is the signature.
 */
interface SignOffParts {
  closing: string;
  name: string | null;
  signature: string | null;
}

function partsOf(sender: Sender, options: SignOffOptions): SignOffParts {
  let closing = options.closing?.replace(/\s+/g, ' ').trim() || DEFAULT_CLOSING;
  let signature = tidySignature(sender.signature);
  const [first, ...rest] = signature?.split('\n') ?? [];
  if (first !== undefined && CLOSING_ALONE.test(first.trim())) {
    closing = first.trim();
    signature = tidySignature(rest.join('\n'));
  }
  const name = sender.name?.replace(/\s+/g, ' ').trim() || null;
  return { closing, name: name && !(signature && opensWithName(signature, name)) ? name : null, signature };
}

/** The signature under its separator, as the end of an e-mail shows it; the signature is kept as written. */
export function signatureBlock(signature: string): string {
  return `${SIGNATURE_SEPARATOR}\n${tidySignature(signature)}`;
}

/** A signature with `\n` line breaks and no blank lines around it; null when there is nothing in it. */
export function tidySignature(signature: string | null | undefined): string | null {
  const tidy = signature?.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').replace(/^\n+|\n+$/g, '');
  return tidy?.trim() ? tidy : null;
}

/**
 * Whether the signature's first line already names the sender: it starts with their whole name, or with their first
 * name as a word ("Jonas Berg" for the sender name "Jonas B."), case aside.
 */
function opensWithName(signature: string, name: string): boolean {
  const first = signature.split('\n')[0]!.trim().toLocaleLowerCase();
  const whole = name.toLocaleLowerCase();
  if (first.startsWith(whole)) return true;
  const given = whole.split(' ')[0]!.replace(/[.,]+$/, '');
  return given.length >= 2 && new RegExp(`^${escapeRegExp(given)}(?![\\p{L}\\p{N}])`, 'u').test(first);
}

/**
 * The body with its sign-off replaced by signOff's: for a writer (a model) that may have signed the e-mail itself, in
 * its own way. A trailing signature block (`-- ` and what follows) is dropped, and so is everything from a line in the
 * last few that is a closing alone ("Best regards,", "Thanks!") or a closing with a short name ("Best, Grace"). The
 * writer's closing word is kept when it wrote one and `options.closing` does not say otherwise.
 */
export function withSignOff(body: string, sender: Sender, options: SignOffOptions = {}): string {
  let lines = body.replace(/\r\n?/g, '\n').replace(/\s+$/, '').split('\n');
  const separator = lines.findIndex((line, i) => i > 0 && /^--[ \t]*$/.test(line));
  if (separator > 0) lines = lines.slice(0, separator);
  const found = closingLine(lines);
  let closing = options.closing;
  if (found) {
    closing ??= found.closing;
    lines = lines.slice(0, found.index);
  }
  return `${lines.join('\n').replace(/\s+$/, '')}\n\n${signOff(sender, closing === undefined ? {} : { closing })}`;
}

/**
 * The body as a delivery sends it, for the sender who sends it: as it is when it already ends with their signature
 * (a draft signed by signOff, or by a person), or has no signature to add; else with it added under `-- `. A draft
 * that ends with a closing and the sender's name alone (written before the signature was set) gets signOff's ending
 * instead, so that the name does not show above and below the separator.
 */
export function signedBody(body: string, sender: Sender): string {
  const text = restoreSeparator(body.replace(/\r\n?/g, '\n').replace(/\s+$/, ''));
  const signature = tidySignature(sender.signature);
  const signed = partsOf(sender, {}).signature;
  const ends = (tail: string) => comparable(text).endsWith(comparable(tail));
  if (!signature || ends(signature) || (signed && ends(signatureBlock(signed)))) return text;
  const lines = text.split('\n');
  const found = closingLine(lines);
  const name = sender.name?.replace(/\s+/g, ' ').trim().toLocaleLowerCase();
  const after = found ? lines.slice(found.index + 1).map((line) => line.trim()).filter(Boolean) : null;
  if (after && (after.length === 0 || (after.length === 1 && after[0]!.toLocaleLowerCase() === name))) {
    return withSignOff(text, sender, { closing: found!.closing });
  }
  return `${text}\n\n${signatureBlock(signature)}`;
}

/**
 * The body with its signature separator whole again: a tidy-up of trailing spaces (fitDraft's, an editor's) turns
 * `-- ` into `--`, which mail clients no longer take for the start of a signature. The last such line is the one.
 */
export function restoreSeparator(body: string): string {
  const lines = body.split('\n');
  for (let i = lines.length - 1; i > 0; i--) {
    if (/^--[ \t]*$/.test(lines[i]!)) {
      lines[i] = SIGNATURE_SEPARATOR;
      break;
    }
  }
  return lines.join('\n');
}

/** Line endings and trailing spaces aside, so that an edit's \r\n or a stripped space does not hide a signature. */
const comparable = (text: string) => text.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').trim();

/** The last closing line among the last few ("Best regards," or "Best, Grace"), never the first, with its closing. */
function closingLine(lines: string[]): { index: number; closing: string } | null {
  for (let i = lines.length - 1; i > 0 && i >= lines.length - SIGN_OFF_LINES; i--) {
    const line = lines[i]!.trim();
    if (CLOSING_ALONE.test(line)) return { index: i, closing: line };
    if (CLOSING_WITH_NAME.test(line)) return { index: i, closing: `${line.split(',')[0]!.trim()},` };
  }
  return null;
}

/** How far from the end a writer's own sign-off may start: a closing, a name and a signature of a few lines. */
const SIGN_OFF_LINES = 8;

const CLOSINGS = String.raw`(best( regards| wishes)?|kind(est)? regards|warm(est)? regards|regards|many thanks|`
  + String.raw`thanks( again| so much)?|thank you|cheers|sincerely|yours( sincerely| truly)?|all the best|`
  + String.raw`talk soon|speak soon)`;
/** A line that is a closing and nothing more: "Best regards," "Thanks!" "Cheers". */
const CLOSING_ALONE = new RegExp(String.raw`^${CLOSINGS}[ \t]*[,.!]?$`, 'i');
/** A closing and a short name on one line: "Best, Grace" (not "Thanks, Ada, for your time."). */
const CLOSING_WITH_NAME = new RegExp(String.raw`^${CLOSINGS},[ \t]+[\p{L}][\p{L}\p{M} .'-]{0,40}$`, 'iu');

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Reading one message of the inbox (src/mail/replies.ts): what matters of it for a reply, from at most its first
// MAX_BYTES_PER_MESSAGE bytes. The message is a stranger's MIME and HTML, so this runs in a CPU pool thread with a
// time budget (the task `readReply` of src/cpu/tasks.ts), never on the event loop that answers HTTP (DESIGN §10).
// When a message is over the budget, `envelopeReply` reads what the server's envelope says of it instead.
// What the reply says is read in the same thread (src/agent/replies/classify.ts).
import { createHash } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';
import { classified, CLASSIFIED_HEADERS, type ReplyClassification, type ReplyInput } from '../agent/replies/types.ts';
import { ownLines } from '../agent/replies/own-text.ts';
import { MAX_BYTES_PER_MESSAGE } from './reply-limits.ts';

export { MAX_BYTES_PER_MESSAGE };

const SNIPPET_CHARS = 300;
/** Referenced Message-IDs taken from one message: In-Reply-To, then the newest References. */
const MAX_REFERENCES = 100;
const MAX_ID_LENGTH = 998;

/** What the IMAP server's ENVELOPE says of a message (imapflow's `envelope`, the fields used here). */
export interface ReplyEnvelope {
  messageId?: string;
  inReplyTo?: string;
  date?: Date | string;
  from?: Array<{ name?: string; address?: string }>;
  subject?: string;
}

export interface ReplyMessage {
  /** The start of the message as the server sent it: at most MAX_BYTES_PER_MESSAGE bytes. */
  source: Uint8Array;
  envelope: ReplyEnvelope | undefined;
  internalDate: Date | string | undefined;
  /** The time of the check: a date after it is taken as now. */
  now: Date;
}

/** A message as a possible reply: its id, the ids it answers, a glance at what it says, and what it says. */
export interface ReplyCandidate {
  messageId: string;
  references: string[];
  from: string | null;
  subject: string | null;
  receivedAt: Date;
  snippet: string;
  /** The offline classifier's reading. */
  classification: ReplyClassification;
  /** What a model is shown to classify it: its classified headers and at most MAX_OWN_CHARS of its own words. */
  reading: ReplyInput;
}

/** A Message-ID without its angle brackets and surrounding space; null when it cannot be one. */
export function bareMessageId(value: string): string | null {
  const bare = value.trim().replace(/^<|>$/g, '').trim();
  return bare.length > 0 && bare.length <= MAX_ID_LENGTH && !/[\s<>]/.test(bare) ? bare : null;
}

/** The Message-IDs a header value lists (`<a@b> <c@d>`), in order. */
function messageIdsIn(value: string | string[] | undefined): string[] {
  if (!value) return [];
  const text = Array.isArray(value) ? value.join(' ') : value;
  const ids: string[] = [];
  for (const match of text.matchAll(/<([^<>\s]{1,998})>/g)) ids.push(match[1]!);
  if (ids.length === 0) {
    for (const word of text.split(/\s+/)) {
      const id = bareMessageId(word);
      if (id) ids.push(id);
    }
  }
  return ids;
}

/** The words a reply adds (its own lines: src/agent/replies/own-text.ts), white space folded, at most SNIPPET_CHARS. */
export function replySnippet(text: string): string {
  const folded = ownLines(text).join(' ').replace(/\s+/g, ' ').trim();
  return folded.length <= SNIPPET_CHARS ? folded : `${folded.slice(0, SNIPPET_CHARS - 1).trimEnd()}…`;
}

/** A header line's value, unfolded, at most a line long. */
function headerValue(line: string): string {
  return line.slice(line.indexOf(':') + 1, 2000).replace(/\s+/g, ' ').trim().slice(0, 998);
}

/** The headers the classifier reads. */
function classifiedHeaders(parsed: ParsedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines) {
    if ((CLASSIFIED_HEADERS as readonly string[]).includes(key) && !(key in headers)) headers[key] = headerValue(line);
  }
  return headers;
}

/** The Message-ID of the e-mail a delivery status notification returns, from the headers it attaches. */
function returnedMessageIds(parsed: ParsedMail): string[] {
  const ids: string[] = [];
  for (const part of parsed.attachments.slice(0, 5)) {
    if (!/^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers)$/i.test(part.contentType)) continue;
    const headers = part.content.subarray(0, 16 * 1024).toString('utf8');
    const id = /^message-id:[ \t]*<([^<>\s]{1,998})>/im.exec(headers)?.[1];
    if (id) ids.push(id);
  }
  return ids;
}

function formatAddress(address: AddressObject | AddressObject[] | undefined, envelopeFrom?: ReplyEnvelope['from']): string | null {
  const first = (Array.isArray(address) ? address[0] : address)?.value[0] ?? envelopeFrom?.[0];
  if (!first?.address) return null;
  const shown = first.name ? `${first.name.replace(/[\r\n"<>]/g, ' ').trim()} <${first.address}>` : first.address;
  return shown.slice(0, 320);
}

function received(message: ReplyMessage, parsedDate?: Date): Date {
  const dated = [message.envelope?.date, parsedDate, message.internalDate]
    .map((d) => (d ? new Date(d) : null)).find((d) => d && !Number.isNaN(d.getTime()));
  return dated && dated.getTime() < message.now.getTime() ? dated : message.now;
}

function messageIdOf(message: ReplyMessage, parsedId: string | undefined): string {
  const source = message.source.subarray(0, MAX_BYTES_PER_MESSAGE);
  return bareMessageId(message.envelope?.messageId ?? parsedId ?? '')
    // A message without an id of its own still counts once: it is known by a digest of what was read of it.
    ?? `no-message-id.${createHash('sha256').update(source).digest('hex').slice(0, 32)}@leadrun.invalid`;
}

/** Reads what matters of one message from its first MAX_BYTES_PER_MESSAGE bytes: the task `readReply`. */
export async function readReply(message: ReplyMessage): Promise<ReplyCandidate> {
  // Loaded in the pool thread that first reads a reply, not in every thread of the pool nor on the main thread.
  const [{ simpleParser }, { htmlReplyText }, { classifyReply, MAX_OWN_CHARS }] = await Promise.all([
    import('mailparser'), import('./reply-html.ts'), import('../agent/replies/classify.ts'),
  ]);
  const source = message.source.subarray(0, MAX_BYTES_PER_MESSAGE);
  const parsed = await simpleParser(Buffer.from(source.buffer, source.byteOffset, source.byteLength), {
    skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true,
  });
  const text = parsed.text || (typeof parsed.html === 'string' ? htmlReplyText(parsed.html) : '');
  const inReplyTo = messageIdsIn(message.envelope?.inReplyTo ?? parsed.inReplyTo);
  const references = [...messageIdsIn(parsed.references).slice(-MAX_REFERENCES), ...returnedMessageIds(parsed)];
  const receivedAt = received(message, parsed.date);
  const said = text.slice(0, MAX_BYTES_PER_MESSAGE);
  const dateLine = parsed.headerLines.find((h) => h.key === 'date')?.line;
  // The reply's own words, as the offline classifier reads them and a model is shown them.
  const reading: ReplyInput = {
    headers: classifiedHeaders(parsed), text: ownLines(said).join('\n').slice(0, MAX_OWN_CHARS), date: dateLine ? headerValue(dateLine) : null, receivedAt,
  };
  return {
    messageId: messageIdOf(message, parsed.messageId),
    references: [...new Set([...inReplyTo, ...references])].slice(0, MAX_REFERENCES + 1),
    from: formatAddress(parsed.from, message.envelope?.from),
    subject: (message.envelope?.subject ?? parsed.subject ?? '').slice(0, 300) || null,
    receivedAt,
    snippet: replySnippet(said),
    classification: classifyReply(reading),
    reading,
  };
}

/**
 * A message that could not be read within its budget, known by what the server's envelope says: it still counts as
 * a reply when its In-Reply-To names a delivered e-mail, without a snippet.
 */
export function envelopeReply(message: ReplyMessage): ReplyCandidate {
  return {
    messageId: messageIdOf(message, undefined),
    references: messageIdsIn(message.envelope?.inReplyTo).slice(0, MAX_REFERENCES + 1),
    from: formatAddress(undefined, message.envelope?.from),
    subject: (message.envelope?.subject ?? '').slice(0, 300) || null,
    receivedAt: received(message),
    snippet: '',
    // Nothing of it was read: what it says is not known.
    classification: classified('other'),
    reading: { headers: {}, text: '', date: null, receivedAt: received(message) },
  };
}

// The e-mail a delivery sends (DESIGN §7): plain text, from the sender in their own name at the workspace's
// address, Reply-To the sender, and the Message-ID fixed when the delivery was made, so that a resend after a crash
// is the same message. Composed by nodemailer (its stream transport runs MailComposer and hands the bytes back).
import { randomUUID } from 'node:crypto';
import type { Address } from './settings.ts';

export interface OutgoingMessage {
  from: Address;
  to: string;
  replyTo: string | null;
  subject: string;
  body: string;
  signature: string | null;
  messageId: string;
  date: Date;
}

/** The mail domain of an address (what a Message-ID ends with), or a name that cannot collide with a real one. */
export function mailDomain(address: string | null | undefined): string {
  const domain = address?.split('@').pop()?.trim().toLowerCase();
  return domain && address!.includes('@') && /^[a-z0-9.-]+$/.test(domain) ? domain : 'leadrun.invalid';
}

/** A new Message-ID, `<uuid@domain>`, for a message from `fromAddress`. */
export function newMessageId(fromAddress: string | null | undefined): string {
  return `<${randomUUID()}@${mailDomain(fromAddress)}>`;
}

/**
 * The body as sent: the draft's text and, when the sender has a signature the draft does not already end with (WRITER
 * signs the drafts it writes), the signature below the standard "-- " line.
 */
export function messageText(body: string, signature: string | null): string {
  const text = body.replace(/\s+$/, '');
  const own = signature?.replace(/\s+$/, '') ?? '';
  if (!own.trim() || normalised(text).endsWith(normalised(own))) return `${text}\n`;
  return `${text}\n\n-- \n${own}\n`;
}

/** Line endings and trailing spaces aside, so that an edit's \r\n or a stripped space does not hide a signature. */
const normalised = (text: string) => text.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').trim();

/** Made by the first message composed: nodemailer is not loaded by every process that starts (docs/PERFORMANCE.md). */
let composer: ReturnType<typeof makeComposer> | null = null;

async function makeComposer() {
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
}

/** The message as RFC 5322 bytes, ready for SMTP DATA or IMAP APPEND. */
export async function composeMessage(message: OutgoingMessage): Promise<Buffer> {
  composer ??= makeComposer();
  const info = await (await composer).sendMail({
    from: { name: message.from.name ?? '', address: message.from.address },
    to: message.to,
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    subject: message.subject,
    text: messageText(message.body, message.signature),
    messageId: message.messageId,
    date: message.date,
    // Nothing in a draft may make the message fetch a file or a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return info.message as Buffer;
}

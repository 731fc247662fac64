// The e-mail a delivery sends (DESIGN §7): plain text, from the sender in their own name at the workspace's
// address, Reply-To the sender, and the Message-ID fixed when the delivery was made, so that a resend after a crash
// is the same message. Composed by nodemailer (its stream transport runs MailComposer and hands the bytes back).
import { randomUUID } from 'node:crypto';
import { signedBody } from '../agent/sign-off.ts';
import type { Address } from '../domain/mail-settings/settings.ts';

export interface OutgoingMessage {
  from: Address;
  /** An address, or an address with the name the To header shows (the lead's), which nodemailer quotes and encodes. */
  to: string | Address;
  replyTo: string | null;
  subject: string;
  body: string;
  signature: string | null;
  messageId: string;
  date: Date;
  /** A follow-up's thread (DESIGN §13): the previous touch's Message-ID, and every earlier one, oldest first. */
  inReplyTo?: string | null;
  references?: readonly string[];
  /** Further headers, written as they are (List-Unsubscribe, src/mail/unsubscribe-headers.ts). */
  headers?: Record<string, string>;
  /** Plain text under the signature (the workspace's footer). */
  footer?: string | null;
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
 * The body as sent, signed as WRITER signs (src/agent/sign-off.ts): a draft that already ends with the sender's
 * signature is sent as it is; otherwise the signature is added under its `-- ` line, in place of a sign-off that
 * named the sender without it, so that the name is never there twice.
 */
export function messageText(body: string, signature: string | null, senderName: string | null = null): string {
  return `${signedBody(body, { name: senderName, signature })}\n`;
}

/**
 * A display name safe in a header: no line breaks or other control characters (no header can be injected through a
 * lead's name), spaces collapsed. Quoting and encoding (`"O'Brien, Seán"`, RFC 2047 for é) are nodemailer's.
 */
export function displayName(name: string | null | undefined): string {
  return (name ?? '').replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').replace(/\s+/g, ' ').trim();
}

/** The text with the footer under it, apart from the signature by an empty line. */
const withFooter = (text: string, footer: string | null) => (footer ? `${text}\n${footer}\n` : text);

/** Made by the first message composed: nodemailer is not loaded by every process that starts. */
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
    to: typeof message.to === 'string' ? message.to
      : { name: displayName(message.to.name), address: message.to.address },
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    subject: message.subject,
    text: withFooter(messageText(message.body, message.signature, message.from.name), message.footer ?? null),
    ...(message.headers ? { headers: Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, { prepared: true, value: v }])) } : {}),
    messageId: message.messageId,
    date: message.date,
    ...(message.inReplyTo ? { inReplyTo: message.inReplyTo } : {}),
    ...(message.references?.length ? { references: [...message.references] } : {}),
    // Nothing in a draft may make the message fetch a file or a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return info.message as Buffer;
}

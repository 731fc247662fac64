// A buyer's reply as a mail server stores it, for the tests that put replies into Dovecot and let the reply check
// find them (effects, sequence-effects, response).
import { randomBytes } from 'node:crypto';

export interface ReplyMessageOptions {
  /** The From header; Daniel Ng at Acme unless given. */
  from?: string;
  /** The Message-ID, angle brackets included; a new one unless given. */
  messageId?: string;
}

/** A plain-text reply to `inReplyTo`, written at `date` (an RFC 5322 date), saying `body`. */
export function replyMessage(inReplyTo: string, date: string, body: string, options: ReplyMessageOptions = {}): string {
  return [
    `From: ${options.from ?? 'Daniel Ng <daniel@acme.example>'}`, 'To: Rep Example <rep@example.com>', 'Subject: Re: A pilot outline for Acme',
    `Message-ID: ${options.messageId ?? `<${randomBytes(8).toString('hex')}@acme.example>`}`, `Date: ${date}`, `In-Reply-To: ${inReplyTo}`,
    'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', body, '',
  ].join('\r\n');
}

// Delivery status notifications (RFC 3464) found by the reply check (DESIGN §15): a `multipart/report;
// report-type=delivery-status` message says which recipients of which sent message failed, and with what status. The
// MIME is mailparser's; the message/delivery-status part is found and read here, line by line, in time linear in its size. Runs
// in a CPU pool thread (the task `readDsn` of src/cpu/tasks.ts): the message is a stranger's.
import type { ParsedMail } from 'mailparser';
import { MAX_BYTES_PER_MESSAGE } from './reply-limits.ts';

/** The most of a delivery-status part read, and the most recipients taken from it. */
const STATUS_PART_MAX = 64 * 1024;
const RECIPIENTS_MAX = 50;

export interface DsnRecipient {
  /** The recipient's address, lower-cased (Final-Recipient, else Original-Recipient). */
  address: string;
  /** `failed`, `delayed`, `delivered`, `relayed`, `expanded`. */
  action: string;
  /** The RFC 3463 status, `5.1.1`. */
  status: string;
  diagnostic: string | null;
}

export interface Dsn {
  /** The Message-IDs (bare) of the returned message, from its attached headers. */
  messageIds: string[];
  recipients: DsnRecipient[];
}

/** A permanent failure: the recipient's server will never take it (`Action: failed`, a 5.x.x status). */
export const isPermanentFailure = (recipient: DsnRecipient) => recipient.action === 'failed' && /^5\.\d{1,3}\.\d{1,3}$/.test(recipient.status);

/** The groups of header fields of a delivery-status part, each a map of lower-cased field name to unfolded value. */
export function statusGroups(text: string): Array<Map<string, string>> {
  const groups: Array<Map<string, string>> = [];
  let group = new Map<string, string>();
  let field: string | null = null;
  for (const line of text.slice(0, STATUS_PART_MAX).split(/\r?\n/)) {
    if (line.trim() === '') {
      if (group.size > 0) groups.push(group);
      group = new Map();
      field = null;
    } else if ((line.startsWith(' ') || line.startsWith('\t')) && field) {
      // A value stops growing at its bound: a part of folded lines is not copied again for each of them.
      const value = group.get(field)!;
      if (value.length < 1000) group.set(field, `${value} ${line.trim()}`.slice(0, 1000));
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      field = line.slice(0, colon).trim().toLowerCase();
      if (!group.has(field)) group.set(field, line.slice(colon + 1).trim().slice(0, 1000));
    }
  }
  if (group.size > 0) groups.push(group);
  return groups;
}

/** `rfc822; ada@example.com` → `ada@example.com`. */
function addressOf(value: string | undefined): string | null {
  if (!value) return null;
  const address = (value.includes(';') ? value.slice(value.indexOf(';') + 1) : value).trim().replace(/^<|>$/g, '').toLowerCase();
  return address.includes('@') && address.length <= 254 ? address : null;
}

/** The recipients of a delivery-status part: every group after the first (the per-message one) that names one. */
export function statusRecipients(text: string): DsnRecipient[] {
  const recipients: DsnRecipient[] = [];
  for (const group of statusGroups(text)) {
    const address = addressOf(group.get('final-recipient')) ?? addressOf(group.get('original-recipient'));
    if (!address) continue;
    recipients.push({
      address,
      action: (group.get('action') ?? '').toLowerCase().trim(),
      status: /^\s*(\d\.\d{1,3}\.\d{1,3})/.exec(group.get('status') ?? '')?.[1] ?? '',
      diagnostic: group.get('diagnostic-code') ?? null,
    });
    if (recipients.length === RECIPIENTS_MAX) break;
  }
  return recipients;
}

const RETURNED = /^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers|message\/global|message\/global-headers)$/i;

/** The Message-ID of the returned message, from the headers it attaches (before their first empty line). */
function returnedIds(parsed: ParsedMail): string[] {
  const ids: string[] = [];
  for (const part of parsed.attachments.slice(0, 10)) {
    if (!RETURNED.test(part.contentType)) continue;
    const text = part.content.subarray(0, 32 * 1024).toString('utf8');
    const end = text.search(/\r?\n\r?\n/);
    const headers = end < 0 ? text : text.slice(0, end);
    const id = /^message-id:[ \t]*(?:\r?\n[ \t]+)?<([^<>\s]{1,998})>/im.exec(headers)?.[1];
    if (id) ids.push(id);
  }
  return ids;
}

/** The report's boundary when the parsed message is a delivery status notification; null otherwise. */
function reportBoundary(parsed: ParsedMail): string | null {
  const type = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const isReport = type?.value?.toLowerCase() === 'multipart/report' && type.params?.['report-type']?.toLowerCase() === 'delivery-status';
  return isReport ? type.params?.boundary ?? null : null;
}

/**
 * The body of the report's message/delivery-status part, found among its top-level parts by the boundary: mailparser
 * reads that part as text and runs it into the message's text, so it is taken from the source, one pass over it.
 */
export function deliveryStatusPart(source: string, boundary: string): string | null {
  const delimiter = `--${boundary}`;
  let at = source.indexOf(delimiter);
  while (at >= 0) {
    const start = source.indexOf('\n', at);
    if (start < 0) return null;
    const next = source.indexOf(delimiter, start);
    const part = source.slice(start + 1, next < 0 ? source.length : next);
    const split = part.search(/\r?\n\r?\n/);
    const headers = (split < 0 ? part : part.slice(0, split)).toLowerCase().replace(/\r?\n[ \t]+/g, ' ');
    if (/^content-type:\s*message\/(global-)?delivery-status/m.test(headers)) {
      const body = split < 0 ? '' : part.slice(split).replace(/^\r?\n\r?\n/, '');
      return /^content-transfer-encoding:\s*base64/m.test(headers) ? Buffer.from(body, 'base64').toString('utf8') : body;
    }
    at = next;
  }
  return null;
}

/** Reads a message as a delivery status notification; null when it is none. The task `readDsn`. */
export async function readDsn(source: Uint8Array): Promise<Dsn | null> {
  const { simpleParser } = await import('mailparser');
  const bytes = source.subarray(0, MAX_BYTES_PER_MESSAGE);
  const parsed = await simpleParser(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true,
  });
  const boundary = reportBoundary(parsed);
  if (!boundary) return null;
  const status = deliveryStatusPart(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), boundary);
  if (status === null) return null;
  const recipients = statusRecipients(status.slice(0, STATUS_PART_MAX));
  return { messageIds: returnedIds(parsed), recipients };
}

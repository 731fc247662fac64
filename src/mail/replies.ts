// Replies (DESIGN §7): the sender's inbox is read every 60 s (MAIL_REPLY_CHECK_SECONDS) for messages whose In-Reply-To or References name the
// Message-ID of an e-mail leadrun delivered. A match becomes an `email_replies` row, the lead's `lastReplyAt`, a
// `draft.replied` run event and an audit entry, written in one transaction with the inbox cursor, so a check that
// dies half-way is simply done again: the UNIQUE (delivery_id, message_id) keeps a reply from being counted twice.
//
// Glossary: the cursor (`mailbox_cursors`) is the inbox's UIDVALIDITY and the highest UID read. A UIDVALIDITY that
// changed means the server renumbered the inbox: the check reads the last RESCAN_DAYS by date instead.
import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { simpleParser, type AddressObject } from 'mailparser';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { writeAudit } from '../domain/audit.ts';
import { recordEvent } from '../domain/run-events.ts';
import { enqueueJob } from '../jobs/queue.ts';
import { RetryJobError, type JobHandler } from '../jobs/types.ts';
import { connectImap, describeImapError, ImapError, type ImapOptions } from './imap.ts';
import { loadMailTransport, type ImapSettings } from './settings.ts';

export const REPLY_CHECK_KIND = 'mail.check_replies';
/** The default time between two checks of one inbox; `config.replyCheckIntervalMs` (MAIL_REPLY_CHECK_SECONDS) sets it. */
export const REPLY_CHECK_INTERVAL_MS = 60_000;
/** At most this many messages are read in one check; the next check goes on from the cursor. */
export const MAX_MESSAGES_PER_CHECK = 500;
/** At most this much of a message is read: its headers and the start of its text. */
export const MAX_BYTES_PER_MESSAGE = 64 * 1024;
/** How far back a first check, or one after the server renumbered the inbox, reads. */
export const RESCAN_DAYS = 14;
const SNIPPET_CHARS = 300;
/** Referenced Message-IDs taken from one message: In-Reply-To, then the newest References. */
const MAX_REFERENCES = 100;
const MAX_ID_LENGTH = 998;

export interface ReplyCheckResult {
  /** Messages read in this check. */
  read: number;
  /** Replies recorded in this check (not those found before). */
  found: number;
  uidValidity: string;
  lastUid: number;
  /** True when the cursor was missing or the inbox renumbered, and the last RESCAN_DAYS were read by date. */
  rescanned: boolean;
}

interface Candidate {
  messageId: string;
  references: string[];
  from: string | null;
  subject: string | null;
  receivedAt: Date;
  snippet: string;
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

/**
 * The words a reply adds, for a glance: quoted lines (`>`) and the quoted message under "On … wrote:" (or
 * Outlook's "-----Original Message-----" / "From: … Sent:") left out, white space folded, at most SNIPPET_CHARS.
 */
export function replySnippet(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (/^-{2,}\s*Original Message\s*-{2,}$/i.test(trimmed)) break;
    if (/^From:\s/i.test(trimmed) && lines.slice(i + 1, i + 4).some((l) => /^(Sent|Date):\s/i.test(l.trim()))) break;
    // "On Tue, 3 Mar 2026 at 10:00, Rep <rep@x> wrote:", which clients wrap over two or three lines.
    if (/^(On|Am|Le|El|Il|Op)\s/.test(trimmed)) {
      const joined = lines.slice(i, i + 3).map((l) => l.trim()).join(' ');
      if (/^(On|Am|Le|El|Il|Op)\s.{0,300}?(wrote|schrieb|a écrit|escribió|ha scritto|schreef)\s*:/.test(joined)) break;
    }
    if (trimmed.startsWith('>')) continue;
    if (trimmed === '--' || line === '-- ') break;
    kept.push(trimmed);
  }
  const folded = kept.join(' ').replace(/\s+/g, ' ').trim();
  return folded.length <= SNIPPET_CHARS ? folded : `${folded.slice(0, SNIPPET_CHARS - 1).trimEnd()}…`;
}

function formatAddress(address: AddressObject | AddressObject[] | undefined, envelopeFrom?: Array<{ name?: string; address?: string }>): string | null {
  const first = (Array.isArray(address) ? address[0] : address)?.value[0] ?? envelopeFrom?.[0];
  if (!first?.address) return null;
  const shown = first.name ? `${first.name.replace(/[\r\n"<>]/g, ' ').trim()} <${first.address}>` : first.address;
  return shown.slice(0, 320);
}

/** Reads what matters of one message from its first MAX_BYTES_PER_MESSAGE bytes. */
async function readCandidate(
  source: Buffer, envelope: { messageId?: string; inReplyTo?: string; date?: Date | string; from?: Array<{ name?: string; address?: string }>; subject?: string } | undefined,
  internalDate: Date | string | undefined, now: Date,
): Promise<Candidate> {
  const parsed = await simpleParser(source, { skipHtmlToText: false, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
  const messageId = bareMessageId(envelope?.messageId ?? parsed.messageId ?? '')
    // A message without an id of its own still counts once: it is known by a digest of what was read of it.
    ?? `no-message-id.${createHash('sha256').update(source).digest('hex').slice(0, 32)}@leadrun.invalid`;
  const inReplyTo = messageIdsIn(envelope?.inReplyTo ?? parsed.inReplyTo);
  const references = messageIdsIn(parsed.references);
  const wanted = [...new Set([...inReplyTo, ...references.slice(-MAX_REFERENCES)])].slice(0, MAX_REFERENCES + 1);
  const dated = [envelope?.date, parsed.date, internalDate].map((d) => (d ? new Date(d) : null)).find((d) => d && !Number.isNaN(d.getTime()));
  const receivedAt = dated && dated.getTime() < now.getTime() ? dated : now;
  const text = parsed.text ?? '';
  return {
    messageId,
    references: wanted,
    from: formatAddress(parsed.from, envelope?.from),
    subject: (envelope?.subject ?? parsed.subject ?? '').slice(0, 300) || null,
    receivedAt,
    snippet: replySnippet(text.slice(0, MAX_BYTES_PER_MESSAGE)),
  };
}

/**
 * Reads the inbox from the cursor on (at most MAX_MESSAGES_PER_CHECK messages, MAX_BYTES_PER_MESSAGE of each) and
 * records the replies to the workspace's delivered e-mails. Throws ImapError (a human message) when the mailbox
 * cannot be read; nothing is written then.
 */
export async function checkReplies(
  db: Kysely<DB>, workspaceId: string, imap: ImapSettings, clock: Clock, opts: ImapOptions & { maxMessages?: number },
): Promise<ReplyCheckResult> {
  const maxMessages = opts.maxMessages ?? MAX_MESSAGES_PER_CHECK;
  const cursor = await db.selectFrom('mailbox_cursors').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  const client = await connectImap(imap, opts);
  const candidates: Candidate[] = [];
  let uidValidity: string;
  let lastUid: number;
  let rescanned: boolean;
  try {
    // EXAMINE, not SELECT: reading the inbox must not mark anything \Seen or take \Recent from the rep's own client.
    const lock = await client.getMailboxLock('INBOX', { readOnly: true });
    try {
      const mailbox = client.mailbox;
      if (!mailbox) throw new Error('The inbox could not be opened.');
      uidValidity = String(mailbox.uidValidity);
      rescanned = !cursor || String(cursor.uid_validity) !== uidValidity;
      const from = rescanned ? 0 : Number(cursor!.last_uid);
      const now = clock.now();
      let uids: number[] = [];
      if (mailbox.exists > 0) {
        const found = rescanned
          ? await client.search({ since: new Date(now.getTime() - RESCAN_DAYS * 86_400_000) }, { uid: true })
          : await client.search({ uid: `${from + 1}:*` }, { uid: true });
        // `n:*` names the last message even when its UID is below n: only UIDs past the cursor are new.
        uids = (found || []).filter((uid) => uid > from).sort((a, b) => a - b);
      }
      const taken = uids.slice(0, maxMessages);
      const highestKnown = Math.max(from, mailbox.uidNext - 1);
      lastUid = taken.length < uids.length ? taken[taken.length - 1]! : Math.max(highestKnown, taken[taken.length - 1] ?? 0);
      if (taken.length > 0) {
        for await (const message of client.fetch(taken, {
          uid: true, envelope: true, internalDate: true, source: { maxLength: MAX_BYTES_PER_MESSAGE },
        }, { uid: true })) {
          opts.signal?.throwIfAborted();
          const source = message.source ?? Buffer.alloc(0);
          candidates.push(await readCandidate(source.subarray(0, MAX_BYTES_PER_MESSAGE), message.envelope, message.internalDate, now));
        }
      }
    } finally {
      lock.release();
    }
    await client.logout().catch(() => client.close());
  } catch (error) {
    client.close();
    opts.signal?.throwIfAborted();
    throw error instanceof ImapError ? error : new ImapError(describeImapError(error, imap));
  }

  const found = await recordReplies(db, workspaceId, candidates, { uidValidity, lastUid }, clock);
  return { read: candidates.length, found, uidValidity, lastUid, rescanned };
}

/** Writes the matches and the cursor in one transaction; answers how many replies were new. */
async function recordReplies(
  db: Kysely<DB>, workspaceId: string, candidates: Candidate[], cursor: { uidValidity: string; lastUid: number }, clock: Clock,
): Promise<number> {
  const ids = [...new Set(candidates.flatMap((c) => c.references))];
  const deliveries = ids.length === 0 ? [] : (await sql<{ id: string; run_id: string; message_id: string }>`
    SELECT id, run_id, message_id FROM email_deliveries
    WHERE workspace_id = ${workspaceId} AND status = 'DELIVERED'
      AND message_id = ANY(${[...ids, ...ids.map((id) => `<${id}>`)]}::text[])`.execute(db)).rows;
  const byId = new Map(deliveries.map((d) => [bareMessageId(d.message_id) ?? d.message_id, d]));

  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    let inserted = 0;
    for (const candidate of candidates) {
      const matched = new Set(candidate.references.map((id) => byId.get(id)).filter((d) => d !== undefined));
      for (const delivery of matched) {
        if (await recordReply(trx, workspaceId, delivery, candidate, now)) inserted += 1;
      }
    }
    await trx.insertInto('mailbox_cursors')
      .values({ workspace_id: workspaceId, uid_validity: cursor.uidValidity, last_uid: cursor.lastUid, checked_at: now, error: null })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ uid_validity: cursor.uidValidity, last_uid: cursor.lastUid, checked_at: now, error: null }))
      .execute();
    return inserted;
  });
}

async function recordReply(
  trx: Transaction<DB>, workspaceId: string, delivery: { id: string; run_id: string }, reply: Candidate, now: Date,
): Promise<boolean> {
  const row = await trx.insertInto('email_replies').values({
    id: randomUUID(), workspace_id: workspaceId, delivery_id: delivery.id, run_id: delivery.run_id, message_id: reply.messageId,
    from_address: reply.from, subject: reply.subject, snippet: reply.snippet, received_at: reply.receivedAt, found_at: now,
  }).onConflict((oc) => oc.columns(['delivery_id', 'message_id']).doNothing()).returning('id').executeTakeFirst();
  if (!row) return false;
  await sql`
    UPDATE leads l SET last_reply_at = GREATEST(coalesce(l.last_reply_at, ${reply.receivedAt}::timestamptz), ${reply.receivedAt}::timestamptz)
    FROM runs r WHERE r.id = ${delivery.run_id} AND r.workspace_id = ${workspaceId} AND l.id = r.lead_id AND l.workspace_id = ${workspaceId}`.execute(trx);
  await recordEvent(trx, { runId: delivery.run_id, workspaceId, type: 'draft.replied', at: now });
  await writeAudit(trx, {
    workspaceId, source: 'system', action: 'draft.replied', target: { type: 'run', id: delivery.run_id }, outcome: 'success', occurredAt: now,
  });
  return true;
}

/** Stores why the last check failed, where Settings / E-mail and the next check can see it. */
export async function recordReplyCheckError(db: Kysely<DB>, workspaceId: string, error: string, now: Date): Promise<void> {
  await db.insertInto('mailbox_cursors')
    // Without a cursor yet, UIDVALIDITY 0 matches no inbox: the next successful check reads the last days by date.
    .values({ workspace_id: workspaceId, uid_validity: 0, last_uid: 0, checked_at: now, error: error.slice(0, 1000) })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ checked_at: now, error: error.slice(0, 1000) }))
    .execute();
}

/**
 * Queues the workspace's periodic reply check when IMAP is set up and none is queued or running (the live-key
 * index makes a second one a no-op). Call it in the transaction that saves the mail settings.
 */
export async function scheduleReplyChecks(trx: Kysely<DB>, workspaceId: string, at: Date = new Date()): Promise<boolean> {
  const settings = await trx.selectFrom('mail_settings').select(['imap_host', 'imap_password'])
    .where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!settings?.imap_host || !settings.imap_password) return false;
  const job = await enqueueJob(trx, {
    kind: REPLY_CHECK_KIND, key: workspaceId, workspaceId, payload: {}, maxAttempts: replyCheckHandler.maxAttempts, availableAt: at,
  });
  return job.created;
}

/**
 * The periodic reply check of one workspace (key: the workspace id). It runs again `config.replyCheckIntervalMs`
 * (60 s unless MAIL_REPLY_CHECK_SECONDS says otherwise) after each check; a failed
 * check is retried with backoff, its error kept on the cursor. Without IMAP settings the job ends: saving them
 * schedules it again.
 */
export const replyCheckHandler: JobHandler = {
  kind: REPLY_CHECK_KIND,
  // At the longest backoff this is about a day of failing checks before the job gives up.
  maxAttempts: 100,
  concurrency: 2,
  leaseMs: 5 * 60_000,
  backoffMs: (attempt) => Math.min(60_000 * 2 ** Math.max(0, attempt - 1), 15 * 60_000),
  async run(job, ctx) {
    const workspaceId = job.workspaceId ?? job.key;
    if (!workspaceId) throw new Error('a reply check needs a workspace');
    const transport = await loadMailTransport(ctx.db, workspaceId, ctx.secrets(), ctx.config);
    if (!transport.imap) {
      await ctx.db.transaction().execute(async (trx) => { await ctx.finish(trx); });
      return;
    }
    try {
      await checkReplies(ctx.db, workspaceId, transport.imap, ctx.clock, { allowPrivateHosts: ctx.config.allowPrivateHosts, signal: ctx.signal });
    } catch (error) {
      // The mailbox could not be read: the admin sees why; a database failure is the runner's to retry and log.
      if (ctx.signal.aborted || !(error instanceof ImapError)) throw error;
      await recordReplyCheckError(ctx.db, workspaceId, error.message, ctx.clock.now());
      throw new RetryJobError(error.message);
    }
    return { again: new Date(ctx.clock.now().getTime() + ctx.config.replyCheckIntervalMs) };
  },
  async onDead(trx, job, error) {
    const workspaceId = job.workspaceId ?? job.key;
    if (workspaceId) {
      await recordReplyCheckError(trx, workspaceId, `Reply checks stopped after repeated failures (${error.message}). Saving the IMAP settings starts them again.`, new Date());
    }
  },
};

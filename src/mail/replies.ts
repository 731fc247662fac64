// Replies (DESIGN §7): the sender's inbox is read every 60 s (MAIL_REPLY_CHECK_SECONDS) for messages whose In-Reply-To or References name the
// Message-ID of an e-mail leadrun delivered. A match becomes an `email_replies` row, the lead's `lastReplyAt`, a
// `draft.replied` run event and an audit entry, written in one transaction with the inbox cursor, so a check that
// dies half-way is simply done again: the UNIQUE (delivery_id, message_id) keeps a reply from being counted twice.
//
// Each reply is stored with what it says (DESIGN §16): the offline classifier's reading, made in the pool thread that
// read the message, or, with a model set up (LLM_BASE_URL), the model's, the offline reading standing in when the
// model gives none.
//
// Glossary: the cursor (`mailbox_cursors`) is the inbox's UIDVALIDITY and the highest UID read. A UIDVALIDITY that
// changed means the server renumbered the inbox: the check reads the last RESCAN_DAYS by date instead.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { ReplyClassifier } from '../agent/replies/model.ts';
import type { ReplyClassification } from '../agent/replies/types.ts';
import type { Clock } from '../clock.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import { applyReplyEffects } from '../domain/replies/effects.ts';
import { applyTransition, DELIVERY } from '../domain/runs/lifecycle.ts';
import { enqueueJob, JOBS_CHANNEL } from '../jobs/sql/enqueueJob.ts';
import { isAttemptFailure, RetryableError } from '../jobs/errors.ts';
import { exponentialBackoff } from '../jobs/retry.ts';
import type { JobHandler } from '../jobs/types.ts';
import { connectImap, describeImapError, type ImapOptions } from './imap.ts';
import { writeAudit } from '../domain/audit/audit.ts';
import { bareMessageId, envelopeReply, MAX_BYTES_PER_MESSAGE, type ReplyCandidate, type ReplyMessage } from './reply-reading.ts';
import { loadMailTransport, type ImapSettings } from '../domain/mail-settings/settings.ts';
import { readBounces, recordBounces } from './bounces.ts';
import type { Dsn } from './dsn.ts';

export const REPLY_CHECK_KIND = 'mail.check_replies';
/** The default time between two checks of one inbox; `config.replyCheckIntervalMs` (MAIL_REPLY_CHECK_SECONDS) sets it. */
export const REPLY_CHECK_INTERVAL_MS = 60_000;
/** At most this many messages are read in one check; the next check goes on from the cursor. */
export const MAX_MESSAGES_PER_CHECK = 500;
/** How many replies are classified at once (by a model: requests in flight). */
const CLASSIFIED_AT_ONCE = 4;
/** How far back a first check, or one after the server renumbered the inbox, reads. */
export const RESCAN_DAYS = 14;

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

export interface ReplyCheckOptions extends ImapOptions {
  cpu: CpuPool;
  maxMessages?: number;
  /** Classifies the replies found in place of the offline classifier (a model); none: the offline reading stands. */
  classifier?: ReplyClassifier | null;
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Reads the inbox from the cursor on (at most MAX_MESSAGES_PER_CHECK messages, MAX_BYTES_PER_MESSAGE of each) and
 * records the replies to the workspace's delivered e-mails. Throws RetryableError or PermanentError (a human message) when the mailbox
 * cannot be read; nothing is written then.
 */
export async function checkReplies(
  db: Kysely<DB>, workspaceId: string, imap: ImapSettings, clock: Clock, opts: ReplyCheckOptions,
): Promise<ReplyCheckResult> {
  const maxMessages = opts.maxMessages ?? MAX_MESSAGES_PER_CHECK;
  const cursor = await db.selectFrom('mailbox_cursors').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  const client = await connectImap(imap, opts);
  const messages: ReplyMessage[] = [];
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
          // A copy of its own: a view into a larger buffer would take all of that buffer to the pool thread.
          const source = new Uint8Array((message.source ?? Buffer.alloc(0)).subarray(0, MAX_BYTES_PER_MESSAGE));
          messages.push({ source, envelope: message.envelope, internalDate: message.internalDate, now });
        }
      }
    } finally {
      lock.release();
    }
    await client.logout().catch(() => client.close());
  } catch (error) {
    client.close();
    opts.signal?.throwIfAborted();
    throw isAttemptFailure(error) ? error : new RetryableError(describeImapError(error, imap));
  }

  // Read after the mailbox is let go, in the CPU pool's threads.
  const candidates = await Promise.all(messages.map((message) => readMessage(opts.cpu, message, opts.signal)));
  const bounces = await readBounces(opts.cpu, messages, opts.signal);
  const found = await recordReplies(db, workspaceId, candidates, { uidValidity, lastUid }, clock, opts, bounces);
  return { read: candidates.length, found, uidValidity, lastUid, rescanned };
}

/**
 * One message read in a pool thread within the CPU budget. A message that cannot be read there (over the budget,
 * or a parser failure) is known by its envelope instead: it is counted, and the check goes on past it.
 */
async function readMessage(cpu: CpuPool, message: ReplyMessage, signal: AbortSignal | undefined): Promise<ReplyCandidate> {
  try {
    return await cpu.run('readReply', message, { signal });
  } catch {
    signal?.throwIfAborted();
    return envelopeReply(message);
  }
}

/**
 * What a reply says: the classifier's reading, or the offline one when there is no classifier or it gives none (an
 * endpoint down must not hold up the replies).
 */
async function classification(candidate: ReplyCandidate, opts: ReplyCheckOptions): Promise<ReplyClassification> {
  if (!opts.classifier) return candidate.classification;
  try {
    return await opts.classifier.classify(candidate.reading, opts.signal);
  } catch (error) {
    opts.signal?.throwIfAborted();
    opts.logger?.warn({ err: error, messageId: candidate.messageId }, 'a reply was classified offline: the model gave no reading');
    return candidate.classification;
  }
}

/** `work` on each item, `size` at a time (a model endpoint is not sent a whole inbox at once), results in order. */
async function inGroups<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...await Promise.all(items.slice(i, i + size).map(work)));
  return results;
}

/** Writes the matches and the cursor in one transaction; answers how many replies were new. */
async function recordReplies(
  db: Kysely<DB>, workspaceId: string, candidates: ReplyCandidate[], cursor: { uidValidity: string; lastUid: number }, clock: Clock,
  opts: ReplyCheckOptions, bounces: Dsn[] = [],
): Promise<number> {
  const ids = [...new Set(candidates.flatMap((c) => c.references))];
  const deliveries = ids.length === 0 ? [] : (await sql<{ id: string; run_id: string; message_id: string }>`
    SELECT id, run_id, message_id FROM email_deliveries
    -- A bounced e-mail's replies are kept too: a report can come before the person's own answer, or be wrong.
    WHERE workspace_id = ${workspaceId} AND status IN ('DELIVERED', 'BOUNCED')
      AND message_id = ANY(${[...ids, ...ids.map((id) => `<${id}>`)]}::text[])`.execute(db)).rows;
  const byId = new Map(deliveries.map((d) => [bareMessageId(d.message_id) ?? d.message_id, d]));
  // Only new replies are classified (an inbox read again by date finds the old ones too), and before the transaction:
  // a model's answer is not waited for with rows locked.
  const matchedIds = candidates.filter((c) => c.references.some((id) => byId.has(id))).map((c) => c.messageId);
  const known = new Set(matchedIds.length === 0 ? [] : (await db.selectFrom('email_replies').select('message_id')
    .where('workspace_id', '=', workspaceId).where('delivery_id', 'in', deliveries.map((d) => d.id))
    .where('message_id', 'in', matchedIds).execute()).map((r) => r.message_id));
  const replies = await inGroups(candidates, CLASSIFIED_AT_ONCE, async (candidate) => {
    const matched = new Set(candidate.references.map((id) => byId.get(id)).filter((d) => d !== undefined));
    const fresh = matched.size > 0 && !known.has(candidate.messageId);
    return { candidate, matched, said: fresh ? await classification(candidate, opts) : candidate.classification };
  });

  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    let inserted = 0;
    for (const { candidate, matched, said } of replies) {
      for (const delivery of matched) {
        if (await recordReply(trx, workspaceId, delivery, candidate, said, now)) inserted += 1;
      }
    }
    // A delivery status notification naming a delivered e-mail bounces it (DESIGN §15).
    await recordBounces(trx, workspaceId, bounces, now);
    await trx.insertInto('mailbox_cursors')
      .values({ workspace_id: workspaceId, uid_validity: cursor.uidValidity, last_uid: cursor.lastUid, checked_at: now, error: null })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ uid_validity: cursor.uidValidity, last_uid: cursor.lastUid, checked_at: now, error: null }))
      .execute();
    return inserted;
  });
}

async function recordReply(
  trx: Transaction<DB>, workspaceId: string, delivery: { id: string; run_id: string }, reply: ReplyCandidate, said: ReplyClassification, now: Date,
): Promise<boolean> {
  const row = await trx.insertInto('email_replies').values({
    id: randomUUID(), workspace_id: workspaceId, delivery_id: delivery.id, run_id: delivery.run_id, message_id: reply.messageId,
    from_address: reply.from, subject: reply.subject, snippet: reply.snippet, received_at: reply.receivedAt, found_at: now,
    // Its own words, which a response answers ("Draft a response", src/domain/replies/response.ts).
    text: reply.reading.text || null,
    classification: said.classification, returns_on: said.returnsOn, follow_up_after: said.followUpAfter,
    referral_name: said.person?.name ?? null, referral_email: said.person?.email ?? null, classified_by: 'engine',
  }).onConflict((oc) => oc.columns(['delivery_id', 'message_id']).doNothing()).returning('id').executeTakeFirst();
  if (!row) return false;
  await sql`
    UPDATE leads l SET last_reply_at = GREATEST(coalesce(l.last_reply_at, ${reply.receivedAt}::timestamptz), ${reply.receivedAt}::timestamptz)
    FROM runs r WHERE r.id = ${delivery.run_id} AND r.workspace_id = ${workspaceId} AND l.id = r.lead_id AND l.workspace_id = ${workspaceId}`.execute(trx);
  // The draft.replied webhook carries the run, whose replies carry their class (DESIGN §16); then what the reply does.
  await applyTransition(trx, DELIVERY.reply, { workspaceId, runId: delivery.run_id, deliveryId: delivery.id, at: now });
  await applyReplyEffects(trx, { id: row.id, workspaceId, runId: delivery.run_id, from: reply.from, receivedAt: reply.receivedAt }, said, { by: 'engine', at: now });
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
 * Queues the workspace's periodic reply check for `at` when IMAP is set up (the live-key index keeps it to one per
 * workspace). Call it in the transaction that saves the mail settings: a check already queued, perhaps waiting out
 * the backoff of checks that failed with the old settings, is brought forward to `at` with its attempts counted
 * afresh, so mended settings are tried at once. Answers whether a new job was made.
 */
export async function scheduleReplyChecks(trx: Kysely<DB>, workspaceId: string, at: Date = new Date()): Promise<boolean> {
  const settings = await trx.selectFrom('mail_settings').select(['imap_host', 'imap_password'])
    .where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!settings?.imap_host || !settings.imap_password) return false;
  const job = await enqueueJob(trx, {
    kind: REPLY_CHECK_KIND, key: workspaceId, workspaceId, payload: {}, maxAttempts: replyCheckHandler.retry.maxAttempts, availableAt: at,
  });
  if (!job.created) {
    // A running check is left to its runner; it sees the settings changed under it and is retried at once (run below).
    const moved = await trx.updateTable('jobs').set({ available_at: at, attempts: 0, updated_at: at })
      .where('id', '=', job.id).where('status', '=', 'QUEUED').where('available_at', '>', at)
      .returning('id').executeTakeFirst();
    if (moved) await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${REPLY_CHECK_KIND})`.execute(trx);
  }
  return job.created;
}

/** When the workspace's mail settings were last saved, as a number to compare; null without settings. */
async function settingsSavedAt(db: Kysely<DB>, workspaceId: string): Promise<number | null> {
  const row = await db.selectFrom('mail_settings').select('updated_at')
    .where('workspace_id', '=', workspaceId).executeTakeFirst();
  return row ? new Date(row.updated_at).getTime() : null;
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
  retry: exponentialBackoff(100, 60_000, 15 * 60_000),
  concurrency: 2,
  leaseMs: 5 * 60_000,
  async run(job, ctx) {
    const workspaceId = job.workspaceId ?? job.key;
    if (!workspaceId) throw new Error('a reply check needs a workspace');
    const savedAt = await settingsSavedAt(ctx.db, workspaceId);
    const transport = await loadMailTransport(ctx.db, workspaceId, ctx.secrets(), ctx.config);
    if (!transport.imap) {
      await ctx.db.transaction().execute(async (trx) => { await ctx.finish(trx); });
      return;
    }
    const { llm } = ctx.config;
    // The AI SDK is loaded only by a worker that has a model to ask.
    const classifier = llm ? (await import('../agent/replies/model.ts')).createModelReplyClassifier(llm) : null;
    try {
      await checkReplies(ctx.db, workspaceId, transport.imap, ctx.clock, {
        allowPrivateHosts: ctx.config.allowPrivateHosts, signal: ctx.signal, cpu: ctx.cpu, classifier, logger: ctx.logger,
      });
    } catch (error) {
      // The mailbox could not be read: the admin sees why; a database failure is the runner's to retry and log.
      if (ctx.signal.aborted || !isAttemptFailure(error)) throw error;
      await recordReplyCheckError(ctx.db, workspaceId, error.message, ctx.clock.now());
      // Settings saved while this check talked to the server are tried at once, not after the backoff of the old ones.
      const changed = (await settingsSavedAt(ctx.db, workspaceId)) !== savedAt;
      throw new RetryableError(error.message, changed ? 0 : null);
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

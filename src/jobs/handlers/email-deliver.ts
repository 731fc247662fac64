// The `email.deliver` job (DESIGN §7): sends an approved draft over SMTP, or saves it to the sender's mailbox over
// IMAP, exactly once as far as a crash allows. The delivery is claimed (the suppression list, its sequence, a slot of
// its sender, then DELIVERING) in one short transaction of its own before the message is composed and the server
// contacted; the server's answer, the job's end and what the answer means (the draft SENT, the
// lead CONTACTED, the run event and the audit entry) commit together afterwards. A runner that dies in between
// leaves the job to be taken again, which sends the same message with the same Message-ID.
import { sql, type Kysely, type Transaction } from 'kysely';
import { systemClock, type Clock } from '../../clock.ts';
import type { DB, DeliveryStatus, LeadStatus } from '../../db/schema.ts';
import { DELIVERY_MAX_ATTEMPTS, EMAIL_DELIVER, type DeliverPayload } from '../../domain/runs/deliveries.ts';
import { applyTransition, DELIVERY, DRAFT, notifyFollowers } from '../../domain/runs/lifecycle.ts';
import { PermanentError, RetryableError } from '../errors.ts';
import { retrySchedule, type RetryPolicy } from '../retry.ts';
import type { ClaimedJob, JobContext, JobHandler } from '../types.ts';
import { appendDraft } from '../../mail/imap.ts';
import { composeMessage } from '../../mail/message.ts';
import { loadMailTransport, type Address } from '../../domain/mail-settings/settings.ts';
import { takeSendingSlot } from '../../domain/sending/limits.ts';
import { beginFollowUp, threadOf, touchDelivered, touchUndelivered } from '../../domain/sequences/delivery.ts';
import { RecipientRefused, sendRaw } from '../../mail/smtp.ts';
import { recordBounce } from '../../domain/suppressions/bounces.ts';
import { consentParts } from '../../mail/unsubscribe-headers.ts';
import { suppressIfListed } from '../../domain/suppressions/gate.ts';

/** After the first attempt: about 30 s, 2 min, 10 min, 30 min, then 2 h. */
const BACKOFF_MS = [30_000, 120_000, 600_000, 1_800_000, 7_200_000];

export interface DeliveryHandlerOptions {
  leaseMs: number;
  concurrency?: number;
  /** The delivery's retries; tests shorten them. */
  retry?: RetryPolicy;
  /** Certificates to trust besides the system's (see SmtpOptions.extraCa). */
  extraCa?: string | null;
  /** The time a delivery is marked FAILED at, after its last attempt. */
  clock?: Clock;
  /** The jitter of a sender's gap (src/domain/sending/limits.ts); tests fix it. */
  random?: () => number;
}

interface DeliveryRow {
  id: string;
  workspace_id: string;
  run_id: string;
  draft_id: string;
  method: 'send' | 'mailbox';
  status: DeliveryStatus;
  message_id: string;
  sender_user_id: string | null;
  subject: string;
  body: string;
  to_address: string | null;
  lead_id: string;
  /** The lead's name, which the To header shows beside the draft's address; null when the lead is gone. */
  lead_name: string | null;
}

async function loadDelivery(db: Kysely<DB>, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('email_deliveries as e')
    .innerJoin('email_drafts as d', 'd.id', 'e.draft_id')
    .innerJoin('runs as r', 'r.id', 'e.run_id')
    .leftJoin('leads as l', (join) => join.onRef('l.id', '=', 'r.lead_id')
      .onRef('l.workspace_id', '=', 'r.workspace_id'))
    .select([
      'e.id', 'e.workspace_id', 'e.run_id', 'e.draft_id', 'e.method', 'e.status', 'e.message_id', 'e.sender_user_id',
      'd.subject', 'd.body', 'd.to_address', 'r.lead_id', 'l.name as lead_name',
    ])
    .where('e.id', '=', deliveryId)
    .executeTakeFirst();
}

/** The sender as the message shows them: their own sender name (or name) at the workspace's address. */
async function senderOf(db: Kysely<DB>, userId: string | null, from: Address) {
  const user = userId
    ? await db.selectFrom('users').select(['name', 'sender_name', 'email', 'signature']).where('id', '=', userId).executeTakeFirst()
    : undefined;
  return {
    from: { name: user?.sender_name?.trim() || user?.name?.trim() || from.name, address: from.address },
    replyTo: user?.email ?? from.address,
    signature: user?.signature ?? null,
  };
}

function payloadOf(job: ClaimedJob): DeliverPayload {
  const payload = job.payload as Partial<DeliverPayload> | null;
  if (!payload || typeof payload.deliveryId !== 'string') throw new PermanentError('the job names no delivery');
  return { deliveryId: payload.deliveryId };
}

/** The longest error kept: a mail server's answer can be as long as it likes, and the API states a bound. */
const ERROR_MAX = 1000;
const excerpt = (error: string) => (error.length > ERROR_MAX ? `${error.slice(0, ERROR_MAX - 3)}...` : error);

/** What a failed attempt means for the delivery: a retry later (with the error shown), or the end. */
async function recordRetry(ctx: JobContext, delivery: DeliveryRow, failure: string): Promise<void> {
  const now = ctx.clock.now();
  const error = excerpt(failure);
  await ctx.db.transaction().execute((trx) => applyTransition(trx, DELIVERY.retry, {
    ...targetOf(delivery), at: now, set: { error }, event: { error },
  }));
}

async function markFailed(trx: Transaction<DB>, deliveryId: string, failure: string, now: Date): Promise<void> {
  const error = excerpt(failure);
  const delivery = await trx.selectFrom('email_deliveries').select(['id', 'run_id', 'workspace_id'])
    .where('id', '=', deliveryId).executeTakeFirst();
  if (!delivery) return;
  await applyTransition(trx, DELIVERY.fail, { ...targetOf(delivery), at: now, set: { error }, event: { error } });
  // A follow-up that could not go is skipped, and its sequence goes on (DESIGN §13).
  await touchUndelivered(trx, deliveryId, 'delivery_failed', now);
}

/** A 5xx to RCPT TO: the delivery BOUNCED and the address suppressed, with the job's end (DESIGN §15). */
async function recordRefusal(ctx: JobContext, delivery: DeliveryRow, error: RecipientRefused): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await ctx.finish(trx))) return;
    await recordBounce(trx, { ...targetOf(delivery), email: delivery.to_address!, error: excerpt(error.message), source: 'smtp', at: ctx.clock.now() });
  });
}

const targetOf = (delivery: { id: string; run_id: string; workspace_id: string }) =>
  ({ workspaceId: delivery.workspace_id, runId: delivery.run_id, deliveryId: delivery.id });

/**
 * Claims a delivery for sending in one transaction (DESIGN §13, §14, §15), in the order of its locks: the address's
 * and domain's suppression locks and the list (a suppressed address ends the delivery SUPPRESSED), the follow-up's
 * enrolment (a stopped sequence CANCELS it, a paused one holds it), then the delivery's row and its sender's counter
 * (a slot of the daily limit, or a wait SCHEDULED), and last DELIVERY.begin. A delivery refused or cancelled takes no
 * slot, and a slot is only ever taken with the delivery's begin, all committed together; a stop or an unsubscribe
 * racing the claim waits for it on the same locks, or is seen by it. Answers `began`, a wait (`again`: the job due
 * then), or `gone` (nothing to send).
 */
async function claimDelivery(
  ctx: JobContext, jobId: string, delivery: DeliveryRow, addresses: { from: string; to: string }, random: (() => number) | undefined,
): Promise<'began' | 'gone' | { again: Date }> {
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const listed = await suppressIfListed(trx, { ...targetOf(delivery), leadId: delivery.lead_id, to: addresses.to }, now);
    if (listed !== 'clear') return 'gone';
    const followUp = await beginFollowUp(trx, delivery.id, now);
    // Paused: tried again when the pause ends, nothing else changed.
    if (followUp instanceof Date) return { again: followUp };
    if (followUp !== 'go') return 'gone';
    const verdict = await takeSendingSlot(trx, { clock: ctx.clock, owner: ctx.owner, jobId, ...(random ? { random } : {}) }, delivery, addresses.from);
    if ('gone' in verdict) return 'gone';
    if ('again' in verdict) return verdict;
    const began = await applyTransition(trx, DELIVERY.begin, { ...targetOf(delivery), at: now, set: { attempts: sql`attempts + 1` } });
    return began > 0 ? 'began' : 'gone';
  });
}

export function deliveryHandler(options: DeliveryHandlerOptions): JobHandler {
  return {
    kind: EMAIL_DELIVER,
    retry: options.retry ?? retrySchedule(DELIVERY_MAX_ATTEMPTS, BACKOFF_MS),
    concurrency: options.concurrency ?? 2,
    leaseMs: options.leaseMs,

    async run(job, ctx) {
      const { deliveryId } = payloadOf(job);
      const delivery = await loadDelivery(ctx.db, deliveryId);
      // Erased with its lead or call, or delivered by an attempt whose runner died after committing: nothing to do.
      if (!delivery || !['SCHEDULED', 'QUEUED', 'DELIVERING'].includes(delivery.status)) return;
      const transport = await loadMailTransport(ctx.db, delivery.workspace_id, ctx.secrets(), ctx.config);
      if (!transport.from) throw new PermanentError('No sender address is set up (Settings / E-mail, or MAIL_FROM).');
      if (!delivery.to_address) throw new PermanentError('The draft has no recipient.');
      const claim = await claimDelivery(ctx, job.id, delivery, { from: transport.from.address, to: delivery.to_address }, options.random);
      if (claim !== 'began') return claim === 'gone' ? undefined : claim;
      const sender = await senderOf(ctx.db, delivery.sender_user_id, transport.from);
      // A follow-up is a reply in its thread (DESIGN §13): touch 1's subject, and the earlier touches' Message-IDs.
      const thread = await threadOf(ctx.db, delivery.id);
      const consent = await consentParts(ctx.db, ctx.secrets(), ctx.config, delivery.workspace_id, delivery.to_address, ctx.clock.now());
      const raw = await composeMessage({
        headers: consent.headers, footer: consent.footer,
        // The draft is written to the lead ("Hi Ada"), so the To header names them: `"Ada Lovelace" <ada@…>`.
        from: sender.from, to: { name: delivery.lead_name, address: delivery.to_address }, replyTo: sender.replyTo,
        subject: thread?.subject ?? delivery.subject, body: delivery.body,
        signature: sender.signature, messageId: delivery.message_id, date: ctx.clock.now(),
        ...(thread ? { inReplyTo: thread.inReplyTo, references: thread.references } : {}),
      });
      // A run page following the run learns that the delivery is under way, without an event of its own.
      await notifyFollowers(ctx.db, delivery.run_id);

      let response: string;
      try {
        if (delivery.method === 'send') {
          if (!transport.smtp) throw new PermanentError('No SMTP server is set up (Settings / E-mail, or SMTP_URL).');
          ({ response } = await sendRaw(transport.smtp, { from: transport.from.address, to: [delivery.to_address] }, raw, {
            allowPrivateHosts: ctx.config.allowPrivateHosts, extraCa: options.extraCa ?? null, signal: ctx.signal,
          }));
        } else {
          // `mailbox`: saved as a draft in the sender's own mailbox (IMAP APPEND to Drafts, \Draft), sent from their client.
          if (!transport.imap) throw new PermanentError('No IMAP mailbox is set up (Settings / E-mail).');
          ({ response } = await appendDraft(transport.imap, raw, delivery.message_id, {
            allowPrivateHosts: ctx.config.allowPrivateHosts, signal: ctx.signal, ...(options.extraCa ? { ca: options.extraCa } : {}),
          }));
        }
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        if (error instanceof RecipientRefused) return recordRefusal(ctx, delivery, error);
        if (error instanceof PermanentError) throw error;
        const message = error instanceof Error ? error.message : String(error);
        if (job.attempt < job.maxAttempts) await recordRetry(ctx, delivery, message);
        throw error instanceof RetryableError ? error : new RetryableError(message, null, { cause: error });
      }

      const now = ctx.clock.now();
      const recorded = await ctx.db.transaction().execute(async (trx) => {
        if (!(await ctx.finish(trx))) return false;
        // The draft is SENT before the delivery's event: the webhook event that the delivery's transition writes shows both.
        if (delivery.method === 'send') await applyTransition(trx, DRAFT.send, { ...targetOf(delivery), draftId: delivery.draft_id, at: now });
        const delivered = delivery.method === 'send' ? DELIVERY.send : DELIVERY.saveToMailbox;
        await applyTransition(trx, delivered, { ...targetOf(delivery), at: now, set: { delivered_at: now, response: response.slice(0, 1000), error: null } });
        await touchDelivered(trx, delivery.id, now);
        if (delivery.method === 'send') {
          // A sent e-mail moves a lead in DISCOVERY to CONTACTED; a lead further along stays where it is.
          await trx.updateTable('leads')
            .set((eb) => ({
              last_contacted_at: now,
              status: sql<LeadStatus>`CASE WHEN ${eb.ref('status')} = 'DISCOVERY' THEN 'CONTACTED' ELSE ${eb.ref('status')} END`,
              updated_at: now,
            }))
            .where('id', '=', delivery.lead_id).where('workspace_id', '=', delivery.workspace_id).execute();
        }
        return true;
      });
      if (!recorded) ctx.logger.warn({ deliveryId: delivery.id }, 'the job was taken over before its delivery could be recorded');
    },

    async onDead(trx, job, error) {
      const payload = job.payload as Partial<DeliverPayload> | null;
      if (typeof payload?.deliveryId === 'string') await markFailed(trx, payload.deliveryId, error.message, (options.clock ?? systemClock).now());
    },
  };
}

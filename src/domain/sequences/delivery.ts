// What the email.deliver job (src/jobs/handlers/email-deliver.ts) asks of a follow-up's delivery: whether it may
// still go, asked in the transaction that claims it (DELIVERY.begin), and the thread it is a reply in.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { recordSequenceEvent } from './events.ts';
import { threadSubject, touchDelivered, touchUndelivered } from './touches.ts';

export { touchDelivered, touchUndelivered };

/**
 * In the transaction that claims a delivery, before the mail server is contacted: `go` for a delivery that is no
 * follow-up's, whose enrolment is ACTIVE, or that is a response (it answers the reply that stopped the sequence;
 * the suppression list still stands in its way); `cancelled` when the enrolment stopped (the delivery CANCELLED, its touch
 * SKIPPED, nothing sent), or the end of a pause, when the job is to be tried again. The enrolment's row is locked
 * (FOR SHARE), so a stop waits for this claim to commit, and a claim waits for a stop.
 */
export async function beginFollowUp(trx: Kysely<DB>, deliveryId: string, now: Date): Promise<'go' | 'cancelled' | Date> {
  const row = await trx.selectFrom('touches as t').innerJoin('enrolments as n', 'n.id', 't.enrolment_id')
    .select(['t.id', 't.number', 't.run_id', 't.workspace_id', 't.kind', 'n.status', 'n.stop_reason', 'n.paused_until'])
    .where('t.delivery_id', '=', deliveryId).where('t.number', '>', 1).forShare('n').executeTakeFirst();
  if (!row || row.status === 'ACTIVE' || row.kind === 'response') return 'go';
  if (row.status === 'PAUSED') return row.paused_until ?? new Date(now.getTime() + 60 * 60_000);
  const reason = row.stop_reason ?? 'stopped';
  await trx.updateTable('email_deliveries').set({ status: 'CANCELLED', error: 'The sequence stopped before it was sent.' })
    .where('id', '=', deliveryId).where('status', 'in', ['SCHEDULED', 'QUEUED', 'DELIVERING']).execute();
  const skipped = await trx.updateTable('touches').set({ status: 'SKIPPED', skip_reason: reason, ready_at: null, updated_at: now })
    .where('id', '=', row.id).where('status', '=', 'APPROVED').executeTakeFirst();
  if (Number(skipped.numUpdatedRows) > 0) {
    await recordSequenceEvent(trx, { workspaceId: row.workspace_id, runId: row.run_id, type: 'touch.skipped', at: now, touch: row.number, why: reason });
  }
  return 'cancelled';
}

/**
 * A follow-up's thread: `Re:` touch 1's subject, In-Reply-To the previous touch, References every earlier one. A
 * response is In-Reply-To the buyer's reply it answers, which ends its References. Null for touch 1.
 */
export async function threadOf(db: Kysely<DB>, deliveryId: string): Promise<{ subject: string; inReplyTo: string; references: string[] } | null> {
  const touch = await db.selectFrom('touches as t').leftJoin('email_replies as r', 'r.id', 't.reply_id')
    .select(['t.enrolment_id', 't.number', 'r.message_id as reply_message_id']).where('t.delivery_id', '=', deliveryId).executeTakeFirst();
  if (!touch || touch.number === 1) return null;
  const earlier = await db.selectFrom('touches as t').innerJoin('email_deliveries as e', 'e.id', 't.delivery_id')
    .innerJoin('email_drafts as d', 'd.id', 'e.draft_id')
    .select(['t.number', 'e.message_id', 'd.subject']).where('t.enrolment_id', '=', touch.enrolment_id)
    .where('t.number', '<', touch.number).where('t.status', '=', 'SENT').orderBy('t.number').execute();
  const first = earlier.find((t) => t.number === 1);
  if (!first) return null;
  const references = earlier.map((t) => t.message_id);
  // A reply that came without a Message-ID is known by a digest of our own (@leadrun.invalid): nothing to point at.
  if (touch.reply_message_id && !touch.reply_message_id.endsWith('@leadrun.invalid')) references.push(angled(touch.reply_message_id));
  return { subject: threadSubject(first.subject), inReplyTo: references[references.length - 1]!, references };
}

/** A Message-ID as headers carry it: in angle brackets (replies are stored without them, src/mail/reply-reading.ts). */
function angled(id: string): string {
  return id.startsWith('<') ? id : `<${id}>`;
}

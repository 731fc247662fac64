// The outbox (DESIGN §14): a workspace's deliveries waiting SCHEDULED for a send window, a per-sender limit or the
// approval's `sendAt`, in the order they leave; sending one now (past the window, still within its sender's limits,
// which its job checks as it claims it) and cancelling one. Every query is bounded by the workspace id.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, WaitingFor } from '../../db/schema.ts';
import { JOBS_CHANNEL } from '../../jobs/sql/enqueueJob.ts';
import { AppError, notFound } from '../errors.ts';
import { readPage, type Cursor } from '../pagination.ts';
import { enqueueDeliveryJob, EMAIL_DELIVER } from '../runs/deliveries.ts';
import { applyTransition, DELIVERY } from '../runs/lifecycle.ts';
import { isUuid } from '../validation.ts';
import { touchUndelivered } from '../sequences/delivery.ts';

export interface OutboxEntry {
  id: string;
  runId: string;
  /** Which e-mail of the lead's thread it is: 1 for the approved e-mail, n + 1 for the sequence's follow-up n. */
  touch: number;
  to: string | null;
  scheduledFor: Date;
  waitingFor: WaitingFor;
}

/** A page of waiting deliveries, the soonest first, and the cursor of the next page (keyset on scheduled_for, id). */
export async function listOutbox(
  db: Kysely<DB>, workspaceId: string, options: { limit: number; cursor?: Cursor | null },
): Promise<{ items: OutboxEntry[]; next: Cursor | null }> {
  const query = db.selectFrom('email_deliveries as e')
    .innerJoin('email_drafts as d', 'd.id', 'e.draft_id')
    .select(['e.id', 'e.run_id', 'e.touch', 'e.scheduled_for', 'e.waiting_for', 'd.to_address'])
    .where('e.workspace_id', '=', workspaceId).where('e.status', '=', 'SCHEDULED');
  return readPage(query, { at: 'e.scheduled_for', id: 'e.id', order: 'oldest' }, options, (row): OutboxEntry => ({
    id: row.id, runId: row.run_id, touch: row.touch, to: row.to_address,
    // A SCHEDULED delivery always has both; the fallbacks keep a hand-edited row listable.
    scheduledFor: row.scheduled_for ?? new Date(0), waitingFor: row.waiting_for ?? 'sendAt',
  }), (entry) => ({ at: entry.scheduledFor, id: entry.id }));
}

/** The workspace's SCHEDULED delivery `id`, locked; 404 when there is none, 409 when it no longer waits. */
async function lockWaiting(trx: Kysely<DB>, workspaceId: string, id: string) {
  const row = isUuid(id)
    ? await trx.selectFrom('email_deliveries').select(['id', 'run_id', 'status'])
      .where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Delivery');
  if (row.status !== 'SCHEDULED') {
    throw new AppError('invalid_state', `The delivery is ${row.status}: only a SCHEDULED delivery in the outbox can be sent now or cancelled.`, {
      extra: { deliveryStatus: row.status },
    });
  }
  return row;
}

/**
 * Sends a waiting delivery now: it is QUEUED, no longer kept to the window, and its job due at once. Its sender's
 * daily limit and gap still hold (the job checks them as it claims it), so it may wait again for them.
 */
export async function sendNow(trx: Kysely<DB>, workspaceId: string, id: string, clock: Clock): Promise<{ runId: string }> {
  const row = await lockWaiting(trx, workspaceId, id);
  const now = clock.now();
  await applyTransition(trx, DELIVERY.release, {
    workspaceId, runId: row.run_id, deliveryId: row.id, at: now, set: { respect_window: false, waiting_for: null, scheduled_for: now },
  });
  // Its job waits QUEUED for the old time (a runner that holds it waits for this lock, then finds it QUEUED).
  const moved = await trx.updateTable('jobs').set({ available_at: now, updated_at: now })
    .where('kind', '=', EMAIL_DELIVER).where('key', '=', row.id).where('status', '=', 'QUEUED').executeTakeFirst();
  if (moved.numUpdatedRows > 0n) await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${EMAIL_DELIVER})`.execute(trx);
  else await enqueueDeliveryJob(trx, workspaceId, row.id, now);
  return { runId: row.run_id };
}

/** Cancels a waiting delivery: CANCELLED, its job gone; the draft stays APPROVED and is never sent; a follow-up's touch is SKIPPED. */
export async function cancelWaiting(trx: Kysely<DB>, workspaceId: string, id: string, clock: Clock): Promise<{ runId: string }> {
  const row = await lockWaiting(trx, workspaceId, id);
  const now = clock.now();
  await applyTransition(trx, DELIVERY.cancel, { workspaceId, runId: row.run_id, deliveryId: row.id, at: now });
  // A cancelled follow-up is skipped, and its sequence goes on to the next touch.
  await touchUndelivered(trx, row.id, 'cancelled', now);
  // A runner that claimed the job meanwhile waits for the delivery's lock, then finds it CANCELLED and ends the job.
  await trx.deleteFrom('jobs').where('kind', '=', EMAIL_DELIVER).where('key', '=', row.id).where('status', '=', 'QUEUED').execute();
  return { runId: row.run_id };
}

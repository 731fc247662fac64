// Stopping and pausing a lead's follow-ups (DESIGN §13): the one entry point for every cause, so that replies,
// bounces, suppressions, a closed lead and erasure stop a sequence the same way. Call inside the transaction that
// records the cause.
//
// Locks: an enrolment's row first, then its touches and their deliveries. The scheduler (touches.ts) and the
// delivery's claim (beginFollowUp) take the enrolment's row the same way, so a stop and a follow-up on its way wait
// for each other: a stop that commits first leaves nothing to send, and a delivery that began first is already
// with the mail server (DELIVERING), which is the one follow-up a stop cannot take back.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { recordSequenceEvent } from './events.ts';
import { nextTouchAfterPause } from './touches.ts';

export type SequenceStopReason =
  'replied' | 'bounced' | 'unsubscribed' | 'suppressed' | 'lead_closed' | 'manual' | 'superseded' | 'erased';
export type SequencePauseReason = 'out_of_office' | 'manual';

export interface StopInput {
  workspaceId: string;
  /** The lead whose active enrolment stops; or `email` to stop every enrolment of leads at that address. */
  leadId?: string;
  email?: string;
  reason: SequenceStopReason;
  at: Date;
}

interface LiveEnrolment { id: string; run_id: string; workspace_id: string }

/** The live (ACTIVE or PAUSED) enrolments named, locked. */
async function lockLive(trx: Kysely<DB>, input: { workspaceId: string; leadId?: string; email?: string }): Promise<LiveEnrolment[]> {
  if (!input.leadId && !input.email) return [];
  let query = trx.selectFrom('enrolments').select(['id', 'run_id', 'workspace_id'])
    .where('workspace_id', '=', input.workspaceId).where('status', 'in', ['ACTIVE', 'PAUSED']);
  if (input.leadId) query = query.where('lead_id', '=', input.leadId);
  else {
    const email = input.email!.trim().toLowerCase();
    query = query.where('lead_id', 'in', (eb) => eb.selectFrom('leads').select('id')
      .where('workspace_id', '=', input.workspaceId).where(sql<boolean>`lower(email) = ${email}`));
  }
  return query.orderBy('id').forUpdate().execute();
}

/** Stops the active (or paused) enrolment(s) named; their unsent touches end SKIPPED. Returns how many stopped. */
export async function stopEnrolments(trx: Kysely<DB>, input: StopInput): Promise<number> {
  const live = await lockLive(trx, input);
  for (const enrolment of live) await stopOne(trx, enrolment, input.reason, input.at);
  return live.length;
}

/**
 * Stops one locked enrolment: every follow-up not yet with the mail server is SKIPPED with the reason, and its
 * delivery, if one waits (SCHEDULED or QUEUED), CANCELLED. Touch 1, the e-mail a person approved, is not a follow-up
 * and goes on.
 */
async function stopOne(trx: Kysely<DB>, enrolment: LiveEnrolment, reason: SequenceStopReason, at: Date): Promise<void> {
  await trx.updateTable('enrolments')
    .set({ status: 'STOPPED', stop_reason: reason, pause_reason: null, paused_until: null, next_touch_at: null, updated_at: at })
    .where('id', '=', enrolment.id).execute();
  await cancelWaitingDeliveries(trx, sql`SELECT delivery_id FROM touches WHERE enrolment_id = ${enrolment.id} AND number > 1`);
  const skipped = await trx.updateTable('touches')
    .set({ status: 'SKIPPED', skip_reason: reason, ready_at: null, updated_at: at })
    .where('enrolment_id', '=', enrolment.id).where('number', '>', 1)
    .where((eb) => eb.or([
      eb('status', 'in', ['SCHEDULED', 'DRAFTED', 'AWAITING_APPROVAL']),
      eb.and([eb('status', '=', 'APPROVED'), eb('delivery_id', 'in', eb.selectFrom('email_deliveries').select('id').where('status', '=', 'CANCELLED'))]),
    ]))
    .returning('number').execute();
  const target = { workspaceId: enrolment.workspace_id, runId: enrolment.run_id, at };
  await recordSequenceEvent(trx, { ...target, type: 'sequence.stopped', why: reason });
  for (const touch of skipped.sort((a, b) => a.number - b.number)) {
    await recordSequenceEvent(trx, { ...target, type: 'touch.skipped', touch: touch.number, why: reason });
  }
}

/** The follow-up deliveries among `ids` that wait for their turn become CANCELLED: their jobs find nothing to send. */
async function cancelWaitingDeliveries(trx: Kysely<DB>, ids: RawBuilder<unknown>): Promise<void> {
  await sql`UPDATE email_deliveries SET status = 'CANCELLED', error = 'The sequence stopped before it was sent.'
    WHERE id IN (${ids}) AND status IN ('SCHEDULED', 'QUEUED')`.execute(trx);
}

/** Pauses the lead's active enrolment until `until` (then it resumes by itself). Returns whether one was paused. */
export async function pauseEnrolment(
  trx: Kysely<DB>, input: { workspaceId: string; leadId: string; until: Date | null; reason: SequencePauseReason; at: Date },
): Promise<boolean> {
  const [enrolment] = await lockLive(trx, input);
  if (!enrolment) return false;
  const { numUpdatedRows } = await trx.updateTable('enrolments')
    .set({ status: 'PAUSED', pause_reason: input.reason, paused_until: input.until, updated_at: input.at })
    .where('id', '=', enrolment.id).where('status', '=', 'ACTIVE').executeTakeFirst();
  // A touch waits while the enrolment is paused: out of the scheduler's index until it resumes. A follow-up already
  // queued is held at its claim (beginFollowUp) and tried again when the pause ends.
  await trx.updateTable('touches').set({ ready_at: null, updated_at: input.at })
    .where('enrolment_id', '=', enrolment.id).where('ready_at', 'is not', null).execute();
  if (Number(numUpdatedRows) > 0) {
    await recordSequenceEvent(trx, {
      workspaceId: enrolment.workspace_id, runId: enrolment.run_id, type: 'sequence.paused', at: input.at, why: input.reason,
    });
  }
  return Number(numUpdatedRows) > 0;
}

/** Resumes a paused enrolment (by a person, or when its pause ends): its next touch is due no earlier than now. */
export async function resumeEnrolment(trx: Kysely<DB>, enrolmentId: string, at: Date): Promise<boolean> {
  const enrolment = await trx.selectFrom('enrolments').select(['id', 'run_id', 'workspace_id'])
    .where('id', '=', enrolmentId).where('status', '=', 'PAUSED').forUpdate().executeTakeFirst();
  if (!enrolment) return false;
  const next = await nextTouchAfterPause(trx, enrolment.id, at);
  await trx.updateTable('enrolments')
    .set({ status: 'ACTIVE', pause_reason: null, paused_until: null, next_touch_at: next, updated_at: at })
    .where('id', '=', enrolment.id).execute();
  await recordSequenceEvent(trx, { workspaceId: enrolment.workspace_id, runId: enrolment.run_id, type: 'sequence.resumed', at });
  return true;
}

/** The runs' enrolments and touches, deleted with the runs (src/domain/leads/erasure.ts). */
export async function eraseEnrolments(trx: Kysely<DB>, runIds: RawBuilder<unknown>): Promise<void> {
  await sql`DELETE FROM touches WHERE run_id IN (${runIds})`.execute(trx);
  await sql`DELETE FROM enrolments WHERE run_id IN (${runIds})`.execute(trx);
}

/**
 * Stops the follow-ups of the leads `changed` names that are now WON or LOST (`lead_closed`): a lead import's
 * updates, which set many leads' status in one statement. `changed` is a condition on the lead `l`.
 */
export async function stopClosedLeads(trx: Kysely<DB>, workspaceId: string, changed: RawBuilder<boolean>, at: Date): Promise<number> {
  // Driven from the workspace's live enrolments (an index), each lead found by its key: a workspace without follow-ups
  // reads no lead at all, and an import of 50,000 rows never joins its leads to anything.
  const { rows } = await sql<{ lead_id: string }>`
    SELECT n.lead_id FROM enrolments n
    WHERE n.workspace_id = ${workspaceId} AND n.status IN ('ACTIVE', 'PAUSED')
      AND EXISTS (SELECT 1 FROM leads l WHERE l.id = n.lead_id AND l.workspace_id = n.workspace_id AND l.status IN ('WON', 'LOST') AND ${changed})`.execute(trx);
  let stopped = 0;
  for (const { lead_id } of rows) stopped += await stopEnrolments(trx, { workspaceId, leadId: lead_id, reason: 'lead_closed', at });
  return stopped;
}

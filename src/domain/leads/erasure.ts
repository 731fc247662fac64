// Erasure (DESIGN §8): a lead removed with everything that holds its data, or one call of a lead with its runs. Call
// each inside a transaction: every row goes at once or none does. The audit log keeps the ids of what was removed
// and nothing of the person (an entry holds no field of a lead). A table added later that holds a lead's data, or
// refers to a lead, a call or a run, must be cleared here too; test/http/erasure.test.ts reads every table to see
// that nothing is left.
//
// Locks, taken in one order (lead, call, runs) by both functions, so that they never wait on each other in a cycle:
// - the lead's row: a call or a run being added to the lead locks it too (createCall and startRun in the look-up,
//   the foreign-key checks at the insert), so the one waits for the other, and comes after it to find the lead gone;
// - the runs' rows: a worker writes each step of a run under that run's lock, and claims only runs nobody holds
//   (SKIP LOCKED), so a step being stored finishes before the erasure, and the worker's next write finds no run to
//   hold and stops without writing (src/jobs/sql/run/).
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { EMAIL_DELIVER } from '../runs/deliveries.ts';
import { AppError, notFound } from '../errors.ts';
import { RUN_EVENTS_CHANNEL } from '../runs/lifecycle.ts';
import { emitWebhookEvent, forgetWebhookEvents } from '../webhooks/events.ts';
import { isUuid } from '../validation.ts';
import { eraseEnrolments } from '../sequences/stops.ts';

/** The runs being removed: those of a lead, or those of one call. */
type Runs = { leadId: string } | { callId: string };

function runsOf(workspaceId: string, runs: Runs) {
  return 'leadId' in runs
    ? sql`SELECT id FROM runs WHERE workspace_id = ${workspaceId} AND lead_id = ${runs.leadId}`
    : sql`SELECT id FROM runs WHERE workspace_id = ${workspaceId} AND call_id = ${runs.callId}`;
}

/**
 * Forgets the stored Idempotency-Key responses that name what is being removed (a created lead or call, a run, a
 * decided run with its draft's address): those about a removed resource by their target, any other by its body.
 * A retry of such a request after the erasure is a new request.
 */
async function forgetResponses(trx: Kysely<DB>, workspaceId: string, ids: ReturnType<typeof sql>): Promise<void> {
  await sql`
    DELETE FROM idempotency_keys i USING api_keys k
    WHERE k.id = i.key_id AND k.workspace_id = ${workspaceId}
      AND EXISTS (SELECT 1 FROM (${ids}) x(id)
                  WHERE i.target_id = x.id::text OR strpos(i.response_body::text, x.id::text) > 0)`.execute(trx);
}

/** Removes runs with their events, steps, drafts, deliveries and replies; the streams following them end (their run is gone). */
async function deleteRuns(trx: Kysely<DB>, workspaceId: string, runs: Runs): Promise<void> {
  const ids = runsOf(workspaceId, runs);
  // Delivered at commit: a stream of one of these runs reads it, finds no run, and ends.
  await sql`SELECT pg_notify(${RUN_EVENTS_CHANNEL}, r.id::text) FROM (${ids}) r`.execute(trx);
  await sql`DELETE FROM run_events WHERE run_id IN (${ids})`.execute(trx);
  await sql`DELETE FROM run_steps WHERE run_id IN (${ids})`.execute(trx);
  // The drafts' deliveries (and what they led to), with their jobs: a job being run loses its lease and stops, and
  // a delivery's job that is due later finds nothing to send.
  const deliveries = sql`SELECT id FROM email_deliveries WHERE run_id IN (${ids})`;
  await sql`DELETE FROM jobs WHERE kind = ${EMAIL_DELIVER} AND (key IN (SELECT id::text FROM (${deliveries}) d)
    OR payload->>'deliveryId' IN (SELECT id::text FROM (${deliveries}) d))`.execute(trx);
  // Replies found in the inbox hold who wrote and what (src/mail/replies.ts); the inbox's cursor is no one's data and
  // stays, so an erased lead's reply already read is not read again.
  await sql`DELETE FROM email_replies WHERE run_id IN (${ids})`.execute(trx);
  // The runs' enrolments end with them (`erased`): their touches point at the drafts and deliveries deleted next.
  await eraseEnrolments(trx, ids);
  await sql`DELETE FROM email_deliveries WHERE run_id IN (${ids})`.execute(trx);
  await sql`DELETE FROM email_drafts WHERE run_id IN (${ids})`.execute(trx);
  await forgetWebhookEvents(trx, workspaceId, sql`run_id IN (${ids})`);
  await sql`DELETE FROM runs WHERE id IN (${ids})`.execute(trx);
}

/**
 * Removes a lead with its calls, its runs and their steps, drafts and events, and the stored responses that show any
 * of them. A run being worked at that moment is removed too: its worker stops at its next write.
 */
export async function deleteLead(trx: Kysely<DB>, workspaceId: string, leadId: string, now: Date = new Date()): Promise<{ id: string }> {
  if (!isUuid(leadId)) throw notFound('Lead');
  const lead = await trx.selectFrom('leads').select('id')
    .where('workspace_id', '=', workspaceId).where('id', '=', leadId).forUpdate().executeTakeFirst();
  if (!lead) throw notFound('Lead');
  await trx.selectFrom('runs').select('id').where('workspace_id', '=', workspaceId).where('lead_id', '=', leadId).forUpdate().execute();
  const calls = sql`SELECT id FROM calls WHERE workspace_id = ${workspaceId} AND lead_id = ${leadId}`;
  const runs = runsOf(workspaceId, { leadId });
  await forgetResponses(trx, workspaceId, sql`
    SELECT ${leadId}::uuid UNION ALL ${calls} UNION ALL ${runs} UNION ALL SELECT id FROM email_drafts WHERE run_id IN (${runs})`);
  await deleteRuns(trx, workspaceId, { leadId });
  await trx.deleteFrom('calls').where('workspace_id', '=', workspaceId).where('lead_id', '=', leadId).execute();
  await trx.deleteFrom('leads').where('workspace_id', '=', workspaceId).where('id', '=', leadId).execute();
  // The lead's own webhook events carry its data; the one that reports the erasure carries its id alone.
  await forgetWebhookEvents(trx, workspaceId, sql`lead_id = ${leadId}`);
  await emitWebhookEvent(trx, workspaceId, 'lead.deleted', { id: leadId }, { at: now });
  return lead;
}

/**
 * Removes one call of a lead with its runs, which must all have left the pipeline: while one is QUEUED or RUNNING,
 * nothing is removed (409 invalid_state). The runs are locked before they are looked at, so none can be claimed,
 * started again or added between the check and the removal.
 */
export async function deleteCall(trx: Kysely<DB>, workspaceId: string, leadId: string, callId: string): Promise<{ id: string }> {
  // FOR KEY SHARE: an update of the lead or a new call of it goes on meanwhile; the lead's erasure waits.
  const lead = isUuid(leadId)
    ? await trx.selectFrom('leads').select('id').where('workspace_id', '=', workspaceId).where('id', '=', leadId).forKeyShare().executeTakeFirst()
    : undefined;
  if (!lead) throw notFound('Lead');
  const call = isUuid(callId)
    ? await trx.selectFrom('calls').select('id')
      .where('workspace_id', '=', workspaceId).where('lead_id', '=', leadId).where('id', '=', callId).forUpdate().executeTakeFirst()
    : undefined;
  if (!call) throw notFound('Call');
  const runs = await trx.selectFrom('runs').select(['id', 'status'])
    .where('workspace_id', '=', workspaceId).where('call_id', '=', callId).orderBy('started_at').forUpdate().execute();
  const busy = runs.find((run) => run.status === 'QUEUED' || run.status === 'RUNNING');
  if (busy) {
    throw new AppError('invalid_state', `A run of this call is ${busy.status} (run ${busy.id}); cancel it or let it finish, then delete the call.`, {
      extra: { runStatus: busy.status },
    });
  }
  const ids = runsOf(workspaceId, { callId });
  await forgetResponses(trx, workspaceId, sql`
    SELECT ${callId}::uuid UNION ALL ${ids} UNION ALL SELECT id FROM email_drafts WHERE run_id IN (${ids})`);
  await deleteRuns(trx, workspaceId, { callId });
  await trx.deleteFrom('calls').where('workspace_id', '=', workspaceId).where('id', '=', callId).execute();
  return call;
}

// A lead's enrolment in a sequence (DESIGN §13): made by the approval that delivers touch 1 (decisions.ts approveRun
// calls enrolRun), with the sequence's steps copied in. A lead has at most one live enrolment (a partial unique
// index): the newer stops the older, `superseded`. The run shows it as its `sequence`; a person stops, pauses and
// resumes it from the run.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, DeliveryMethod } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../validation.ts';
import { recordSequenceEvent } from './events.ts';
import { sequenceToEnrol } from './sequences.ts';
import { pauseEnrolment, resumeEnrolment, stopEnrolments } from './stops.ts';

export interface EnrolInput {
  workspaceId: string;
  runId: string;
  /** The sequence asked for: an id, null for none, left out for the workspace's default. */
  sequenceId?: string | null;
  method: DeliveryMethod;
  senderUserId: string | null;
  /** Touch 1: the approved draft and its delivery. */
  draftId: string;
  deliveryId: string;
  now: Date;
}

/**
 * Enrols the run's lead in the sequence asked for, in the approval's transaction: touch 1 is the approved e-mail
 * (APPROVED, SENT with its delivery), a SCHEDULED touch for each step, due once the touch before it went out. The
 * lead's row is locked first, so two approvals for one lead enrol one after the other, and the later supersedes.
 */
export async function enrolRun(trx: Kysely<DB>, input: EnrolInput): Promise<void> {
  if (input.sequenceId === null) return;
  const sequence = await sequenceToEnrol(trx, input.workspaceId, input.sequenceId);
  if (!sequence) return;
  const run = await trx.selectFrom('runs').select('lead_id').where('id', '=', input.runId).where('workspace_id', '=', input.workspaceId).executeTakeFirstOrThrow();
  await trx.selectFrom('leads').select('id').where('id', '=', run.lead_id).where('workspace_id', '=', input.workspaceId).forUpdate().executeTakeFirst();
  await stopEnrolments(trx, { workspaceId: input.workspaceId, leadId: run.lead_id, reason: 'superseded', at: input.now });
  const enrolmentId = randomUUID();
  const now = input.now;
  await trx.insertInto('enrolments').values({
    id: enrolmentId, workspace_id: input.workspaceId, lead_id: run.lead_id, run_id: input.runId, sequence_id: sequence.id,
    sequence_name: sequence.name, steps: JSON.stringify(sequence.steps), method: input.method, sender_user_id: input.senderUserId,
    status: 'ACTIVE', stop_reason: null, pause_reason: null, paused_until: null, next_touch_at: null, created_at: now, updated_at: now,
  }).execute();
  const base = { workspace_id: input.workspaceId, enrolment_id: enrolmentId, run_id: input.runId, skip_reason: null, created_at: now, updated_at: now };
  await trx.insertInto('touches').values([
    { ...base, id: randomUUID(), number: 1, status: 'APPROVED', review: 'required', due_at: now, ready_at: null, draft_id: input.draftId, delivery_id: input.deliveryId },
    ...sequence.steps.map((step, i) => ({
      ...base, id: randomUUID(), number: i + 2, status: 'SCHEDULED' as const, review: step.review, due_at: null, ready_at: null, draft_id: null, delivery_id: null,
    })),
  ]).execute();
  await recordSequenceEvent(trx, { workspaceId: input.workspaceId, runId: input.runId, type: 'sequence.enrolled', at: now });
}

/**
 * Takes back the enrolment of an approval being undone (decisions.ts undoApproval), before its delivery is deleted:
 * its touches and it go, as if the approval had not been made. An enrolment it superseded stays stopped.
 */
export async function undoEnrolment(trx: Kysely<DB>, workspaceId: string, runId: string): Promise<void> {
  await sql`DELETE FROM touches WHERE run_id = ${runId} AND workspace_id = ${workspaceId}`.execute(trx);
  await sql`DELETE FROM enrolments WHERE run_id = ${runId} AND workspace_id = ${workspaceId}`.execute(trx);
}

/** The run's live enrolment, locked, or 409 (404 for no such run). */
async function runEnrolment(trx: Kysely<DB>, workspaceId: string, runId: string) {
  const run = isUuid(runId)
    ? await trx.selectFrom('runs').select(['id', 'lead_id']).where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst()
    : undefined;
  if (!run) throw notFound('Run');
  const enrolment = await trx.selectFrom('enrolments').select(['id', 'status', 'lead_id'])
    .where('workspace_id', '=', workspaceId).where('run_id', '=', runId).where('thread_only', '=', false).forUpdate().executeTakeFirst();
  if (!enrolment) throw new AppError('invalid_state', 'The run enrolled its lead in no sequence.');
  return enrolment;
}

function notLive(status: string, verb: string, allowed: string): AppError {
  return new AppError('invalid_state', `The sequence is ${status}; it can be ${verb} only while ${allowed}.`, { extra: { sequenceStatus: status } });
}

/** A person stops the run's sequence (`manual`): POST /api/v1/runs/{id}/sequence/stop. */
export async function stopRunSequence(trx: Kysely<DB>, workspaceId: string, runId: string, clock: Clock): Promise<void> {
  const enrolment = await runEnrolment(trx, workspaceId, runId);
  if (enrolment.status !== 'ACTIVE' && enrolment.status !== 'PAUSED') throw notLive(enrolment.status, 'stopped', 'ACTIVE or PAUSED');
  await stopEnrolments(trx, { workspaceId, leadId: enrolment.lead_id, reason: 'manual', at: clock.now() });
}

/** A person pauses the run's sequence (`manual`), until `until` or until resumed. */
export async function pauseRunSequence(trx: Kysely<DB>, workspaceId: string, runId: string, until: Date | null, clock: Clock): Promise<void> {
  const now = clock.now();
  if (until && until <= now) throw new AppError('invalid_request', 'A pause ends in the future.', { errors: [{ field: 'until', message: 'must be later than now' }] });
  const enrolment = await runEnrolment(trx, workspaceId, runId);
  if (enrolment.status !== 'ACTIVE') throw notLive(enrolment.status, 'paused', 'ACTIVE');
  await pauseEnrolment(trx, { workspaceId, leadId: enrolment.lead_id, until, reason: 'manual', at: now });
}

/** A person resumes the run's paused sequence. */
export async function resumeRunSequence(trx: Kysely<DB>, workspaceId: string, runId: string, clock: Clock): Promise<void> {
  const enrolment = await runEnrolment(trx, workspaceId, runId);
  if (enrolment.status !== 'PAUSED') throw notLive(enrolment.status, 'resumed', 'PAUSED');
  await resumeEnrolment(trx, enrolment.id, clock.now());
}

export interface TouchView {
  number: number;
  kind: 'sequence' | 'response';
  replyId: string | null;
  of: number;
  status: string;
  review: 'required' | 'auto';
  instruction: string | null;
  dueAt: string | null;
  skipReason: string | null;
  draft: { id: string; version: number; subject: string; body: string; to: string | null } | null;
  delivery: {
    method: DeliveryMethod; status: string; messageId: string; attempts: number; queuedAt: string; deliveredAt: string | null; error: string | null;
    scheduledFor: string | null;
  } | null;
}

/** The touches of the run's thread, in order; [] for a run that enrolled nobody, null for no such run. */
export async function listTouches(db: Kysely<DB>, workspaceId: string, runId: string): Promise<TouchView[] | null> {
  if (!isUuid(runId)) return null;
  const run = await db.selectFrom('runs').select('id').where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst();
  if (!run) return null;
  const rows = await db.selectFrom('touches as t')
    .innerJoin('enrolments as n', 'n.id', 't.enrolment_id')
    .leftJoin('email_drafts as d', 'd.id', 't.draft_id')
    .leftJoin('email_deliveries as e', 'e.id', 't.delivery_id')
    .select([
      't.number', 't.kind', 't.reply_id', 't.status', 't.review', 't.due_at', 't.skip_reason', 'n.steps',
      'd.id as draft_id', 'd.version', 'd.subject', 'd.body', 'd.to_address',
      'e.method', 'e.status as delivery_status', 'e.message_id', 'e.attempts', 'e.queued_at', 'e.delivered_at', 'e.error', 'e.scheduled_for',
    ])
    .where('t.workspace_id', '=', workspaceId).where('t.run_id', '=', runId).orderBy('t.number').execute();
  return rows.map((row) => {
    const steps = row.steps as Array<{ instruction: string }>;
    return {
      number: row.number, kind: row.kind, replyId: row.reply_id, of: steps.length + 1, status: row.status, review: row.review,
      instruction: row.number > 1 && row.kind === 'sequence' ? steps[row.number - 2]?.instruction ?? null : null,
      dueAt: row.due_at?.toISOString() ?? null, skipReason: row.skip_reason,
      draft: row.draft_id ? {
        id: row.draft_id, version: row.version!, subject: row.subject!,
        body: row.body!, to: row.to_address ?? null,
      } : null,
      delivery: row.method ? {
        method: row.method, status: row.delivery_status!, messageId: row.message_id!, attempts: row.attempts!,
        queuedAt: row.queued_at!.toISOString(), deliveredAt: row.delivered_at?.toISOString() ?? null, error: row.error ?? null,
        scheduledFor: row.delivery_status === 'SCHEDULED' ? row.scheduled_for?.toISOString() ?? null : null,
      } : null,
    };
  });
}

/** Most follow-ups the review queue lists at once: the oldest due first, the rest after those are decided. */
export const REVIEW_QUEUE_MAX = 100;

export interface TouchForReview {
  runId: string; leadId: string; leadName: string; number: number; of: number; dueAt: string | null;
  draft: { id: string; version: number; subject: string; body: string; to: string | null };
}

/** The workspace's follow-ups awaiting review (the review queue's "Follow-up 2 of 3"), by their index, oldest due first. */
export async function listTouchesForReview(db: Kysely<DB>, workspaceId: string, limit = REVIEW_QUEUE_MAX): Promise<TouchForReview[]> {
  const rows = await db.selectFrom('touches as t')
    .innerJoin('enrolments as n', 'n.id', 't.enrolment_id')
    .innerJoin('email_drafts as d', 'd.id', 't.draft_id')
    .innerJoin('leads as l', (join) => join.onRef('l.id', '=', 'n.lead_id').onRef('l.workspace_id', '=', 't.workspace_id'))
    .select(['t.run_id', 'n.lead_id', 'l.name', 't.number', 'n.steps', 't.due_at', 'd.id as draft_id', 'd.version', 'd.subject', 'd.body', 'd.to_address'])
    .where('t.workspace_id', '=', workspaceId).where('t.status', '=', 'AWAITING_APPROVAL').where('n.status', '=', 'ACTIVE')
    // Responses wait in Replies to answer, beside the reply they answer.
    .where('t.kind', '=', 'sequence')
    .orderBy('t.due_at').orderBy('t.id').limit(limit).execute();
  return rows.map((row) => ({
    runId: row.run_id, leadId: row.lead_id, leadName: row.name, number: row.number, of: (row.steps as unknown[]).length + 1,
    dueAt: row.due_at?.toISOString() ?? null,
    draft: { id: row.draft_id, version: row.version, subject: row.subject, body: row.body, to: row.to_address },
  }));
}

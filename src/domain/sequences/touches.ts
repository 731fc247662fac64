// The touches of a run's thread (DESIGN §13) and the scheduler's work on them. Touch 1 is the approved e-mail; touch
// n+1 follows step n of the enrolment's copy of its sequence. A follow-up is SCHEDULED until the touch before it goes
// out, which fixes its due time; it is written a day ahead (DRAFTED), waits for a person when its step says review
// `required` (AWAITING_APPROVAL), and is delivered when due (APPROVED, then SENT with its delivery).
//
// Follow-up drafts are rows of email_drafts with their `touch` (0041): a follow-up is reviewed, edited, approved and
// delivered as the run's first draft is (same delivery table and job, same Message-ID rule), and every query of the
// run's own draft reads touch 1. A table of its own would have needed a second delivery path.
//
// The scheduler finds its work by one index, touches.ready_at (the time something is to be done with a touch, null
// when nothing is), in batches: its cost per tick follows the work that is due, never the number of enrolments.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, TouchStatus } from '../../db/schema.ts';
import type { FollowUpDraft, FollowUpInput } from '../../agent/follow-up/index.ts';
import { AppError, notFound } from '../errors.ts';
import { queueDelivery } from '../runs/deliveries.ts';
import { windowZoneOfRun } from '../sending/schedule.ts';
import { loadSendingSettings } from '../sending/settings.ts';
import { applyTransition, DRAFT, type Decider } from '../runs/lifecycle.ts';
import { loadRunContext } from '../runs/drafts.ts';
import { isUuid } from '../validation.ts';
import { refuseSuppressed } from '../suppressions/entries.ts';
import { recordSequenceEvent } from './events.ts';
import { addBusinessDays, writeTimeOf } from './schedule.ts';
import type { SequenceStep } from './sequences.ts';
import { tickSoon } from './tick.ts';

/** Touches one scheduler pass claims: a busy Monday is worked through in passes of this size, none of them long. */
export const TICK_BATCH = 50;
/** How long a claimed touch is the claimer's: a scheduler that dies gives its touches back after this. */
export const CLAIM_MS = 5 * 60_000;

export type FollowUpWriter = (input: FollowUpInput) => Promise<FollowUpDraft>;

interface TouchRow {
  id: string; workspace_id: string; enrolment_id: string; run_id: string; number: number; status: TouchStatus;
  review: 'required' | 'auto'; due_at: Date | null; draft_id: string | null; delivery_id: string | null;
  /** `response`: the answer to reply `reply_id` (src/domain/replies/response.ts), no step of the sequence. */
  kind: 'sequence' | 'response'; reply_id: string | null;
}

const TOUCH_COLUMNS = ['id', 'workspace_id', 'enrolment_id', 'run_id', 'number', 'status', 'review', 'due_at', 'draft_id', 'delivery_id', 'kind', 'reply_id'] as const;

/** The enrolment and the touch, locked in that order (stops.ts), with the enrolment's status and steps. */
async function lockTouch(trx: Kysely<DB>, touchId: string) {
  const enrolment = await trx.selectFrom('enrolments as n').innerJoin('touches as t', 't.enrolment_id', 'n.id')
    .select(['n.id', 'n.status', 'n.steps', 'n.method', 'n.sender_user_id', 'n.lead_id'])
    .where('t.id', '=', touchId).forUpdate('n').executeTakeFirst();
  if (!enrolment) return null;
  const touch = await trx.selectFrom('touches').select(TOUCH_COLUMNS).where('id', '=', touchId).forUpdate().executeTakeFirstOrThrow();
  return { enrolment: { ...enrolment, steps: enrolment.steps as SequenceStep[] }, touch: touch as TouchRow };
}

/**
 * The touch went out (its delivery DELIVERED, in the delivery's own transaction): it is SENT, and the next follow-up
 * is due its step's business days later, or, after the last, the enrolment is FINISHED. Nothing for a delivery that
 * is no touch's.
 */
export async function touchDelivered(trx: Kysely<DB>, deliveryId: string, now: Date): Promise<void> {
  const touch = await trx.selectFrom('touches').select(TOUCH_COLUMNS).where('delivery_id', '=', deliveryId).executeTakeFirst();
  if (!touch) return;
  const locked = await lockTouch(trx, touch.id);
  if (!locked || locked.touch.status !== 'APPROVED') return;
  await setTouch(trx, touch.id, { status: 'SENT', ready_at: null }, now);
  const target = { workspaceId: touch.workspace_id, runId: touch.run_id, at: now };
  await recordSequenceEvent(trx, { ...target, type: 'touch.sent', touch: touch.number });
  // A response is no step: the sequence (stopped by the reply it answers) has nothing to go on to.
  if (touch.kind === 'sequence') await scheduleNext(trx, locked.enrolment, touch.number, now);
}

/** Why a follow-up's delivery ended without going out: FAILED after its retries, or CANCELLED from the outbox. */
export type UndeliveredReason = 'delivery_failed' | 'cancelled';

/**
 * A follow-up's delivery ended without going out (in the transaction that failed or cancelled it): the touch is
 * SKIPPED with the reason and the next follow-up counts from now, as after a rejected one, so that the sequence goes
 * on instead of waiting for a touch that will never be SENT. Nothing for touch 1 (the run's own e-mail, which can be
 * queued again) nor for a touch a stop already skipped.
 */
export async function touchUndelivered(trx: Kysely<DB>, deliveryId: string, reason: UndeliveredReason, now: Date): Promise<void> {
  const touch = await trx.selectFrom('touches').select(['id', 'number']).where('delivery_id', '=', deliveryId)
    .where('number', '>', 1).executeTakeFirst();
  if (!touch) return;
  const locked = await lockTouch(trx, touch.id);
  if (!locked || locked.touch.status !== 'APPROVED') return;
  await setTouch(trx, touch.id, { status: 'SKIPPED', skip_reason: reason, ready_at: null }, now);
  const target = { workspaceId: locked.touch.workspace_id, runId: locked.touch.run_id, at: now };
  await recordSequenceEvent(trx, { ...target, type: 'touch.skipped', touch: touch.number, why: reason });
  if (locked.touch.kind === 'sequence') await scheduleNext(trx, locked.enrolment, touch.number, now);
}

/** After touch `number` went out (or was rejected, or could not go): the next one's due time, or the end of the enrolment. */
async function scheduleNext(
  trx: Kysely<DB>, enrolment: { id: string; status: string; steps: SequenceStep[] }, number: number, now: Date,
): Promise<void> {
  const next = await trx.selectFrom('touches').select(['id', 'run_id', 'workspace_id']).where('enrolment_id', '=', enrolment.id)
    .where('number', '=', number + 1).where('kind', '=', 'sequence').where('status', '=', 'SCHEDULED').executeTakeFirst();
  if (!next) {
    if (enrolment.status !== 'ACTIVE' && enrolment.status !== 'PAUSED') return;
    const pending = await trx.selectFrom('touches').select('id').where('enrolment_id', '=', enrolment.id)
      .where('status', 'not in', ['SENT', 'SKIPPED']).where('kind', '=', 'sequence').executeTakeFirst();
    if (pending) return;
    await trx.updateTable('enrolments').set({ status: 'FINISHED', next_touch_at: null, updated_at: now }).where('id', '=', enrolment.id).execute();
    const run = await trx.selectFrom('enrolments').select(['run_id', 'workspace_id']).where('id', '=', enrolment.id).executeTakeFirstOrThrow();
    await recordSequenceEvent(trx, { workspaceId: run.workspace_id, runId: run.run_id, type: 'sequence.finished', at: now });
    return;
  }
  const step = enrolment.steps[number - 1];
  if (!step) throw new Error(`enrolment ${enrolment.id} has no step for touch ${number + 1}`);
  // Business days are the buyer's: counted in the lead's time zone, else the workspace's (DESIGN §14).
  const settings = await loadSendingSettings(trx, next.workspace_id);
  const due = addBusinessDays(now, step.waitDays, await windowZoneOfRun(trx, next.workspace_id, next.run_id, settings));
  const active = enrolment.status === 'ACTIVE';
  await setTouch(trx, next.id, { due_at: due, ready_at: active ? writeTimeOf(due, now) : null }, now);
  if (enrolment.status === 'ACTIVE' || enrolment.status === 'PAUSED') {
    await trx.updateTable('enrolments').set({ next_touch_at: due, updated_at: now }).where('id', '=', enrolment.id).execute();
  }
}

async function setTouch(trx: Kysely<DB>, id: string, set: Partial<{
  status: TouchStatus; due_at: Date | null; ready_at: Date | null; draft_id: string | null; delivery_id: string | null; skip_reason: string | null;
}>, now: Date): Promise<void> {
  await trx.updateTable('touches').set({ ...set, updated_at: now }).where('id', '=', id).execute();
}

/** A paused enrolment resumes (stops.ts): its next unsent touch is due no earlier than now. Answers that due time. */
export async function nextTouchAfterPause(trx: Kysely<DB>, enrolmentId: string, now: Date): Promise<Date | null> {
  const touch = await trx.selectFrom('touches').select(['id', 'status', 'due_at']).where('enrolment_id', '=', enrolmentId)
    .where('status', 'in', ['SCHEDULED', 'DRAFTED', 'AWAITING_APPROVAL', 'APPROVED']).where('number', '>', 1)
    .where('kind', '=', 'sequence').orderBy('number').executeTakeFirst();
  if (!touch?.due_at) return null;
  const due = new Date(Math.max(touch.due_at.getTime(), now.getTime()));
  const ready = touch.status === 'SCHEDULED' ? writeTimeOf(due, now) : touch.status === 'DRAFTED' ? due : null;
  await setTouch(trx, touch.id, { due_at: due, ready_at: ready }, now);
  return due;
}

/**
 * Claims up to `limit` touches whose time has come, by the ready_at index, pushing each one's time CLAIM_MS on: two
 * schedulers never take the same touch (SKIP LOCKED), and one that dies gives its touches back when that time comes.
 * `= ANY(ARRAY(…))`, not `IN (…)`: the ids are looked up one by one by the primary key, where a generic plan of IN
 * may hash-join a scan of every touch.
 */
export async function claimReadyTouches(db: Kysely<DB>, now: Date, limit = TICK_BATCH): Promise<Array<{ id: string; status: TouchStatus }>> {
  const { rows } = await sql<{ id: string; status: TouchStatus }>`
    UPDATE touches SET ready_at = ${new Date(now.getTime() + CLAIM_MS)}::timestamptz
    WHERE id = ANY(ARRAY(SELECT id FROM touches WHERE ready_at <= ${now}::timestamptz ORDER BY ready_at LIMIT ${limit} FOR UPDATE SKIP LOCKED))
    RETURNING id, status`.execute(db);
  return rows;
}

/** The paused enrolments whose pause has ended, by their index; each resumes in the scheduler's pass. */
export async function endedPauses(db: Kysely<DB>, now: Date, limit = TICK_BATCH): Promise<string[]> {
  const rows = await db.selectFrom('enrolments').select('id').where('status', '=', 'PAUSED')
    .where('paused_until', 'is not', null).where('paused_until', '<=', now).orderBy('paused_until').limit(limit).execute();
  return rows.map((r) => r.id);
}

/**
 * What WRITER reads to write `touch`: the run's context, the thread so far, and the step's instruction, or, for a
 * response, the reply it answers (its own words, else its snippet). Null when the run or the reply is gone.
 */
async function followUpInput(db: Kysely<DB>, touch: TouchRow, steps: SequenceStep[], feedback: string | null): Promise<FollowUpInput | null> {
  const ctx = await loadRunContext(db, touch.workspace_id, touch.run_id, null);
  if (!ctx) return null;
  const earlier = await db.selectFrom('touches as t').innerJoin('email_drafts as d', 'd.id', 't.draft_id')
    .select(['d.subject', 'd.body']).where('t.enrolment_id', '=', touch.enrolment_id).where('t.number', '<', touch.number)
    .where('t.status', '=', 'SENT').orderBy('t.number').execute();
  // Only a response answers a reply: a follow-up after an out-of-office (the one reply that lets a sequence go on)
  // follows its step, and is no answer to the auto-reply.
  const reply = touch.kind === 'response' && touch.reply_id
    ? await db.selectFrom('email_replies').select(['from_address', 'snippet', 'text']).where('id', '=', touch.reply_id)
      .where('workspace_id', '=', touch.workspace_id).executeTakeFirst()
    : undefined;
  if (touch.kind === 'response' && !reply) return null;
  return {
    lead: ctx.lead, call: ctx.call,
    ...(ctx.research ? { research: ctx.research } : {}), ...(ctx.analysis ? { analysis: ctx.analysis } : {}),
    ...(ctx.strategy ? { strategy: ctx.strategy } : {}),
    sender: { name: ctx.senderName?.split('\n')[0] ?? null, signature: null },
    touchNumber: touch.number, touchCount: Math.max(steps.length + 1, touch.number),
    instruction: touch.kind === 'response' ? '' : steps[touch.number - 2]?.instruction ?? '',
    earlier, reply: reply ? { from: reply.from_address, text: reply.text ?? reply.snippet } : null, feedback,
  };
}

/** Whether a touch may be written or sent while its enrolment is in `status`: a response whatever it is. */
const mayGo = (touch: { kind: string }, status: string) => touch.kind === 'response' || status === 'ACTIVE';

/**
 * Writes follow-up `touchId` (claimed by claimReadyTouches): WRITER runs outside any transaction, then the draft is
 * stored if the touch is still SCHEDULED and its enrolment ACTIVE (any state, for a response), as its next version.
 * A review-required follow-up then waits for a person; an auto one for its due time.
 */
export async function writeTouch(db: Kysely<DB>, touchId: string, write: FollowUpWriter, clock: Clock): Promise<boolean> {
  const found = await db.selectFrom('touches as t').innerJoin('enrolments as n', 'n.id', 't.enrolment_id')
    .select([...TOUCH_COLUMNS.map((c) => `t.${c}` as const), 'n.steps', 'n.status as enrolment_status'])
    .where('t.id', '=', touchId).executeTakeFirst();
  if (!found || found.status !== 'SCHEDULED' || !mayGo(found, found.enrolment_status)) return false;
  const steps = found.steps as SequenceStep[];
  const feedback = await db.selectFrom('email_drafts').select('feedback').where('run_id', '=', found.run_id).where('touch', '=', found.number)
    .orderBy('version', 'desc').limit(1).executeTakeFirst();
  const input = await followUpInput(db, found as TouchRow, steps, feedback?.feedback ?? null);
  if (!input) return false;
  const draft = await write(input);
  return db.transaction().execute(async (trx) => {
    const locked = await lockTouch(trx, touchId);
    if (!locked || locked.touch.status !== 'SCHEDULED' || !mayGo(locked.touch, locked.enrolment.status)) return false;
    const { touch } = locked;
    const first = await trx.selectFrom('touches as t').innerJoin('email_drafts as d', 'd.id', 't.draft_id')
      .select(['d.subject', 'd.to_address']).where('t.enrolment_id', '=', touch.enrolment_id).where('t.number', '=', 1).executeTakeFirstOrThrow();
    const now = clock.now();
    const { max } = await trx.selectFrom('email_drafts').select((eb) => eb.fn.max<number | null>('version').as('max'))
      .where('run_id', '=', touch.run_id).where('touch', '=', touch.number).executeTakeFirstOrThrow();
    const draftId = randomUUID();
    await trx.insertInto('email_drafts').values({
      id: draftId, workspace_id: touch.workspace_id, run_id: touch.run_id, touch: touch.number, version: (max ?? 0) + 1,
      origin: max ? 'regenerated' : 'generated', status: 'DRAFT', to_address: first.to_address,
      // A reply in the thread: the subject is touch 1's, whatever WRITER proposed (DESIGN §13).
      subject: threadSubject(first.subject), body: draft.body.trim(), created_at: now,
      feedback: null, decided_at: null, decided_by_key_id: null, decided_by_user_id: null,
    }).execute();
    const target = { workspaceId: touch.workspace_id, runId: touch.run_id, at: now, touch: touch.number };
    await recordSequenceEvent(trx, { ...target, type: 'touch.drafted' });
    if (touch.review === 'required') {
      await setTouch(trx, touch.id, { status: 'AWAITING_APPROVAL', draft_id: draftId, ready_at: null }, now);
      await recordSequenceEvent(trx, { ...target, type: 'touch.awaiting_approval' });
    } else {
      await setTouch(trx, touch.id, { status: 'DRAFTED', draft_id: draftId, ready_at: touch.due_at ?? now }, now);
    }
    return true;
  });
}

/** `Re: ` and touch 1's subject, once however many times it was already said. */
export function threadSubject(subject: string): string {
  return `Re: ${subject.replace(/^(\s*re\s*:\s*)+/i, '')}`;
}

/**
 * An auto follow-up whose due time came (claimed by claimReadyTouches): its delivery is made, if the touch is still
 * DRAFTED and its enrolment ACTIVE. Answers whether it was.
 */
export async function deliverDueTouch(trx: Kysely<DB>, touchId: string, now: Date): Promise<boolean> {
  const locked = await lockTouch(trx, touchId);
  if (!locked || locked.touch.status !== 'DRAFTED' || !mayGo(locked.touch, locked.enrolment.status)) return false;
  if (locked.touch.due_at && locked.touch.due_at > now) {
    await setTouch(trx, touchId, { ready_at: locked.touch.due_at }, now);
    return false;
  }
  await approveTouchDraft(trx, locked, { keyId: null, userId: null }, now, now);
  return true;
}

/**
 * The follow-up's draft APPROVED and its delivery made (by the enrolment's method, from its sender, with a new
 * Message-ID at the domain of touch 1's): its job may start at the touch's due time, or at once when that has passed.
 */
async function approveTouchDraft(
  trx: Kysely<DB>, locked: NonNullable<Awaited<ReturnType<typeof lockTouch>>>, by: Decider, now: Date, startAt: Date,
): Promise<void> {
  const { touch, enrolment } = locked;
  if (!touch.draft_id) throw new Error(`touch ${touch.id} has no draft to approve`);
  const first = await trx.selectFrom('touches as t').innerJoin('email_deliveries as e', 'e.id', 't.delivery_id')
    .select('e.message_id').where('t.enrolment_id', '=', touch.enrolment_id).where('t.number', '=', 1).executeTakeFirstOrThrow();
  const target = { workspaceId: touch.workspace_id, runId: touch.run_id };
  await applyTransition(trx, DRAFT.approve, {
    ...target, draftId: touch.draft_id, at: now, set: { decided_at: now, decided_by_key_id: by.keyId, decided_by_user_id: by.userId },
  });
  const deliveryId = await queueDelivery(trx, {
    ...target, draftId: touch.draft_id, method: enrolment.method, senderUserId: enrolment.sender_user_id, now,
    messageId: `<${randomUUID()}@${messageIdDomain(first.message_id)}>`, availableAt: startAt,
    // A follow-up goes out only inside the send window (DESIGN §14); the claim holds it to the next opening. A
    // response is a person's answer to a buyer who just wrote: it goes when they approve it, as touch 1 does.
    respectWindow: touch.kind === 'sequence',
  });
  await trx.updateTable('email_deliveries').set({ touch: touch.number }).where('id', '=', deliveryId).execute();
  await setTouch(trx, touch.id, { status: 'APPROVED', delivery_id: deliveryId, ready_at: null }, now);
  await recordSequenceEvent(trx, { ...target, at: now, type: 'touch.approved', touch: touch.number });
}

function messageIdDomain(messageId: string): string {
  return /@([^>]+)>?$/.exec(messageId)?.[1] ?? 'leadrun.invalid';
}

/** A follow-up's touch of run `runId`, locked, or 404. */
async function lockRunTouch(trx: Kysely<DB>, workspaceId: string, runId: string, number: number) {
  const run = isUuid(runId)
    ? await trx.selectFrom('runs').select('id').where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst()
    : undefined;
  if (!run) throw notFound('Run');
  const found = await trx.selectFrom('touches').select('id').where('workspace_id', '=', workspaceId).where('run_id', '=', runId)
    .where('number', '=', number).where('number', '>', 1).executeTakeFirst();
  const locked = found ? await lockTouch(trx, found.id) : null;
  // The run is there; its thread has no such follow-up (no enrolment, or a shorter sequence): its state forbids it.
  if (!locked) throw new AppError('invalid_state', `The run's thread has no follow-up ${number}.`);
  return locked;
}

function notAwaiting(status: string, verb: string): AppError {
  return new AppError('invalid_state', `The follow-up is ${status}; it can be ${verb} only while AWAITING_APPROVAL.`, { extra: { touchStatus: status } });
}

/**
 * A person approves a follow-up waiting for review (POST /api/v1/runs/{id}/touches/{number}/approve): its delivery
 * is made to start at its due time, or at once when that has passed. Only while the enrolment is ACTIVE, but for a
 * response, which goes whatever the sequence's state, unless its recipient is suppressed (409 recipient_suppressed).
 */
export async function approveTouch(trx: Kysely<DB>, workspaceId: string, runId: string, number: number, by: Decider, clock: Clock): Promise<void> {
  const locked = await lockRunTouch(trx, workspaceId, runId, number);
  if (locked.touch.status !== 'AWAITING_APPROVAL') throw notAwaiting(locked.touch.status, 'approved');
  if (!mayGo(locked.touch, locked.enrolment.status)) {
    throw new AppError('invalid_state', `The sequence is ${locked.enrolment.status}; a follow-up is approved only while it is ACTIVE.`);
  }
  if (locked.touch.kind === 'response' && locked.touch.draft_id) {
    const draft = await trx.selectFrom('email_drafts').select('to_address').where('id', '=', locked.touch.draft_id).executeTakeFirstOrThrow();
    await refuseSuppressed(trx, workspaceId, draft.to_address);
  }
  const now = clock.now();
  const due = locked.touch.due_at ?? now;
  await approveTouchDraft(trx, locked, by, now, due > now ? due : now);
}

/**
 * A person rejects a follow-up waiting for review. With `regenerate`, WRITER writes it again with the feedback (the
 * touch SCHEDULED, due at once to be written); without, the follow-up is SKIPPED and the next one counts from now.
 */
export async function rejectTouch(
  trx: Kysely<DB>, workspaceId: string, runId: string, number: number, input: { feedback?: string | null; regenerate?: boolean }, by: Decider, clock: Clock,
): Promise<void> {
  const locked = await lockRunTouch(trx, workspaceId, runId, number);
  const { touch, enrolment } = locked;
  if (touch.status !== 'AWAITING_APPROVAL' || !touch.draft_id) throw notAwaiting(touch.status, 'rejected');
  const now = clock.now();
  const feedback = input.feedback?.trim() || null;
  const target = { workspaceId, runId };
  await applyTransition(trx, input.regenerate ? DRAFT.supersede : DRAFT.reject, {
    ...target, draftId: touch.draft_id, at: now,
    set: { decided_at: now, decided_by_key_id: by.keyId, decided_by_user_id: by.userId, feedback },
  });
  if (input.regenerate) {
    const goes = mayGo(touch, enrolment.status);
    await setTouch(trx, touch.id, { status: 'SCHEDULED', draft_id: null, ready_at: goes ? now : null }, now);
    // The reviewer waits for the new version: the scheduler is asked now, not at its next minute.
    if (goes) await tickSoon(trx, now);
    return;
  }
  await setTouch(trx, touch.id, { status: 'SKIPPED', skip_reason: 'rejected', ready_at: null }, now);
  await recordSequenceEvent(trx, { ...target, at: now, type: 'touch.skipped', touch: number, why: 'rejected' });
  if (touch.kind === 'sequence') await scheduleNext(trx, enrolment, number, now);
}

/**
 * A person edits a follow-up waiting for review (PATCH /api/v1/runs/{id}/touches/{number}/draft): the next version,
 * `edited`, with the fields sent; the subject stays the thread's unless sent.
 */
export async function editTouchDraft(
  trx: Kysely<DB>, workspaceId: string, runId: string, number: number, input: { subject?: string; body?: string }, by: Decider, clock: Clock,
): Promise<void> {
  const { touch } = await lockRunTouch(trx, workspaceId, runId, number);
  if (touch.status !== 'AWAITING_APPROVAL' || !touch.draft_id) throw notAwaiting(touch.status, 'edited');
  const current = await trx.selectFrom('email_drafts').selectAll().where('id', '=', touch.draft_id).executeTakeFirstOrThrow();
  const subject = input.subject?.trim() || current.subject;
  const body = input.body?.trim() || current.body;
  if (subject === current.subject && body === current.body) return;
  const now = clock.now();
  await applyTransition(trx, DRAFT.edit, { workspaceId, runId, draftId: current.id, at: now });
  const id = randomUUID();
  await trx.insertInto('email_drafts').values({
    id, workspace_id: workspaceId, run_id: runId, touch: number, version: current.version + 1, status: 'DRAFT', origin: 'edited',
    to_address: current.to_address, subject, body, created_at: now, edited_at: now, edited_by_user_id: by.userId, edited_by_key_id: by.keyId,
    feedback: null, decided_at: null, decided_by_key_id: null, decided_by_user_id: null,
  }).execute();
  await setTouch(trx, touch.id, { draft_id: id }, now);
}

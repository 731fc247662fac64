// "Draft a response" (DESIGN §16): the answer to a buyer's reply is the next touch of the reply's thread, kind
// `response`. WRITER writes it from the reply under §12's rules (src/agent/follow-up/reply.ts) in the follow-up
// scheduler's next pass, brought forward to now; it then waits for a person (AWAITING_APPROVAL) and is reviewed,
// edited, approved and sent in the thread as a follow-up is (src/domain/sequences/touches.ts), whatever the state of
// the sequence the reply stopped. An interested reply has one asked for as soon as it is read (effects.ts).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ReplyClass } from '../../agent/replies/types.ts';
import type { DB } from '../../db/schema.ts';
import { TOUCH_NUMBER_MAX } from '../../schemas/touches.ts';
import { AppError, notFound } from '../errors.ts';
import { tickSoon } from '../sequences/tick.ts';
import { isUuid } from '../validation.ts';


/** What is answered: a person wrote. Not an auto-reply, an absence, a bounce, nor a request to stop. */
export const ANSWERABLE: readonly ReplyClass[] = ['interested', 'not_now', 'not_interested', 'referral', 'other'];

export interface ResponseTouch {
  runId: string;
  /** The response's touch number in the run's thread. */
  number: number;
  /** False when a response to the reply was there already (not skipped): that one is answered. */
  created: boolean;
}

/**
 * Asks for a response to reply `replyId`: a SCHEDULED touch of its run's thread, review required, written in the
 * scheduler's next pass. The run's enrolment is locked (made, thread-only, for a run approved without a sequence),
 * so two requests for one reply make one touch. 404 for no such reply; 409 for a class that is not answered.
 */
export async function requestResponse(trx: Kysely<DB>, workspaceId: string, replyId: string, now: Date): Promise<ResponseTouch> {
  const reply = isUuid(replyId)
    ? await trx.selectFrom('email_replies as r').innerJoin('runs as run', 'run.id', 'r.run_id')
      .innerJoin('email_deliveries as e', 'e.id', 'r.delivery_id')
      .select(['r.id', 'r.run_id', 'r.classification', 'run.lead_id', 'e.id as delivery_id', 'e.draft_id', 'e.method', 'e.sender_user_id'])
      .where('r.workspace_id', '=', workspaceId).where('run.workspace_id', '=', workspaceId).where('r.id', '=', replyId)
      .executeTakeFirst()
    : undefined;
  if (!reply) throw notFound('Reply');
  if (!ANSWERABLE.includes(reply.classification)) {
    throw new AppError('invalid_state', `A reply marked ${reply.classification.replaceAll('_', ' ')} is not answered: mark it as what it says first.`,
      { extra: { classification: reply.classification } });
  }
  // The lead's row first, as an approval locks it (enrolments.ts): enrolling and answering for one lead take turns.
  await trx.selectFrom('leads').select('id').where('id', '=', reply.lead_id).where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
  const enrolmentId = await threadOfRun(trx, workspaceId, reply, now);
  const existing = await trx.selectFrom('touches').select('number').where('reply_id', '=', reply.id).where('status', '<>', 'SKIPPED').executeTakeFirst();
  if (existing) return { runId: reply.run_id, number: existing.number, created: false };
  const { max } = await trx.selectFrom('touches').select((eb) => eb.fn.max<number | null>('number').as('max'))
    .where('enrolment_id', '=', enrolmentId).executeTakeFirstOrThrow();
  const number = (max ?? 1) + 1;
  if (number > TOUCH_NUMBER_MAX) {
    throw new AppError('invalid_state', `The thread holds ${TOUCH_NUMBER_MAX} touches, the most one can: answer from your own mailbox.`);
  }
  await trx.insertInto('touches').values({
    id: randomUUID(), workspace_id: workspaceId, enrolment_id: enrolmentId, run_id: reply.run_id, number, kind: 'response', reply_id: reply.id,
    status: 'SCHEDULED', review: 'required', due_at: null, ready_at: now, draft_id: null, delivery_id: null, skip_reason: null,
    created_at: now, updated_at: now,
  }).execute();
  await tickSoon(trx, now);
  return { runId: reply.run_id, number, created: true };
}

/**
 * The enrolment holding the run's thread, locked: the one its approval made, else a thread-only one made now, FINISHED
 * (it has no follow-ups to send), with touch 1 the e-mail the reply answers.
 */
async function threadOfRun(
  trx: Kysely<DB>, workspaceId: string,
  reply: { run_id: string; lead_id: string; delivery_id: string; draft_id: string; method: 'send' | 'mailbox'; sender_user_id: string | null },
  now: Date,
): Promise<string> {
  const enrolment = await trx.selectFrom('enrolments').select('id').where('workspace_id', '=', workspaceId).where('run_id', '=', reply.run_id)
    .forUpdate().executeTakeFirst();
  if (enrolment) return enrolment.id;
  const id = randomUUID();
  await trx.insertInto('enrolments').values({
    id, workspace_id: workspaceId, lead_id: reply.lead_id, run_id: reply.run_id, sequence_id: null, sequence_name: '', steps: '[]',
    thread_only: true, method: reply.method, sender_user_id: reply.sender_user_id, status: 'FINISHED', stop_reason: null, pause_reason: null,
    paused_until: null, next_touch_at: null, created_at: now, updated_at: now,
  }).execute();
  await trx.insertInto('touches').values({
    id: randomUUID(), workspace_id: workspaceId, enrolment_id: id, run_id: reply.run_id, number: 1, status: 'SENT', review: 'required',
    due_at: null, ready_at: null, draft_id: reply.draft_id, delivery_id: reply.delivery_id, skip_reason: null, created_at: now, updated_at: now,
  }).execute();
  return id;
}

// The delivery of an approved draft (DESIGN §7): one row of `email_deliveries` per draft, its Message-ID fixed when
// it is made, and one `email.deliver` job that sends it (src/jobs/handlers/email-deliver.ts). Queued in the approval's transaction,
// queued again by a retry after it FAILED; the job's key is the delivery's id, so a delivery has one live job.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, DeliveryMethod, WaitingFor } from '../../db/schema.ts';
import { enqueueJob } from '../../jobs/sql/enqueueJob.ts';
import { AppError, notFound } from '../errors.ts';
import { applyTransition, DELIVERY } from './lifecycle.ts';
import { isUuid } from '../validation.ts';

export const EMAIL_DELIVER = 'email.deliver';
/** Six attempts: the first, then after about 30 s, 2 min, 10 min, 30 min and 2 h (src/jobs/handlers/email-deliver.ts). */
export const DELIVERY_MAX_ATTEMPTS = 6;

/** What an approval may ask for: a delivery method, or `none` (src/mail/settings.ts's DeliverMethod is this). */
export type DeliverMethod = DeliveryMethod | 'none';

/** What a delivery needs of the workspace's mail transport (src/mail/settings.ts loads it). */
export interface DeliveryTransport {
  smtp: object | null;
  imap: object | null;
  from: { address: string } | null;
  /** What an approval without `deliver` does. */
  defaultDeliver: DeliverMethod;
}

export interface DeliverPayload {
  deliveryId: string;
}

/**
 * What an approval asked for, checked against what the workspace has set up, before anything is approved: `send`
 * needs SMTP (the workspace's or SMTP_URL), `mailbox` needs IMAP, and either needs a recipient and a sender address.
 */
export function chooseDelivery(asked: DeliverMethod | undefined, transport: DeliveryTransport, to: string | null): DeliveryMethod | null {
  const method = asked ?? transport.defaultDeliver;
  if (method === 'none') return null;
  if (method === 'send' && !transport.smtp) {
    throw new AppError('mail_not_configured',
      'No SMTP server is set up: an admin sets one in Settings / E-mail (or the installation sets SMTP_URL). Nothing was approved.');
  }
  if (method === 'mailbox' && !transport.imap) {
    throw new AppError('mail_not_configured', 'No IMAP mailbox is set up: an admin sets one in Settings / E-mail. Nothing was approved.');
  }
  if (!transport.from) {
    throw new AppError('mail_not_configured',
      'No sender address is set up: an admin sets one in Settings / E-mail (or the installation sets MAIL_FROM). Nothing was approved.');
  }
  if (!to) {
    throw new AppError('invalid_state', 'The draft has no recipient: set its `to` (or the lead\'s e-mail) before delivering it. Nothing was approved.', {
      errors: [{ field: 'to', message: 'the draft has no recipient' }],
    });
  }
  return method;
}

/** Makes the delivery of `draftId` and its job, with the run event; inside the approval's transaction. */
export async function queueDelivery(trx: Kysely<DB>, input: {
  workspaceId: string; runId: string; draftId: string; method: DeliveryMethod; senderUserId: string | null; now: Date;
  /** The e-mail's Message-ID, fixed now so that every attempt sends the same message. */
  messageId: string;
  /** When its job may start: later than `now` while the approval can be undone (undoApproval). */
  availableAt?: Date;
  /** DESIGN §14: it waits SCHEDULED until `at` (the approval's `sendAt`, or the next window). */
  schedule?: { at: Date; waitingFor: WaitingFor } | null;
  /** It leaves only inside the send window (a follow-up); checked when its job claims it (src/domain/sending/limits.ts). */
  respectWindow?: boolean;
}): Promise<string> {
  const id = randomUUID();
  const transition = input.schedule ? DELIVERY.schedule : DELIVERY.queue;
  // UNIQUE (draft_id): a second delivery of one draft fails here, whatever raced to make it.
  await trx.insertInto('email_deliveries').values({
    id, workspace_id: input.workspaceId, run_id: input.runId, draft_id: input.draftId, sender_user_id: input.senderUserId,
    method: input.method, status: transition.to, message_id: input.messageId, attempts: 0, queued_at: input.now,
    delivered_at: null, error: null, response: null,
    scheduled_for: input.schedule?.at ?? null, waiting_for: input.schedule?.waitingFor ?? null, respect_window: input.respectWindow ?? false,
  }).execute();
  const availableAt = input.schedule && input.schedule.at > (input.availableAt ?? input.now) ? input.schedule.at : input.availableAt;
  await enqueueDeliveryJob(trx, input.workspaceId, id, input.now, availableAt);
  await applyTransition(trx, transition, { workspaceId: input.workspaceId, runId: input.runId, deliveryId: id, at: input.now });
  return id;
}

export async function enqueueDeliveryJob(
  trx: Kysely<DB>, workspaceId: string, deliveryId: string, now: Date, availableAt = now,
): Promise<void> {
  const payload: DeliverPayload = { deliveryId };
  await enqueueJob(trx, {
    kind: EMAIL_DELIVER, key: deliveryId, workspaceId, payload, maxAttempts: DELIVERY_MAX_ATTEMPTS, availableAt, now,
  });
}

/**
 * Takes back a delivery whose job no runner has taken yet (undoApproval): the job and the delivery are deleted, so
 * nothing is sent and a later approval makes a delivery of its own. False when the job has begun (or is gone): it
 * may be sending, and only the delivery's own course can tell.
 */
export async function cancelQueuedDelivery(trx: Kysely<DB>, workspaceId: string, runId: string): Promise<boolean> {
  const delivery = await trx.selectFrom('email_deliveries').select(['id', 'status'])
    .where('workspace_id', '=', workspaceId).where('run_id', '=', runId).where('touch', '=', 1)
    .orderBy('queued_at', 'desc').forUpdate().executeTakeFirst();
  if (!delivery || (delivery.status !== 'QUEUED' && delivery.status !== 'SCHEDULED')) return false;
  // The claim of a runner and this delete take the job's row in turn: a job already RUNNING is not deleted, and a
  // job deleted here is never claimed.
  const job = await trx.deleteFrom('jobs')
    .where('kind', '=', EMAIL_DELIVER).where('key', '=', delivery.id)
    .where('status', '=', 'QUEUED').where('attempts', '=', 0)
    .returning('id').executeTakeFirst();
  if (!job) return false;
  await trx.deleteFrom('email_deliveries').where('id', '=', delivery.id).execute();
  return true;
}

/**
 * Queues a FAILED delivery again with a new job (POST /api/v1/runs/{id}/deliver): same Message-ID, so a server that
 * did take an earlier attempt sees the same message. Anything but FAILED is 409 invalid_state. In a transaction.
 */
export async function retryDelivery(trx: Kysely<DB>, workspaceId: string, runId: string, clock: Clock): Promise<void> {
  const run = isUuid(runId)
    ? await trx.selectFrom('runs').select(['id']).where('workspace_id', '=', workspaceId).where('id', '=', runId).forUpdate().executeTakeFirst()
    : undefined;
  if (!run) throw notFound('Run');
  const delivery = await trx.selectFrom('email_deliveries').select(['id', 'status'])
    .where('workspace_id', '=', workspaceId).where('run_id', '=', runId).where('touch', '=', 1)
    .orderBy('queued_at', 'desc').forUpdate().executeTakeFirst();
  if (!delivery) throw new AppError('invalid_state', 'The run has no delivery to retry: approve it with `deliver` first.');
  if (delivery.status !== 'FAILED') {
    throw new AppError('invalid_state', `The delivery is ${delivery.status}; only a FAILED delivery can be retried.`, {
      extra: { deliveryStatus: delivery.status },
    });
  }
  const now = clock.now();
  await applyTransition(trx, DELIVERY.requeue, { workspaceId, runId, deliveryId: delivery.id, at: now, set: { error: null, queued_at: now } });
  await enqueueDeliveryJob(trx, workspaceId, delivery.id, now);
}

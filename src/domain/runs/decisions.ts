// What a person decides about a run: approve its draft, reject it (optionally asking WRITER for a new version
// with feedback), or cancel a run still in the pipeline. Each is valid only from the states DESIGN §3 names and
// changes nothing otherwise (409 invalid_state). Call each inside a transaction.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, DeliveryMethod, DraftStatus } from '../../db/schema.ts';
import { cancelQueuedDelivery, chooseDelivery, queueDelivery, type DeliverMethod, type DeliveryTransport } from './deliveries.ts';
import { AppError } from '../errors.ts';
import { applyTransition, DRAFT, lockRun, RUN, RUNS_CHANNEL, skipSteps, STEP, type Decider, type Transition } from './lifecycle.ts';
import { getRun, type Run } from './runs.ts';
import { scheduleOfApproval, type SendAt } from '../sending/schedule.ts';
import { enrolRun, undoEnrolment } from '../sequences/enrolments.ts';
import { refuseUndeliverable } from '../suppressions/gate.ts';

async function readBack(trx: Kysely<DB>, workspaceId: string, runId: string): Promise<Run> {
  const run = await getRun(trx, workspaceId, runId);
  if (!run) throw new Error(`run ${runId} vanished inside its transaction`);
  return run;
}

/**
 * Decides the run's current version: APPROVED, REJECTED, or SUPERSEDED when a person asked for the next version (a
 * regeneration rejects nothing: the version is replaced, with the feedback that asked for it).
 */
async function decideDraft(
  trx: Kysely<DB>, workspaceId: string, runId: string, transition: Transition<DraftStatus>, by: Decider, at: Date, feedback: string | null,
) {
  await applyTransition(trx, transition, {
    workspaceId, runId, at, set: { decided_at: at, decided_by_key_id: by.keyId, decided_by_user_id: by.userId, feedback },
  });
}

/** How an approval delivers the draft (DESIGN §7). Without it, an approval only approves. */
export interface ApprovalDelivery {
  /** What was asked; left out, the workspace's default applies (`none` without a mail transport). */
  deliver?: DeliverMethod;
  /** Whose name, address and signature the e-mail carries: the approving user, or for a key the workspace's admin. */
  senderUserId: string | null;
  /** The workspace's mail transport, read (in the approval's transaction) only when it is needed. */
  transport: (trx: Kysely<DB>) => Promise<DeliveryTransport>;
  /** A new Message-ID at the sender's domain (src/mail/message.ts). */
  newMessageId: (fromAddress: string) => string;
  /** The installation's postal address (MAIL_POSTAL_ADDRESS), for a workspace that sets none (DESIGN §15). */
  postalAddress?: string | null;
  /** How long the delivery waits before its job may start, so that the approval can be undone (the web UI's). */
  holdMs?: number;
  /** DESIGN §14: send in the next send window, or at this instant, rather than at once. */
  sendAt?: SendAt;
  /** The follow-up sequence to enrol the lead in (DESIGN §13): an id, null for none, left out for the default. */
  sequenceId?: string | null;
}

/**
 * Approves the draft: it becomes APPROVED and the run COMPLETED. With a delivery (send or mailbox), the delivery and
 * its job are made in the same transaction, after checking that the workspace can deliver it, so that a refused
 * delivery approves nothing. Two approvals racing queue on the run's lock; the second finds it COMPLETED (409).
 */
export async function approveRun(
  trx: Kysely<DB>, workspaceId: string, runId: string, by: Decider, clock: Clock, delivery?: ApprovalDelivery,
): Promise<Run> {
  await lockRun(trx, workspaceId, runId, RUN.approve.from, 'approved');
  let method: DeliveryMethod | null = null;
  let transport: DeliveryTransport | null = null;
  const draft = await trx.selectFrom('email_drafts').select(['id', 'to_address'])
    .where('run_id', '=', runId).where('touch', '=', 1).where('status', '=', 'DRAFT').orderBy('version', 'desc').executeTakeFirst();
  if (delivery && draft && (delivery.deliver === undefined || delivery.deliver !== 'none')) {
    transport = await delivery.transport(trx);
    method = chooseDelivery(delivery.deliver, transport, draft.to_address);
    if (method) await refuseUndeliverable(trx, workspaceId, draft.to_address, { ...delivery, from: transport.from });
  }
  const now = clock.now();
  const schedule = method && delivery?.sendAt ? await scheduleOfApproval(trx, workspaceId, runId, delivery.sendAt, now) : null;
  await decideDraft(trx, workspaceId, runId, DRAFT.approve, by, now, null);
  await applyTransition(trx, RUN.approve, { workspaceId, runId, at: now });
  if (delivery && method && draft && transport?.from) {
    const deliveryId = await queueDelivery(trx, {
      workspaceId, runId, draftId: draft.id, method, senderUserId: delivery?.senderUserId ?? null, messageId: delivery.newMessageId(transport.from.address), now,
      availableAt: new Date(now.getTime() + (delivery?.holdMs ?? 0)), schedule,
    });
    await enrolRun(trx, { workspaceId, runId, sequenceId: delivery.sequenceId, method, senderUserId: delivery.senderUserId, draftId: draft.id, deliveryId, now });
  }
  return readBack(trx, workspaceId, runId);
}

/**
 * Takes back an approval whose delivery has not begun (the web UI's Undo, within the hold approveRun gave it): the
 * delivery and its job are deleted, the draft is a DRAFT again and the run AWAITING_APPROVAL, as before the approval.
 * The approval's events stay in the run's history, followed by `run.approval_undone`. An approval that delivers
 * nothing, or whose delivery a runner has taken, cannot be undone (409 invalid_state).
 */
export async function undoApproval(trx: Kysely<DB>, workspaceId: string, runId: string, clock: Clock): Promise<Run> {
  await lockRun(trx, workspaceId, runId, RUN.undoApproval.from, 'taken back');
  await undoEnrolment(trx, workspaceId, runId);
  if (!(await cancelQueuedDelivery(trx, workspaceId, runId))) {
    throw new AppError('invalid_state',
      'The approval cannot be undone: its e-mail is already on its way, or it delivers nothing.');
  }
  const now = clock.now();
  const draft = await trx.selectFrom('email_drafts').select('id')
    .where('run_id', '=', runId).where('touch', '=', 1).where('status', '=', 'APPROVED').orderBy('version', 'desc').executeTakeFirst();
  if (!draft) throw new Error(`run ${runId} had a queued delivery and no approved draft`);
  await applyTransition(trx, DRAFT.undoApproval, {
    workspaceId, runId, draftId: draft.id, at: now, set: { decided_at: null, decided_by_key_id: null, decided_by_user_id: null },
  });
  await applyTransition(trx, RUN.undoApproval, { workspaceId, runId, at: now });
  return readBack(trx, workspaceId, runId);
}

/**
 * Rejects the draft. With `regenerate`, the run goes back to the queue for WRITER alone, which writes the next
 * version of the draft with the feedback, building on the version the reviewer last saw (a person's edit included);
 * that version is SUPERSEDED, not REJECTED, since nobody rejected it. Without it, the draft and the run end REJECTED.
 */
export async function rejectRun(
  trx: Kysely<DB>, workspaceId: string, runId: string, input: { feedback?: string | null; regenerate?: boolean }, by: Decider, clock: Clock,
): Promise<Run> {
  await lockRun(trx, workspaceId, runId, RUN.reject.from, 'rejected');
  const now = clock.now();
  const feedback = input.feedback?.trim() || null;
  await decideDraft(trx, workspaceId, runId, input.regenerate ? DRAFT.supersede : DRAFT.reject, by, now, feedback);
  if (!input.regenerate) {
    await applyTransition(trx, RUN.reject, { workspaceId, runId, at: now, event: { error: feedback } });
    return readBack(trx, workspaceId, runId);
  }
  await applyTransition(trx, STEP.reset, {
    workspaceId, runId, nodes: ['WRITER'], at: now, set: {
      output: null, attempts: 0, error: null, started_at: null, completed_at: null,
      engine: null, model: null, prompt_version: null, input_tokens: null, output_tokens: null, duration_ms: null,
    },
  });
  await applyTransition(trx, RUN.regenerate, {
    workspaceId, runId, at: now, event: { node: 'WRITER', error: feedback },
    set: { completed_at: null, available_at: now, feedback, error: null, lease_owner: null, lease_expires_at: null },
  });
  await sql`SELECT pg_notify(${RUNS_CHANNEL}, ${runId})`.execute(trx);
  return readBack(trx, workspaceId, runId);
}

/** Stops a run still in the pipeline: its unfinished steps are SKIPPED, and its worker lets go at its next write. */
export async function cancelRun(trx: Kysely<DB>, workspaceId: string, runId: string, clock: Clock): Promise<Run> {
  await lockRun(trx, workspaceId, runId, RUN.cancel.from, 'cancelled');
  const now = clock.now();
  await skipSteps(trx, { workspaceId, runId, at: now }, 'the run was cancelled');
  await applyTransition(trx, RUN.cancel, { workspaceId, runId, at: now, set: { completed_at: now, lease_owner: null, lease_expires_at: null } });
  return readBack(trx, workspaceId, runId);
}

// The run events and webhook events of a run's follow-ups (DESIGN §13): the enrolment's course (enrolled, paused,
// resumed, stopped, finished) and each touch's (drafted, awaiting approval, approved, sent, skipped). They join the
// run's log like its other events; those integrators hear of carry the Run, whose `sequence` shows the change.
import type { Kysely } from 'kysely';
import type { DB, RunEventType } from '../../db/schema.ts';
import { emitRunWebhook, recordEvent } from '../runs/lifecycle.ts';
import type { WebhookEventType } from '../webhooks/events.ts';

export type SequenceEvent = Extract<RunEventType, `sequence.${string}` | `touch.${string}`>;

/** The webhook type of each event; null for those integrators do not hear of (they follow the Run's other events). */
const WEBHOOKS: Record<SequenceEvent, WebhookEventType | null> = {
  'sequence.enrolled': 'sequence.enrolled',
  'sequence.stopped': 'sequence.stopped',
  'sequence.paused': 'sequence.paused',
  'sequence.resumed': 'sequence.resumed',
  'sequence.finished': null,
  'touch.drafted': 'touch.drafted',
  'touch.awaiting_approval': 'touch.awaiting_approval',
  'touch.approved': null,
  'touch.sent': 'touch.sent',
  'touch.skipped': 'touch.skipped',
};

/**
 * Records `type` in the run's log and writes its webhook event, in `trx`. `touch` is the touch's number (kept in the
 * event's `attempt`: a touch is the thread's n-th attempt at the lead); `why`, a stop's or skip's reason.
 */
export async function recordSequenceEvent(
  trx: Kysely<DB>, input: { workspaceId: string; runId: string; type: SequenceEvent; at: Date; touch?: number; why?: string | null },
): Promise<void> {
  await recordEvent(trx, {
    workspaceId: input.workspaceId, runId: input.runId, type: input.type, at: input.at,
    attempt: input.touch ?? null, error: input.why ?? null,
  });
  const hook = WEBHOOKS[input.type];
  if (hook) await emitRunWebhook(trx, input.workspaceId, input.runId, hook, input.at);
}

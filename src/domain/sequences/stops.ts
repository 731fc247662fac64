// Stopping and pausing a lead's follow-ups (DESIGN §13): the one entry point for every cause, so that replies,
// bounces, suppressions, a closed lead and erasure stop a sequence the same way. Call inside the transaction that
// records the cause.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

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

/** Stops the active (or paused) enrolment(s) named; their unsent touches end SKIPPED. Returns how many stopped. */
export async function stopEnrolments(_trx: Kysely<DB>, _input: StopInput): Promise<number> {
  // Sequences arrive with issue 42; until then no lead has an enrolment to stop.
  return 0;
}

/** Pauses the lead's active enrolment until `until` (then it resumes by itself). Returns whether one was paused. */
export async function pauseEnrolment(
  _trx: Kysely<DB>, _input: { workspaceId: string; leadId: string; until: Date; reason: SequencePauseReason; at: Date },
): Promise<boolean> {
  return false;
}

// The run's `sequence` (DESIGN §13) as PostgreSQL writes it into the Run (src/domain/runs/runs.ts): the enrolment its
// approval made, with the sequence's name as it was then. Null for a run that enrolled its lead in nothing
// (a thread-only enrolment, made for a response, is no sequence).
import { sql, type RawBuilder } from 'kysely';

export interface RunSequence {
  id: string;
  name: string;
  status: 'ACTIVE' | 'PAUSED' | 'FINISHED' | 'STOPPED';
  stopReason: string | null;
  pausedUntil: string | null;
  nextTouchAt: string | null;
}

/** The keys of RunSequence, in the order the projection writes them (test/domain/run-shape.test.ts). */
export const RUN_SEQUENCE_KEYS = ['id', 'name', 'status', 'stopReason', 'pausedUntil', 'nextTouchAt'] as const;

/** The run `r`'s enrolment as a JSON object, or null. The id is the enrolment's sequence, or the enrolment's own once that was deleted. */
export const RUN_SEQUENCE_SQL: RawBuilder<unknown> = sql`(SELECT json_build_object(
    'id', coalesce(n.sequence_id, n.id), 'name', n.sequence_name, 'status', n.status, 'stopReason', n.stop_reason,
    'pausedUntil', leadrun_iso(n.paused_until), 'nextTouchAt', leadrun_iso(n.next_touch_at))
  FROM enrolments n WHERE n.run_id = r.id AND n.workspace_id = r.workspace_id AND NOT n.thread_only)`;

// The event log of a run as streams and trace pages read it: every step started, retried, completed or failed, and
// every change of the run's state, written with the change it records (lifecycle.ts).
import { sql, type Kysely, type Selectable } from 'kysely';
import { prepare } from '../../db/database.ts';
import type { DB, RunEventsTable, RunEventType, RunStatus } from '../../db/schema.ts';
import { isUuid } from '../validation.ts';
import { getRun } from './runs.ts';

export interface RunEvent {
  /** The event's number within its run: 1, 2, 3… It says nothing of other runs or workspaces. */
  id: number;
  type: RunEventType;
  node: string | null;
  attempt: number | null;
  durationMs: number | null;
  engine: string | null;
  model: string | null;
  usage: { inputTokens: number; outputTokens: number } | null;
  error: string | null;
  deferred: boolean;
  at: string;
}

/** The statuses in which a run waits for nobody's worker: its event stream ends there. */
export const RUN_AT_REST: ReadonlySet<RunStatus> = new Set(['AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED']);

/** Whether a run's log can grow only by someone's decision: at rest, and no delivery of its draft under way. */
export function isSettled(progress: { status: RunStatus; delivering: boolean }): boolean {
  return RUN_AT_REST.has(progress.status) && !progress.delivering;
}

/** An event as read from the table, without the ids that stay inside the database. */
type EventRow = Omit<Selectable<RunEventsTable>, 'id' | 'run_id' | 'workspace_id'>;

function toEvent(r: EventRow): RunEvent {
  return {
    id: r.seq,
    type: r.type,
    node: r.node,
    attempt: r.attempt,
    durationMs: r.duration_ms,
    engine: r.engine,
    model: r.model,
    usage: r.input_tokens === null && r.output_tokens === null ? null : { inputTokens: r.input_tokens ?? 0, outputTokens: r.output_tokens ?? 0 },
    error: r.error,
    deferred: r.deferred,
    at: r.occurred_at.toISOString(),
  };
}

export interface RunProgress {
  status: RunStatus;
  /** A delivery of the run's draft is QUEUED or DELIVERING: a COMPLETED run is still worth following. */
  delivering: boolean;
  /** The events after the number asked for, oldest first, at most the limit. */
  events: RunEvent[];
}

/**
 * The run's status and its events after `after`, in one statement, so both come from one snapshot: every event
 * up to that status is among them (an event commits with the change it records). Null when there is no such run.
 */
export async function readRunProgress(db: Kysely<DB>, workspaceId: string, runId: string, after: number, limit: number): Promise<RunProgress | null> {
  if (!isUuid(runId)) return null;
  const { rows } = await sql<{ status: RunStatus; delivering: boolean } & { [K in keyof EventRow]: EventRow[K] | null }>`
    ${prepare}SELECT r.status,
           EXISTS (SELECT 1 FROM email_deliveries d WHERE d.run_id = r.id AND d.touch = 1 AND d.status IN ('QUEUED', 'DELIVERING')) AS delivering,
           e.seq, e.type, e.node, e.attempt, e.duration_ms, e.engine, e.model, e.input_tokens, e.output_tokens,
           e.error, e.deferred, e.occurred_at
    FROM runs r
    LEFT JOIN LATERAL (
      SELECT seq, type, node, attempt, duration_ms, engine, model, input_tokens, output_tokens, error, deferred, occurred_at
      FROM run_events WHERE run_id = r.id AND workspace_id = r.workspace_id AND seq > ${after}::bigint
      ORDER BY seq LIMIT ${limit}::int) e ON true
    WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}
    ORDER BY e.seq`.execute(db);
  const first = rows[0];
  if (!first) return null;
  return { status: first.status, delivering: first.delivering, events: rows.filter((r): r is typeof r & EventRow => r.seq !== null).map(toEvent) };
}

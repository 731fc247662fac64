// The event log of a run: every step started, retried, completed or failed, and every change of the run's state,
// written in the same transaction as the change it records. Progress streams and trace pages read it.
import { sql, type Kysely } from 'kysely';
import type { DB, RunEventType } from '../db/schema.ts';
import { isUuid } from './validation.ts';

/** Carries the id of a run whose log grew, so that streams of that run can read on. */
export const RUN_EVENTS_CHANNEL = 'leadrun_run_events';

export interface RunEventInput {
  runId: string;
  workspaceId: string;
  type: RunEventType;
  node?: string | null;
  attempt?: number | null;
  durationMs?: number | null;
  engine?: string | null;
  model?: string | null;
  usage?: { inputTokens: number; outputTokens: number } | null;
  error?: string | null;
  at: Date;
}

export async function recordEvent(trx: Kysely<DB>, event: RunEventInput): Promise<void> {
  await trx.insertInto('run_events').values({
    run_id: event.runId,
    workspace_id: event.workspaceId,
    type: event.type,
    node: event.node ?? null,
    attempt: event.attempt ?? null,
    duration_ms: event.durationMs === undefined || event.durationMs === null ? null : Math.round(event.durationMs),
    engine: event.engine ?? null,
    model: event.model ?? null,
    input_tokens: event.usage?.inputTokens ?? null,
    output_tokens: event.usage?.outputTokens ?? null,
    error: event.error ?? null,
    occurred_at: event.at,
  }).execute();
  await sql`SELECT pg_notify(${RUN_EVENTS_CHANNEL}, ${event.runId})`.execute(trx);
}

export interface RunEvent {
  id: number;
  type: RunEventType;
  node: string | null;
  attempt: number | null;
  durationMs: number | null;
  engine: string | null;
  model: string | null;
  usage: { inputTokens: number; outputTokens: number } | null;
  error: string | null;
  at: string;
}

/** The run's events after `afterId`, oldest first. */
export async function listRunEvents(db: Kysely<DB>, workspaceId: string, runId: string, afterId = 0, limit = 500): Promise<RunEvent[]> {
  if (!isUuid(runId)) return [];
  const rows = await db.selectFrom('run_events')
    .select(['type', 'node', 'attempt', 'duration_ms', 'engine', 'model', 'input_tokens', 'output_tokens', 'error', 'occurred_at'])
    .select(sql<string>`id::text`.as('id'))
    .where('workspace_id', '=', workspaceId).where('run_id', '=', runId).where('id', '>', String(afterId))
    .orderBy('run_events.id').limit(limit).execute();
  return rows.map((r) => ({
    id: Number(r.id),
    type: r.type,
    node: r.node,
    attempt: r.attempt,
    durationMs: r.duration_ms,
    engine: r.engine,
    model: r.model,
    usage: r.input_tokens === null && r.output_tokens === null ? null : { inputTokens: r.input_tokens ?? 0, outputTokens: r.output_tokens ?? 0 },
    error: r.error,
    at: r.occurred_at.toISOString(),
  }));
}

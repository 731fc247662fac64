// The claim of a run (the run row is the job): the oldest claimable run, taken under a lease, read for its work and
// its first step to work started, in one statement.
import { sql, type Kysely } from 'kysely';
import type { EngineName } from '../../../agent/engine.ts';
import type { StepNode } from '../../../schemas/outputs.ts';
import { prepare } from '../../../db/database.ts';
import type { DB } from '../../../db/schema.ts';
import { RUN, RUN_EVENTS_CHANNEL, state, states, STEP } from '../../../domain/runs/lifecycle.ts';
import { readWork, loaded, type LoadedRun, type LoadRow, type RunKeys } from './loadRun.ts';
import { startedEvent, startsStep } from './startStep.ts';

export interface ClaimedRun extends RunKeys {
  /** The run's trace id: every span of the run carries it. */
  traceId: string;
  tokensUsed: number;
  /** A reviewer's feedback for the next WRITER attempt (a regeneration), if any. */
  feedback: string | null;
  /** What the claim read to work the run (loadRun's answer), in the claim's own statement: the steps as they were before it. */
  loaded: LoadedRun | null;
  /** The step the claim started, and its attempt (claimNextRun's `start`); null when it started none. */
  started: { node: StepNode; attempt: number } | null;
}

/** What a claim that starts the run's first step to work needs (claimNextRun). */
export interface ClaimStart {
  engine: EngineName;
  /** A step whose attempts are spent is not started: the worker fails the run instead. */
  maxAttempts: number;
}

/**
 * Takes the oldest run that is queued, due for a retry, or whose worker's lease ran out, and reads what working it
 * needs. With `start`, the same statement also starts the run's first step that is not COMPLETED, as startStep
 * would (its attempt counted, its event written, followers woken): one commit fewer a run. A worker that dies just
 * after the claim has then spent an attempt of that step, as one that died just after startStep had.
 */
export async function claimNextRun(db: Kysely<DB>, workerId: string, now: Date, leaseMs: number, start?: ClaimStart): Promise<ClaimedRun | null> {
  const { rows: [row] } = await sql<LoadRow & {
    trace_id: string; tokens_used: number; feedback: string | null; started_node?: StepNode | null; started_attempt?: number | null;
  }>`
    ${prepare}WITH r AS (
      UPDATE runs SET status = ${state(RUN.claim.to)}, lease_owner = ${workerId}, lease_expires_at = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}
      WHERE id = (
        SELECT id FROM runs
        WHERE status IN ${states(...RUN.claim.from)} AND available_at <= ${now}
          AND (lease_expires_at IS NULL OR lease_expires_at < ${now})
        ORDER BY available_at, started_at
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, workspace_id, lead_id, call_id, created_by_user_id, trace_id, tokens_used, feedback, followers)${start ? sql`,
    started AS (
      UPDATE run_steps SET ${startsStep(now)}
      WHERE run_id = (SELECT id FROM r) AND status IN ${states(...STEP.start.from)} AND attempts < ${start.maxAttempts}::int
        AND node = (SELECT s.node FROM run_steps s WHERE s.run_id = (SELECT id FROM r) AND s.status <> 'COMPLETED' ORDER BY s.position LIMIT 1)
      RETURNING node, attempts),
    events AS (${startedEvent(sql`r.id`, sql`r.workspace_id`, start.engine, now, sql`, r`)})` : sql``}
    ${readWork(start
      ? sql`(SELECT node FROM started) AS started_node, (SELECT attempts FROM started) AS started_attempt,
             CASE WHEN EXISTS (SELECT 1 FROM started) AND r.followers > 0 THEN pg_notify(${RUN_EVENTS_CHANNEL}, r.id::text) END AS notified`
      : undefined)}`.execute(db);
  if (!row) return null;
  const run = {
    id: row.id, workspaceId: row.workspace_id, leadId: row.lead_id, callId: row.call_id,
    createdByUserId: row.created_by_user_id, traceId: row.trace_id, tokensUsed: row.tokens_used, feedback: row.feedback,
  };
  const started = row.started_node && row.started_attempt ? { node: row.started_node, attempt: row.started_attempt } : null;
  return { ...run, loaded: loaded(run, row), started };
}

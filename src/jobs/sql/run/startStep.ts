import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { EngineName } from '../../../agent/engine.ts';
import type { StepNode } from '../../../schemas/outputs.ts';
import { prepare } from '../../../db/database.ts';
import type { DB } from '../../../db/schema.ts';
import { eventsInsert, RUN_EVENTS_CHANNEL, state, states, STEP } from '../../../domain/runs/lifecycle.ts';
import { LeaseLost } from '../../errors.ts';
import { anyFollower, heldLease, type RunLease, type StepWritten } from './lease.ts';

/** What starting a step writes on its row (the claim, startStep and completeStep's `next` start steps): one more attempt. */
export const startsStep = (now: Date) => sql`status = ${state(STEP.start.to)}, attempts = attempts + 1, started_at = coalesce(started_at, ${now}::timestamptz), error = NULL`;

/** The `step.started` event of the step that a `started` CTE started (the claim, startStep), for the run `runId` and `workspaceId` name (from `alsoFrom`). */
export const startedEvent = (runId: RawBuilder<unknown>, workspaceId: RawBuilder<unknown>, engine: EngineName, now: Date, alsoFrom = sql``) =>
  eventsInsert(runId, workspaceId, now, sql`(
    SELECT ${STEP.start.event}::text AS type, started.node, started.attempts AS attempt, NULL::int AS duration_ms, ${engine}::text AS engine,
           NULL::text AS model, NULL::int AS input_tokens, NULL::int AS output_tokens
    FROM started) e${alsoFrom}`);

/**
 * Marks a step RUNNING and counts the attempt; returns the attempt number: the start of a run's first step to work
 * (completeStep starts the others). A statement on its own, as completeStep's: a worker that dies while it waits for a
 * row lock has it committed when the wait ends, as if it had died just after, and the attempt counts as one that
 * ended with its worker.
 */
export async function startStep(db: Kysely<DB>, job: RunLease, node: StepNode, engine: EngineName, now: Date): Promise<number> {
  const { rows: [row] } = await sql<StepWritten>`
    ${prepare}WITH ${heldLease(job)},
    started AS (
      UPDATE run_steps SET ${startsStep(now)}
      WHERE run_id = ${job.runId} AND node = ${node} AND status IN ${states(...STEP.start.from)} AND EXISTS (SELECT 1 FROM lease)
      RETURNING node, attempts),
    events AS (${startedEvent(sql`${job.runId}`, sql`${job.workspaceId}`, engine, now)})
    SELECT (SELECT count(*) FROM lease)::int AS held, 0 AS completed, (SELECT attempts FROM started) AS attempt,
           CASE WHEN EXISTS (SELECT 1 FROM started) AND ${anyFollower} THEN pg_notify(${RUN_EVENTS_CHANNEL}, ${job.runId}) END AS notified`.execute(db);
  if (!row?.held) throw new LeaseLost(`run ${job.runId}`);
  if (row.attempt === null) throw new Error(`step ${node} of run ${job.runId} cannot be started`);
  return row.attempt;
}

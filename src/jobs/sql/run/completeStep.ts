import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { EngineName } from '../../../agent/engine.ts';
import type { StepNode } from '../../../schemas/outputs.ts';
import { prepare } from '../../../db/database.ts';
import type { DB } from '../../../db/schema.ts';
import { emitTransitionWebhook, eventsInsert, RUN, RUN_EVENTS_CHANNEL, state, states, STEP } from '../../../domain/runs/lifecycle.ts';
import { LeaseLost } from '../../errors.ts';
import type { AttemptCost } from './cost.ts';
import { anyFollower, heldLease, type RunLease, type StepWritten } from './lease.ts';
import { startsStep } from './startStep.ts';

/** What a step's completion writes besides the step itself. */
export interface Completion {
  /** WRITER's draft: the run moves to AWAITING_APPROVAL with it. */
  draft?: { subject: string; body: string; to: string | null; grounding?: object | null };
  /** The step the worker goes on to, started in the same commit. */
  next?: { node: StepNode; engine: EngineName };
  /**
   * Whether the workspace had webhook endpoints when last seen (the run's previous completion, or its load): then the
   * completion is written in a transaction with its webhook events from the start.
   */
  hasWebhooks?: boolean;
}

export interface Completed {
  /** The attempt of `next` that was started, or null without one. */
  nextAttempt: number | null;
  /** Whether the workspace has webhook endpoints now: the hint for the run's next completion. */
  hasWebhooks: boolean;
}

/**
 * Stores a completed step's output and what it took, and starts the next step: one statement, one commit. WRITER's
 * completion also writes the draft and moves the run to AWAITING_APPROVAL, in the same statement: a run has its
 * draft exactly when its WRITER step is COMPLETED.
 *
 * The statement stands alone (one round trip, one commit). A worker that dies while it waits for a row lock has it
 * committed when the wait ends, as if it had died just after: its step's work is kept, and the next step's attempt
 * counts as one that ended with its worker.
 *
 * Webhook endpoints are looked up in the statement. Without any, it writes without its webhook events; when the
 * look-up finds one (an endpoint added since the last look), the statement writes nothing and is made again in a
 * transaction with its events. So every endpoint that exists when a completion commits hears of it.
 */
export async function completeStep(
  db: Kysely<DB>,
  job: RunLease,
  node: StepNode,
  result: { output: object; promptVersion: string } & AttemptCost,
  attempt: number,
  now: Date,
  { draft, next, hasWebhooks = false }: Completion = {},
): Promise<Completed> {
  const tokens = result.usage && result.usage.totalTokens > 0 ? result.usage.totalTokens : 0;
  const durationMs = Math.round(result.durationMs);
  const inputTokens = result.usage?.inputTokens ?? null;
  const outputTokens = result.usage?.outputTokens ?? null;
  const statement = (withHooks: boolean) => {
    const ctes = [heldLease(job, { hooks: true }), sql`done AS (
      UPDATE run_steps SET status = ${state(STEP.complete.to)}, output = ${JSON.stringify(result.output)}::jsonb, completed_at = ${now}::timestamptz,
        error = NULL, put_off_since = NULL, engine = ${result.engine}, model = ${result.model}, prompt_version = ${result.promptVersion},
        input_tokens = ${inputTokens}::int, output_tokens = ${outputTokens}::int, duration_ms = ${durationMs}::int
      WHERE run_id = ${job.runId} AND node = ${node} AND status IN ${states(...STEP.complete.from)}
        AND EXISTS (SELECT 1 FROM lease ${withHooks ? sql`` : sql`WHERE NOT has_webhooks`})
      RETURNING node)`];
    // One UPDATE of the run row at most: PostgreSQL applies only one change to a row per statement.
    if (draft) {
      ctes.push(sql`finished AS (
        UPDATE runs SET tokens_used = tokens_used + ${tokens}::int, status = ${state(RUN.awaitApproval.to)}, completed_at = ${now}::timestamptz,
          updated_at = ${now}::timestamptz, error = NULL, lease_owner = NULL, lease_expires_at = NULL, feedback = NULL
        WHERE id = ${job.runId} AND EXISTS (SELECT 1 FROM done)
        RETURNING id)`);
      // The first version is `generated`; a later WRITER result (after a rejection with feedback) `regenerated`.
      ctes.push(sql`draft AS (
        INSERT INTO email_drafts (id, workspace_id, run_id, version, origin, status, to_address, subject, body, created_at, grounding)
        SELECT ${randomUUID()}, ${job.workspaceId}, ${job.runId}, v.version, CASE WHEN v.version > 1 THEN 'regenerated' ELSE 'generated' END,
               'DRAFT', ${draft.to}, ${draft.subject}, ${draft.body}, ${now}::timestamptz, ${draft.grounding ? JSON.stringify(draft.grounding) : null}::jsonb
        FROM (SELECT coalesce(max(version), 0) + 1 AS version FROM email_drafts WHERE run_id = ${job.runId} AND touch = 1) v
        WHERE EXISTS (SELECT 1 FROM done))`);
    } else if (tokens > 0) {
      ctes.push(sql`spent AS (
        UPDATE runs SET tokens_used = tokens_used + ${tokens}::int WHERE id = ${job.runId} AND EXISTS (SELECT 1 FROM done))`);
    }
    if (next) {
      ctes.push(sql`started AS (
        UPDATE run_steps SET ${startsStep(now)}
        WHERE run_id = ${job.runId} AND node = ${next.node} AND status IN ${states(...STEP.start.from)} AND EXISTS (SELECT 1 FROM done)
        RETURNING node, attempts)`);
    }
    const event = (order: number, type: string | null, from: string, columns: ReturnType<typeof sql>) =>
      sql`SELECT ${order}::int AS ord, ${type}::text AS type, ${columns} FROM ${sql.raw(from)}`;
    const events = [event(1, STEP.complete.event, 'done', sql`node, ${attempt}::int AS attempt, ${durationMs}::int AS duration_ms,
      ${result.engine}::text AS engine, ${result.model}::text AS model, ${inputTokens}::int AS input_tokens, ${outputTokens}::int AS output_tokens`)];
    // The columns of step.completed's row, in order: node, attempt, duration_ms, engine, model, input_tokens, output_tokens.
    const noModel = sql`NULL::text, NULL::int, NULL::int`;
    if (draft) events.push(event(2, RUN.awaitApproval.event, 'finished', sql`NULL::text, NULL::int, NULL::int, NULL::text, ${noModel}`));
    if (next) events.push(event(3, STEP.start.event, 'started', sql`node, attempts, NULL::int, ${next.engine}::text, ${noModel}`));
    ctes.push(sql`events AS (${eventsInsert(sql`${job.runId}`, sql`${job.workspaceId}`, now, sql`(${sql.join(events, sql` UNION ALL `)}) e ORDER BY e.ord`)})`);
    return sql<StepWritten & { has_webhooks: boolean | null }>`
      ${prepare}WITH ${sql.join(ctes, sql`,
`)}
      SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM done)::int AS completed,
             ${next ? sql`(SELECT attempts FROM started)` : sql`NULL::int`} AS attempt, (SELECT has_webhooks FROM lease) AS has_webhooks,
             CASE WHEN EXISTS (SELECT 1 FROM done) AND ${anyFollower} THEN pg_notify(${RUN_EVENTS_CHANNEL}, ${job.runId}) END AS notified`;
  };
  const write = async (conn: Kysely<DB>, withHooks: boolean): Promise<Completed | 'webhooks found'> => {
    const { rows: [row] } = await statement(withHooks).execute(conn);
    if (!row?.held) throw new LeaseLost(`run ${job.runId}`);
    if (!withHooks && row.has_webhooks) return 'webhooks found';
    if (!row.completed) throw new Error(`step ${node} of run ${job.runId} was not running`);
    if (next && row.attempt === null) throw new Error(`step ${next.node} of run ${job.runId} cannot be started`);
    if (withHooks) {
      const target = { workspaceId: job.workspaceId, runId: job.runId, at: now };
      await emitTransitionWebhook(conn, STEP.complete, target);
      if (draft) await emitTransitionWebhook(conn, RUN.awaitApproval, target);
    }
    return { nextAttempt: row.attempt, hasWebhooks: row.has_webhooks === true };
  };
  const withHooks = () => db.transaction().execute(async (trx) => write(trx, true) as Promise<Completed>);
  if (hasWebhooks) return withHooks();
  const written = await write(db, false);
  return written === 'webhooks found' ? withHooks() : written;
}

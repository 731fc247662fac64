// Starting runs: a run is created QUEUED with its four PENDING steps and counted against the workspace's month;
// workers (src/jobs/) take it from there. Batches (batches.ts) start many at once the same way.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { STEP_NODES } from '../../schemas/outputs.ts';
import type { Clock } from '../../clock.ts';
import { prepare } from '../../db/database.ts';
import type { DB, Plan } from '../../db/schema.ts';
import { auditInsert, writeAudit, type AuditEntryInput } from '../audit/audit.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../validation.ts';
import { bareEvent, emitTransitionWebhook, eventsInsert, RUN, RUNS_CHANNEL } from './lifecycle.ts';
import type { Run } from './runs.ts';

/** The first instant of the next calendar month in UTC. */
export function monthStart(at: Date, monthsAhead = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + monthsAhead, 1));
}

function monthKey(at: Date): string {
  return monthStart(at).toISOString().slice(0, 10);
}

export interface StartRunInput {
  leadId: string;
  callId: string;
}

export interface StartRunContext {
  workspaceId: string;
  /** The user the run is attributed to: for API keys, the workspace's admin. */
  userId: string | null;
  keyId: string | null;
  freePlanMonthlyRuns: number;
  clock: Clock;
}

/**
 * Starts a run: the run, its steps, its first event, the month's count, its webhook event and the workers' wake-up
 * notice commit together. Checks, in order: the lead and call exist in the workspace (404), the plan's limit (402).
 *
 * In a transaction (`db` is one), it writes there, and the caller writes the request's audit entry beside it. Given
 * `audit` outside a transaction, it first tries the whole change as one statement with that entry, which is enough on
 * a plan without a limit in a workspace without webhook endpoints; otherwise that statement writes nothing and the
 * run is started in a transaction of its own, with the entry.
 */
export async function startRun(db: Kysely<DB>, ctx: StartRunContext, input: StartRunInput, audit?: (runId: string) => AuditEntryInput): Promise<Run> {
  const queued = queuedRun(input, ctx.clock.now(), null);
  if (db.isTransaction || !audit) return startInTransaction(db, ctx, input, queued);
  const written = await writeRun(db, ctx, input, queued, { counted: false, audit: audit(queued.id) });
  if (written.written) return { ...queued, leadId: written.lead_id, callId: written.call_id };
  return db.transaction().execute(async (trx) => {
    const run = await startInTransaction(trx, ctx, input, queued);
    await writeAudit(trx, audit(run.id));
    return run;
  });
}

/** A Free workspace's run is counted against its month first (countRunsAgainstPlan), then written by the same statement made again. */
async function startInTransaction(trx: Kysely<DB>, ctx: StartRunContext, input: StartRunInput, queued: Run): Promise<Run> {
  let written = await writeRun(trx, ctx, input, queued, { counted: false });
  if (!written.written) {
    await countRunsAgainstPlan(trx, ctx.workspaceId, written.plan, ctx.clock.now(), ctx.freePlanMonthlyRuns, 1);
    written = await writeRun(trx, ctx, input, queued, { counted: true });
  }
  const run: Run = { ...queued, leadId: written.lead_id, callId: written.call_id };
  if (written.has_webhooks) await emitTransitionWebhook(trx, RUN.queue, { workspaceId: ctx.workspaceId, runId: run.id, at: new Date(run.startedAt) }, run);
  return run;
}

/**
 * The look-up of the lead, the call and the plan, and the writes of `queued` when the look-up found both, the plan's
 * month has room (`counted`: a Free run already counted) and, when the statement stands alone with its `audit`
 * entry, no webhook endpoint would need an event written beside it. Throws the look-up's 404s.
 */
async function writeRun(
  db: Kysely<DB>, ctx: StartRunContext, input: StartRunInput, queued: Run, { counted, audit }: { counted: boolean; audit?: AuditEntryInput },
): Promise<{ plan: Plan; lead_id: string; call_id: string; written: boolean; has_webhooks: boolean }> {
  const { workspaceId } = ctx;
  const now = new Date(queued.startedAt);
  const hasWebhooks = sql`EXISTS (SELECT 1 FROM webhook_endpoints h WHERE h.workspace_id = ${workspaceId} AND h.enabled)`;
  // The lead, the call and the plan in one look-up (ids that are not UUIDs match nothing). The lead and the call are
  // locked as the run's foreign keys will lock them (FOR KEY SHARE): while one of them is being erased, the look-up
  // waits for the erasure and then finds it gone (404), rather than the insert failing on a vanished key.
  // The run, its four PENDING steps, its first event and the workers' wake-up notice (delivered at commit) follow.
  // No notice on the run's events channel: nobody can follow a run before it exists.
  const { rows: [found] } = await sql<{
    plan: Plan; lead_id: string | null; call_id: string | null; call_lead_id: string | null; written: boolean; has_webhooks: boolean;
  }>`
    ${prepare}WITH found AS (
      SELECT w.plan, l.id AS lead_id, c.id AS call_id, c.lead_id AS call_lead_id
      FROM workspaces w
      LEFT JOIN LATERAL (SELECT id FROM leads WHERE workspace_id = w.id AND id = ${isUuid(input.leadId) ? input.leadId : null}::uuid FOR KEY SHARE) l ON true
      LEFT JOIN LATERAL (SELECT id, lead_id FROM calls WHERE workspace_id = w.id AND id = ${isUuid(input.callId) ? input.callId : null}::uuid FOR KEY SHARE) c ON true
      WHERE w.id = ${workspaceId}),
    run AS (
      INSERT INTO runs (id, workspace_id, lead_id, call_id, status, created_by_user_id, key_id, trace_id, lease_owner, lease_expires_at,
                        available_at, error, started_at, completed_at, updated_at)
      SELECT ${queued.id}, ${workspaceId}, found.lead_id, found.call_id, ${RUN.queue.to}, ${ctx.userId}::uuid, ${ctx.keyId}::uuid, ${queued.traceId},
             NULL, NULL, ${now}::timestamptz, NULL, ${now}::timestamptz, NULL, ${now}::timestamptz
      FROM found
      WHERE found.call_lead_id = found.lead_id AND (found.plan <> 'FREE' OR ${counted}::boolean)${audit ? sql` AND NOT ${hasWebhooks}` : sql``}
      RETURNING id),
    steps AS (${insertSteps}),
    queued AS (${eventsInsert(sql`run.id`, sql`${workspaceId}::uuid`, now, sql`run, ${bareEvent(RUN.queue.event)}`)})${audit ? sql`,
    audited AS (${auditInsert(audit, sql`EXISTS (SELECT 1 FROM run)`)})` : sql``}
    SELECT found.*, EXISTS (SELECT 1 FROM run) AS written, ${hasWebhooks} AS has_webhooks,
           (SELECT pg_notify(${RUNS_CHANNEL}, run.id::text) FROM run) AS notified
    FROM found`.execute(db);
  if (!found) throw new Error(`workspace ${workspaceId} was not found`);
  if (!found.lead_id) throw notFound('Lead', 'leadId');
  if (!found.call_id) throw notFound('Call', 'callId');
  if (found.call_lead_id !== found.lead_id) {
    throw new AppError('not_found', 'The call is not a call of that lead.', { errors: [{ field: 'callId', message: 'is not a call of this lead' }] });
  }
  return { ...found, lead_id: found.lead_id, call_id: found.call_id };
}

/** The four PENDING steps of every run the CTE `run` inserted (a start, a batch). */
export const insertSteps = sql`
      INSERT INTO run_steps (run_id, position, node, status, output, attempts)
      SELECT run.id, s.position - 1, s.node, 'PENDING', NULL, 0
      FROM run CROSS JOIN unnest(${sql.raw(`ARRAY[${STEP_NODES.map((n) => `'${n}'`).join(', ')}]`)}::text[]) WITH ORDINALITY AS s(node, position)`;

/** A run as it is accepted: QUEUED, its four steps PENDING, no draft. */
export function queuedRun(input: StartRunInput, now: Date, batchId: string | null): Run {
  return {
    id: randomUUID(),
    status: 'QUEUED',
    leadId: input.leadId,
    callId: input.callId,
    traceId: randomBytes(16).toString('hex'),
    startedAt: now.toISOString(),
    completedAt: null,
    error: null,
    tokensUsed: 0,
    batchId,
    steps: STEP_NODES.map((node) => ({
      node, status: 'PENDING', output: null, attempts: 0, startedAt: null, completedAt: null, error: null,
      engine: null, model: null, promptVersion: null, durationMs: null, usage: null,
    })),
    emailDraft: null,
    reply: null,
    sequence: null,
    replies: [],
  };
}

/**
 * Adds `count` runs to a Free workspace's month, all or none: the increment only happens while the month can hold
 * all of them; concurrent starts queue on the usage row (the upsert locks it and re-reads the count it waited for),
 * so together they never pass the limit. The month's first start counts the runs already in the runs table (a
 * workspace moved to the Free plan in mid-month). A plan without a limit counts nothing here: its starts would only
 * queue behind each other on that row (docs/PERFORMANCE.md); its month is counted from the runs (monthUsage).
 */
export async function countRunsAgainstPlan(trx: Kysely<DB>, workspaceId: string, plan: Plan, now: Date, freeLimit: number, count: number): Promise<void> {
  if (plan !== 'FREE') return;
  const month = monthKey(now);
  const refuse = async (): Promise<never> => {
    const usage = await trx.selectFrom('run_usage').select('runs').where('workspace_id', '=', workspaceId).where('month', '=', month).executeTakeFirst();
    const used = usage?.runs ?? 0;
    const detail = count === 1 || used >= freeLimit
      ? `The Free plan allows ${freeLimit} runs a month; this workspace has used them.`
      : `The Free plan allows ${freeLimit} runs a month; this workspace has used ${used}, and ${count} more would pass the limit. Nothing was started.`;
    throw new AppError('run_limit_reached', `${detail} The limit resets at the start of next month (UTC).`, {
      extra: { limit: freeLimit, used, resetsAt: monthStart(now, 1).toISOString() },
    });
  };
  if (count > freeLimit) return refuse();
  const counted = await sql<{ runs: number }>`
    ${prepare}INSERT INTO run_usage (workspace_id, month, runs)
    SELECT ${workspaceId}, ${month}::date, n.runs FROM (
      SELECT count(*)::int + ${count}::int AS runs FROM runs
      WHERE workspace_id = ${workspaceId} AND started_at >= ${monthStart(now)}::timestamptz AND started_at < ${monthStart(now, 1)}::timestamptz) n
    WHERE n.runs <= ${freeLimit}
    ON CONFLICT (workspace_id, month) DO UPDATE SET runs = run_usage.runs + ${count}::int
    WHERE run_usage.runs + ${count}::int <= ${freeLimit}
    RETURNING runs`.execute(trx);
  if (counted.rows.length === 0) return refuse();
}

/**
 * Runs the workspace started in the month of `at`: a Free workspace's count of its limit, or for other plans the
 * runs of that month in the runs table (read from the index on workspace and start time).
 */
export async function monthUsage(db: Kysely<DB>, workspaceId: string, at: Date, plan: Plan = 'FREE'): Promise<number> {
  if (plan !== 'FREE') {
    const { rows: [row] } = await sql<{ runs: number }>`
      SELECT count(*)::int AS runs FROM runs
      WHERE workspace_id = ${workspaceId} AND started_at >= ${monthStart(at)}::timestamptz AND started_at < ${monthStart(at, 1)}::timestamptz`.execute(db);
    return row?.runs ?? 0;
  }
  const row = await db.selectFrom('run_usage').select('runs').where('workspace_id', '=', workspaceId).where('month', '=', monthKey(at)).executeTakeFirst();
  return row?.runs ?? 0;
}

// Batches: up to 100 runs started by one request, all or none. The leads and calls are resolved in one look-up, the
// month's count moves once, and the runs, their steps and first events are written by one statement with one
// wake-up notice for the workers. Each run carries the batch's id, by which the batch is read back.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB, Plan, RunStatus } from '../../db/schema.ts';
import { AppError, type FieldError } from '../errors.ts';
import { bareEvent, emitTransitionWebhook, eventsInsert, RUN, RUNS_CHANNEL } from './lifecycle.ts';
import type { Run } from './runs.ts';
import { countRunsAgainstPlan, insertSteps, queuedRun, type StartRunContext, type StartRunInput } from './start.ts';
import { isUuid } from '../validation.ts';
import { hasWebhookEndpoints } from '../webhooks/events.ts';

export const MAX_BATCH_RUNS = 100;

/**
 * Starts one run for each item, in the items' order, as one batch. Call it inside a transaction. Checks, in order:
 * every lead and call exists in the workspace and each call is of its lead (404 naming each item that is not,
 * `runs[i].leadId` or `runs[i].callId`), then the Free plan's month can hold every run (402). Nothing is written
 * unless every check passes.
 */
export async function startRunBatch(trx: Kysely<DB>, ctx: StartRunContext, items: readonly StartRunInput[]): Promise<{ batchId: string; runs: Run[] }> {
  const { workspaceId, clock } = ctx;
  if (items.length < 1 || items.length > MAX_BATCH_RUNS) throw new Error(`a batch holds 1 to ${MAX_BATCH_RUNS} runs, not ${items.length}`);
  const uuidOrNull = (id: string) => (isUuid(id) ? id : null);

  // Every item's lead and call, and the plan, in one look-up; the answer keeps the items' order.
  const { rows } = await sql<{ plan: Plan; ord: string; lead_id: string | null; call_id: string | null; call_lead_id: string | null }>`
    SELECT w.plan, i.ord, l.id AS lead_id, c.id AS call_id, c.lead_id AS call_lead_id
    FROM workspaces w
    CROSS JOIN unnest(${items.map((i) => uuidOrNull(i.leadId))}::uuid[], ${items.map((i) => uuidOrNull(i.callId))}::uuid[])
      WITH ORDINALITY AS i(lead_id, call_id, ord)
    LEFT JOIN leads l ON l.workspace_id = w.id AND l.id = i.lead_id
    LEFT JOIN calls c ON c.workspace_id = w.id AND c.id = i.call_id
    WHERE w.id = ${workspaceId}
    ORDER BY i.ord`.execute(trx);
  if (rows.length === 0) throw new Error(`workspace ${workspaceId} was not found`);

  const errors: FieldError[] = [];
  rows.forEach((row, i) => {
    if (!row.lead_id) errors.push({ field: `runs[${i}].leadId`, message: 'no such lead' });
    if (!row.call_id) errors.push({ field: `runs[${i}].callId`, message: 'no such call' });
    else if (row.lead_id && row.call_lead_id !== row.lead_id) errors.push({ field: `runs[${i}].callId`, message: 'is not a call of this lead' });
  });
  if (errors.length > 0) {
    const items = new Set(errors.map((e) => e.field.slice(0, e.field.indexOf(']') + 1)));
    throw new AppError('not_found', `${items.size === 1 ? 'One item' : `${items.size} items`} of the batch name a lead or call that was not found, `
      + `or a call that is not of its lead: ${[...items].slice(0, 5).join(', ')}${items.size > 5 ? ', …' : ''}. Nothing was started.`, { errors });
  }

  const now = clock.now();
  await countRunsAgainstPlan(trx, workspaceId, rows[0]!.plan, now, ctx.freePlanMonthlyRuns, items.length);

  const batchId = randomUUID();
  const runs = items.map((item) => queuedRun(item, now, batchId));
  // The runs, their four PENDING steps and first events, and one notice that wakes as many idle workers as there
  // are runs (delivered at commit), in one statement. No run-event notice: nobody can be following a run yet.
  await sql`
    WITH run AS (
      INSERT INTO runs (id, workspace_id, lead_id, call_id, status, created_by_user_id, key_id, trace_id, lease_owner, lease_expires_at,
                        available_at, error, started_at, completed_at, updated_at, batch_id)
      SELECT b.id, ${workspaceId}, b.lead_id, b.call_id, ${RUN.queue.to}, ${ctx.userId}::uuid, ${ctx.keyId}::uuid, b.trace_id, NULL, NULL,
             ${now}::timestamptz, NULL, ${now}::timestamptz, NULL, ${now}::timestamptz, ${batchId}::uuid
      FROM unnest(${runs.map((r) => r.id)}::uuid[], ${runs.map((r) => r.leadId)}::uuid[], ${runs.map((r) => r.callId)}::uuid[],
                  ${runs.map((r) => r.traceId)}::text[]) AS b(id, lead_id, call_id, trace_id)
      RETURNING id),
    steps AS (${insertSteps}),
    queued AS (${eventsInsert(sql`run.id`, sql`${workspaceId}::uuid`, now, sql`run, ${bareEvent(RUN.queue.event)}`)})
    SELECT pg_notify(${RUNS_CHANNEL}, ${String(runs.length)})`.execute(trx);
  if (await hasWebhookEndpoints(trx, workspaceId)) {
    for (const run of runs) await emitTransitionWebhook(trx, RUN.queue, { workspaceId, runId: run.id, at: now }, run);
  }
  return { batchId, runs };
}

/** One run of a batch as the web UI's batch view shows it: its state, its lead's name, its draft's subject. */
export interface BatchRun {
  id: string;
  status: RunStatus;
  leadId: string;
  leadName: string;
  companyName: string | null;
  subject: string | null;
  error: string | null;
  startedAt: string;
  completedAt: string | null;
}

/** The runs of a batch, by lead name, with what the batch view needs and nothing more (it is read every 2 s); null when the workspace has no such batch. */
export async function batchProgress(db: Kysely<DB>, workspaceId: string, batchId: string): Promise<BatchRun[] | null> {
  if (!isUuid(batchId)) return null;
  const { rows } = await sql<BatchRun>`
    SELECT r.id, r.status, r.lead_id AS "leadId", l.name AS "leadName", l.company_name AS "companyName", r.error,
           (SELECT d.subject FROM email_drafts d WHERE d.run_id = r.id AND d.touch = 1 ORDER BY d.version DESC LIMIT 1) AS subject,
           leadrun_iso(r.started_at) AS "startedAt", leadrun_iso(r.completed_at) AS "completedAt"
    FROM runs r JOIN leads l ON l.id = r.lead_id AND l.workspace_id = r.workspace_id
    WHERE r.workspace_id = ${workspaceId} AND r.batch_id = ${batchId}
    ORDER BY l.name, r.id`.execute(db);
  return rows.length > 0 ? rows : null;
}

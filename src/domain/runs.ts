// Runs: one agent run for a lead and a call. Starting a run creates it with its four PENDING steps and counts it
// against the workspace's month in one transaction; workers (src/worker/) take it from there.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { STEP_NODES, type StepNode } from '../agent/outputs.ts';
import type { Clock } from '../clock.ts';
import type { DB, DraftStatus, RunStatus, StepStatus } from '../db/schema.ts';
import { AppError, notFound } from './errors.ts';
import { pageOf, type Cursor } from './pagination.ts';
import { recordEvent } from './run-events.ts';
import { isUuid } from './validation.ts';

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED'] as const;
/** Wakes idle workers when a run becomes claimable. */
export const RUNS_CHANNEL = 'leadrun_runs';

export interface Step {
  node: StepNode;
  status: StepStatus;
  output: Record<string, unknown> | null;
  attempts: number;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
  engine: string | null;
  model: string | null;
  promptVersion: string | null;
  durationMs: number | null;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number } | null;
}

export interface EmailDraft {
  id: string;
  status: DraftStatus;
  subject: string;
  body: string;
  to: string | null;
  version: number;
}

export interface Run {
  id: string;
  status: RunStatus;
  leadId: string;
  callId: string;
  traceId: string;
  startedAt: string;
  completedAt: string | null;
  error: string | null;
  tokensUsed: number;
  steps: Step[];
  emailDraft: EmailDraft | null;
}

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
 * Starts a run. Call it inside a transaction: the run, its steps, the month's count and the wake-up notice
 * commit together. Checks, in order: the lead and call exist in the workspace (404), the plan's limit (402).
 */
export async function startRun(trx: Kysely<DB>, ctx: StartRunContext, input: StartRunInput): Promise<Run> {
  const { workspaceId, clock } = ctx;
  const lead = isUuid(input.leadId)
    ? await trx.selectFrom('leads').select('id').where('workspace_id', '=', workspaceId).where('id', '=', input.leadId).executeTakeFirst()
    : undefined;
  if (!lead) throw notFound('Lead', 'leadId');
  const call = isUuid(input.callId)
    ? await trx.selectFrom('calls').select(['id', 'lead_id']).where('workspace_id', '=', workspaceId).where('id', '=', input.callId).executeTakeFirst()
    : undefined;
  if (!call) throw notFound('Call', 'callId');
  if (call.lead_id !== lead.id) {
    throw new AppError('not_found', 'The call is not a call of that lead.', { errors: [{ field: 'callId', message: 'is not a call of this lead' }] });
  }

  const now = clock.now();
  await countRunAgainstPlan(trx, workspaceId, now, ctx.freePlanMonthlyRuns);

  const runId = randomUUID();
  await trx.insertInto('runs').values({
    id: runId,
    workspace_id: workspaceId,
    lead_id: lead.id,
    call_id: call.id,
    status: 'QUEUED',
    created_by_user_id: ctx.userId,
    key_id: ctx.keyId,
    trace_id: randomBytes(16).toString('hex'),
    lease_owner: null,
    lease_expires_at: null,
    available_at: now,
    error: null,
    started_at: now,
    completed_at: null,
    updated_at: now,
  }).execute();
  await trx.insertInto('run_steps')
    .values(STEP_NODES.map((node, position) => ({ run_id: runId, position, node, status: 'PENDING' as const, output: null, attempts: 0 })))
    .execute();
  await recordEvent(trx, { runId, workspaceId, type: 'run.queued', at: now });
  await sql`SELECT pg_notify(${RUNS_CHANNEL}, ${runId})`.execute(trx);
  const run = await getRun(trx, workspaceId, runId);
  if (!run) throw new Error('a run just created could not be read back');
  return run;
}

/**
 * Adds one run to the workspace's month. On the Free plan the increment only happens while the count is below
 * the limit; concurrent starts queue on the usage row, so exactly `limit` of them succeed.
 */
async function countRunAgainstPlan(trx: Kysely<DB>, workspaceId: string, now: Date, freeLimit: number): Promise<void> {
  const workspace = await trx.selectFrom('workspaces').select('plan').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  const limited = workspace.plan === 'FREE';
  const month = monthKey(now);
  const refuse = async (): Promise<never> => {
    const usage = await trx.selectFrom('run_usage').select('runs').where('workspace_id', '=', workspaceId).where('month', '=', month).executeTakeFirst();
    throw new AppError('run_limit_reached', `The Free plan allows ${freeLimit} runs a month; this workspace has used them. The limit resets at the start of next month (UTC).`, {
      extra: { limit: freeLimit, used: usage?.runs ?? 0, resetsAt: monthStart(now, 1).toISOString() },
    });
  };
  if (limited && freeLimit <= 0) return refuse();
  const counted = await sql<{ runs: number }>`
    INSERT INTO run_usage (workspace_id, month, runs) VALUES (${workspaceId}, ${month}, 1)
    ON CONFLICT (workspace_id, month) DO UPDATE SET runs = run_usage.runs + 1
    WHERE ${!limited}::boolean OR run_usage.runs < ${freeLimit}
    RETURNING runs`.execute(trx);
  if (counted.rows.length === 0) return refuse();
}

export async function monthUsage(db: Kysely<DB>, workspaceId: string, at: Date): Promise<number> {
  const row = await db.selectFrom('run_usage').select('runs').where('workspace_id', '=', workspaceId).where('month', '=', monthKey(at)).executeTakeFirst();
  return row?.runs ?? 0;
}

interface RunRow {
  id: string;
  status: RunStatus;
  lead_id: string;
  call_id: string;
  trace_id: string;
  started_at: string;
  completed_at: string | null;
  error: string | null;
  tokens_used: number;
  steps: Step[];
  email_draft: EmailDraft | null;
}

// One query per run: PostgreSQL assembles the steps and the current draft as JSON.
const RUN_COLUMNS = sql`
  r.id, r.status, r.lead_id, r.call_id, r.trace_id, r.error, r.tokens_used,
  leadrun_iso(r.started_at) AS started_at,
  leadrun_iso(r.completed_at) AS completed_at,
  (SELECT json_agg(json_build_object(
      'node', s.node, 'status', s.status, 'output', s.output, 'attempts', s.attempts,
      'startedAt', leadrun_iso(s.started_at), 'completedAt', leadrun_iso(s.completed_at), 'error', s.error,
      'engine', s.engine, 'model', s.model, 'promptVersion', s.prompt_version, 'durationMs', s.duration_ms,
      'usage', CASE WHEN s.input_tokens IS NULL AND s.output_tokens IS NULL THEN NULL ELSE json_build_object(
        'inputTokens', coalesce(s.input_tokens, 0), 'outputTokens', coalesce(s.output_tokens, 0),
        'totalTokens', coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0)) END)
    ORDER BY s.position)
   FROM run_steps s WHERE s.run_id = r.id) AS steps,
  (SELECT json_build_object('id', d.id, 'status', d.status, 'subject', d.subject, 'body', d.body, 'to', d.to_address, 'version', d.version)
   FROM email_drafts d WHERE d.run_id = r.id ORDER BY d.version DESC LIMIT 1) AS email_draft`;

function toRun(row: RunRow): Run {
  return {
    id: row.id,
    status: row.status,
    leadId: row.lead_id,
    callId: row.call_id,
    traceId: row.trace_id,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    error: row.error,
    tokensUsed: row.tokens_used,
    steps: row.steps,
    emailDraft: row.email_draft,
  };
}

export async function getRun(db: Kysely<DB>, workspaceId: string, runId: string): Promise<Run | null> {
  if (!isUuid(runId)) return null;
  const result = await sql<RunRow>`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}`.execute(db);
  const row = result.rows[0];
  return row ? toRun(row) : null;
}

/** The workspace's runs, newest first. */
export async function listRuns(
  db: Kysely<DB>,
  workspaceId: string,
  options: { limit: number; cursor?: Cursor | null; leadId?: string | null; status?: RunStatus | null },
): Promise<{ items: Run[]; next: Cursor | null }> {
  if (options.leadId && !isUuid(options.leadId)) return { items: [], next: null };
  const filters = [sql`r.workspace_id = ${workspaceId}`];
  if (options.leadId) filters.push(sql`r.lead_id = ${options.leadId}`);
  if (options.status) filters.push(sql`r.status = ${options.status}`);
  if (options.cursor) filters.push(sql`(r.started_at, r.id) < (${options.cursor.at}, ${options.cursor.id})`);
  const result = await sql<RunRow>`
    SELECT ${RUN_COLUMNS} FROM runs r WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY r.started_at DESC, r.id DESC LIMIT ${options.limit + 1}`.execute(db);
  return pageOf(result.rows.map(toRun), options.limit, (run) => ({ at: new Date(run.startedAt), id: run.id }));
}

// Runs: one agent run for a lead and a call. Starting a run creates it with its four PENDING steps and counts it
// against the workspace's month in one transaction; workers (src/jobs/) take it from there.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { STEP_NODES, type StepNode } from '../../agent/outputs.ts';
import type { Clock } from '../../clock.ts';
import { prepare } from '../../db/database.ts';
import type { DB, DeliveryMethod, DeliveryStatus, DraftOrigin, DraftStatus, Plan, RunStatus, StepStatus } from '../../db/schema.ts';
import type { DraftGrounding } from './drafts.ts';
import { AppError, notFound } from '../errors.ts';
import { pageOf, type Cursor } from '../pagination.ts';
import { isUuid } from '../validation.ts';
import { emitWebhookEvent } from '../webhooks/events.ts';

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED'] as const;
/** Wakes idle workers when runs become claimable: the notice holds a run's id, or how many runs a batch queued. */
export const RUNS_CHANNEL = 'leadrun_runs';

/** How many runs a RUNS_CHANNEL notice says became claimable. */
export function claimableRuns(payload: string): number {
  return /^\d{1,3}$/.test(payload) ? Math.max(1, Number(payload)) : 1;
}

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
  // Versions and editing (src/domain/runs/drafts.ts).
  origin: DraftOrigin;
  editedAt: string | null;
  grounding: DraftGrounding | null;
  // Delivery (DESIGN §7).
  delivery: Delivery | null;
}

export interface Delivery {
  method: DeliveryMethod;
  status: DeliveryStatus;
  messageId: string;
  attempts: number;
  queuedAt: string;
  deliveredAt: string | null;
  error: string | null;
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
  /** The batch (POST /api/v1/runs/batch) the run was started in, or null. */
  batchId: string | null;
  steps: Step[];
  emailDraft: EmailDraft | null;
  /** The newest reply found to the run's delivered e-mail (DESIGN §7), or null. */
  reply: RunReply | null;
}

export interface RunReply {
  receivedAt: string;
  from: string | null;
  snippet: string;
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
 *
 * One statement does the look-up and, on a plan without a limit, the writes; a Free workspace's run is counted
 * against its month first (countRunsAgainstPlan), then written by the same statement made again.
 */
export async function startRun(trx: Kysely<DB>, ctx: StartRunContext, input: StartRunInput): Promise<Run> {
  const queued = queuedRun(input, ctx.clock.now(), null);
  let written = await writeRun(trx, ctx, input, queued, { counted: false });
  if (!written.written) {
    await countRunsAgainstPlan(trx, ctx.workspaceId, written.plan, ctx.clock.now(), ctx.freePlanMonthlyRuns, 1);
    written = await writeRun(trx, ctx, input, queued, { counted: true });
  }
  const run: Run = { ...queued, leadId: written.lead_id, callId: written.call_id };
  if (written.hooked) await emitWebhookEvent(trx, ctx.workspaceId, 'run.started', run, { at: new Date(run.startedAt), runId: run.id });
  return run;
}

/**
 * Starts a run in one statement with its audit entry (`audit`, see mutate's `alone`), outside any transaction: on a
 * plan without a limit, in a workspace without webhook endpoints. Otherwise it writes nothing and answers null, and
 * the run is started by startRun in a transaction. The same checks, in the same order.
 */
export async function startRunAlone(
  db: Kysely<DB>, ctx: StartRunContext, input: StartRunInput, audit: (runId: string, when: RawBuilder<unknown>) => RawBuilder<unknown>,
): Promise<Run | null> {
  const queued = queuedRun(input, ctx.clock.now(), null);
  const written = await writeRun(db, ctx, input, queued, { counted: false, audit });
  return written.written ? { ...queued, leadId: written.lead_id, callId: written.call_id } : null;
}

/**
 * The look-up of the lead, the call and the plan, and the writes of `queued` when the look-up found both, the plan's
 * month has room (`counted`: a Free run already counted) and, when the statement stands alone with its `audit`
 * entry, no webhook endpoint would need an event written beside it. Throws the look-up's 404s.
 */
async function writeRun(
  db: Kysely<DB>, ctx: StartRunContext, input: StartRunInput, queued: Run,
  { counted, audit }: { counted: boolean; audit?: (runId: string, when: RawBuilder<unknown>) => RawBuilder<unknown> },
): Promise<{ plan: Plan; lead_id: string; call_id: string; written: boolean; hooked: boolean }> {
  const { workspaceId } = ctx;
  const now = new Date(queued.startedAt);
  const hooked = sql`EXISTS (SELECT 1 FROM webhook_endpoints h WHERE h.workspace_id = ${workspaceId} AND h.enabled)`;
  // The lead, the call and the plan in one look-up (ids that are not UUIDs match nothing). The lead and the call are
  // locked as the run's foreign keys will lock them (FOR KEY SHARE): while one of them is being erased, the look-up
  // waits for the erasure and then finds it gone (404), rather than the insert failing on a vanished key.
  // The run, its four PENDING steps, its first event and the workers' wake-up notice (delivered at commit) follow.
  // No notice on the run's events channel: nobody can follow a run before it exists.
  const { rows: [found] } = await sql<{
    plan: Plan; lead_id: string | null; call_id: string | null; call_lead_id: string | null; written: boolean; hooked: boolean;
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
      SELECT ${queued.id}, ${workspaceId}, found.lead_id, found.call_id, 'QUEUED', ${ctx.userId}::uuid, ${ctx.keyId}::uuid, ${queued.traceId},
             NULL, NULL, ${now}::timestamptz, NULL, ${now}::timestamptz, NULL, ${now}::timestamptz
      FROM found
      WHERE found.call_lead_id = found.lead_id AND (found.plan <> 'FREE' OR ${counted}::boolean)${audit ? sql` AND NOT ${hooked}` : sql``}
      RETURNING id),
    steps AS (
      INSERT INTO run_steps (run_id, position, node, status, output, attempts)
      SELECT run.id, s.position - 1, s.node, 'PENDING', NULL, 0 FROM run, unnest(${sql.raw(`ARRAY[${STEP_NODES.map((n) => `'${n}'`).join(', ')}]`)}::text[]) WITH ORDINALITY AS s(node, position)),
    queued AS (
      INSERT INTO run_events (run_id, workspace_id, type, occurred_at) SELECT run.id, ${workspaceId}, 'run.queued', ${now}::timestamptz FROM run)${audit ? sql`,
    audited AS (${audit(queued.id, sql`EXISTS (SELECT 1 FROM run)`)})` : sql``}
    SELECT found.*, EXISTS (SELECT 1 FROM run) AS written, ${hooked} AS hooked,
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
  batch_id: string | null;
  steps: Step[];
  email_draft: EmailDraft | null;
  reply: RunReply | null;
}

// One query per run: PostgreSQL assembles the steps and the current draft of run `r` as JSON.
const STEPS_JSON = sql`
  (SELECT json_agg(json_build_object(
      'node', s.node, 'status', s.status, 'output', s.output, 'attempts', s.attempts,
      'startedAt', leadrun_iso(s.started_at), 'completedAt', leadrun_iso(s.completed_at), 'error', s.error,
      'engine', s.engine, 'model', s.model, 'promptVersion', s.prompt_version, 'durationMs', s.duration_ms,
      'usage', CASE WHEN s.input_tokens IS NULL AND s.output_tokens IS NULL THEN NULL ELSE json_build_object(
        'inputTokens', coalesce(s.input_tokens, 0), 'outputTokens', coalesce(s.output_tokens, 0),
        'totalTokens', coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0)) END)
    ORDER BY s.position)
   FROM run_steps s WHERE s.run_id = r.id)`;
// The grounding verdict of draft `d`, as groundingOf (src/domain/runs/drafts.ts) shows it.
const DRAFT_GROUNDING_JSON = sql`
  CASE WHEN jsonb_typeof(d.grounding) = 'object' THEN json_build_object(
    'verdict', CASE WHEN d.grounding->'grounded' = 'true'::jsonb THEN 'grounded' ELSE 'unsupported' END,
    'unsupported', CASE WHEN jsonb_typeof(d.grounding->'unsupported') = 'array'
      THEN (SELECT coalesce(json_agg(u #>> '{}'), '[]'::json) FROM jsonb_array_elements(d.grounding->'unsupported') u WHERE jsonb_typeof(u) = 'string')
      ELSE '[]'::json END) END`;
// Delivery (DESIGN §7): the draft's delivery, or null.
const DELIVERY_JSON = sql`
  (SELECT json_build_object('method', e.method, 'status', e.status, 'messageId', e.message_id, 'attempts', e.attempts,
      'queuedAt', leadrun_iso(e.queued_at), 'deliveredAt', leadrun_iso(e.delivered_at), 'error', e.error)
   FROM email_deliveries e WHERE e.draft_id = d.id)`;
const DRAFT_JSON = sql`
  (SELECT json_build_object('id', d.id, 'status', d.status, 'subject', d.subject, 'body', d.body, 'to', d.to_address, 'version', d.version,
     'origin', d.origin, 'editedAt', leadrun_iso(d.edited_at), 'grounding', ${DRAFT_GROUNDING_JSON},
     'delivery', ${DELIVERY_JSON})
   FROM email_drafts d WHERE d.run_id = r.id ORDER BY d.version DESC LIMIT 1)`;
// The run's newest reply (src/mail/replies.ts).
const REPLY_JSON = sql`
  (SELECT json_build_object('receivedAt', leadrun_iso(p.received_at), 'from', p.from_address, 'snippet', p.snippet)
   FROM email_replies p WHERE p.run_id = r.id AND p.workspace_id = r.workspace_id ORDER BY p.received_at DESC, p.id DESC LIMIT 1)`;
const RUN_COLUMNS = sql`
  r.id, r.status, r.lead_id, r.call_id, r.trace_id, r.error, r.tokens_used, r.batch_id,
  leadrun_iso(r.started_at) AS started_at,
  leadrun_iso(r.completed_at) AS completed_at,
  ${STEPS_JSON} AS steps,
  ${DRAFT_JSON} AS email_draft,
  ${REPLY_JSON} AS reply`;

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
    batchId: row.batch_id,
    steps: row.steps,
    emailDraft: row.email_draft,
    reply: row.reply,
  };
}

export async function getRun(db: Kysely<DB>, workspaceId: string, runId: string): Promise<Run | null> {
  if (!isUuid(runId)) return null;
  const result = await sql<RunRow>`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}`.execute(db);
  const row = result.rows[0];
  return row ? toRun(row) : null;
}

/**
 * A run as the JSON text of the API's Run, but for its traceUrl, as PostgreSQL writes it: sent on as it is, with no
 * step output parsed and written again in Node (docs/PERFORMANCE.md). Null when the workspace has no such run.
 */
export async function getRunJson(db: Kysely<DB>, workspaceId: string, runId: string): Promise<{ json: string; id: string; traceId: string } | null> {
  if (!isUuid(runId)) return null;
  const result = await sql<{ json: string; id: string; trace_id: string }>`
    ${prepare}SELECT r.id, r.trace_id, json_build_object(
      'id', r.id, 'status', r.status, 'leadId', r.lead_id, 'callId', r.call_id,
      'startedAt', leadrun_iso(r.started_at), 'completedAt', leadrun_iso(r.completed_at), 'error', r.error,
      'tokensUsed', r.tokens_used, 'batchId', r.batch_id, 'steps', ${STEPS_JSON}, 'emailDraft', ${DRAFT_JSON},
      'reply', ${REPLY_JSON})::text AS json
    FROM runs r WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}`.execute(db);
  const row = result.rows[0];
  return row ? { json: row.json, id: row.id, traceId: row.trace_id } : null;
}

/** The workspace's runs, newest first (or oldest first: the approval queue), filtered. */
export async function listRuns(
  db: Kysely<DB>,
  workspaceId: string,
  options: {
    limit: number; cursor?: Cursor | null; leadId?: string | null; status?: RunStatus | null; batchId?: string | null; order?: 'newest' | 'oldest';
  },
): Promise<{ items: Run[]; next: Cursor | null }> {
  if (options.leadId && !isUuid(options.leadId)) return { items: [], next: null };
  if (options.batchId && !isUuid(options.batchId)) return { items: [], next: null };
  const oldestFirst = options.order === 'oldest';
  const filters = [sql`r.workspace_id = ${workspaceId}`];
  if (options.leadId) filters.push(sql`r.lead_id = ${options.leadId}`);
  if (options.status) filters.push(sql`r.status = ${options.status}`);
  if (options.batchId) filters.push(sql`r.batch_id = ${options.batchId}`);
  if (options.cursor) {
    filters.push(oldestFirst
      ? sql`(r.started_at, r.id) > (${options.cursor.at}, ${options.cursor.id})`
      : sql`(r.started_at, r.id) < (${options.cursor.at}, ${options.cursor.id})`);
  }
  const direction = sql.raw(oldestFirst ? 'ASC' : 'DESC');
  const result = await sql<RunRow>`
    SELECT ${RUN_COLUMNS} FROM runs r WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY r.started_at ${direction}, r.id ${direction} LIMIT ${options.limit + 1}`.execute(db);
  return pageOf(result.rows.map(toRun), options.limit, (run) => ({ at: new Date(run.startedAt), id: run.id }));
}

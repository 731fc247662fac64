// Runs as the API shows them: one agent run for a lead and a call, with its steps, its draft's current version and
// its delivery, and the newest reply. PostgreSQL assembles each run as JSON in one query. Starting one is start.ts;
// every change after is a transition (lifecycle.ts).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { StepNode } from '../../schemas/outputs.ts';
import { prepare } from '../../db/database.ts';
import type { DB, DeliveryMethod, DeliveryStatus, DraftOrigin, DraftStatus, RunStatus, StepStatus } from '../../db/schema.ts';
import { beyondCursor, pageOf, type Cursor } from '../pagination.ts';
import { isUuid } from '../validation.ts';

import { DRAFT_ORIGINS, DRAFT_STATUSES, RUN_REPLIES_MAX, RUN_STATUSES } from '../../schemas/runs.ts';
import { RUN_SEQUENCE_SQL, type RunSequence } from '../sequences/projection.ts';
import type { ReplyClass } from '../../schemas/reply-classification.ts';

// The states the API names are the states the database stores.
RUN_STATUSES satisfies readonly RunStatus[];
DRAFT_ORIGINS satisfies readonly DraftOrigin[];
DRAFT_STATUSES satisfies readonly DraftStatus[];
export { DRAFT_ORIGINS, DRAFT_STATUSES, RUN_STATUSES };

/** The grounding verdict as the API shows it; null for a version that was not checked. */
export interface DraftGrounding {
  verdict: 'grounded' | 'unsupported';
  unsupported: string[];
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
  // Versions and editing (drafts.ts).
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
  scheduledFor: string | null;
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
  sequence: RunSequence | null;
  /** Every reply, oldest first (DESIGN §16): the newest RUN_REPLIES_MAX. */
  replies: RunReply[];
}

export interface RunReply {
  id: string;
  receivedAt: string;
  from: string | null;
  snippet: string;
  classification: ReplyClass;
  returnsOn: string | null;
  followUpAfter: string | null;
  classifiedBy: 'engine' | 'person';
}
/** A JSON object as PostgreSQL builds it: each key of the API's shape, and the SQL of its value. */
type Projection = Record<string, RawBuilder<unknown>>;

function jsonObject(projection: Projection): RawBuilder<unknown> {
  return sql`json_build_object(${sql.join(Object.entries(projection).map(([key, value]) => sql`${sql.lit(key)}, ${value}`))})`;
}

// One query per run: PostgreSQL assembles run `r` as the API shows it, with its steps, the current version of its
// draft and that version's delivery, and its newest reply. Each projection holds the keys of its TypeBox schema in
// src/http/schemas.ts (Run, Step, EmailDraft, DraftGrounding, Delivery, RunReply): test/domain/run-shape.test.ts
// fails when a field is added to one and not the other.
const STEP_PROJECTION = {
  node: sql`s.node`, status: sql`s.status`, output: sql`s.output`, attempts: sql`s.attempts`,
  startedAt: sql`leadrun_iso(s.started_at)`, completedAt: sql`leadrun_iso(s.completed_at)`, error: sql`s.error`,
  engine: sql`s.engine`, model: sql`s.model`, promptVersion: sql`s.prompt_version`, durationMs: sql`s.duration_ms`,
  usage: sql`CASE WHEN s.input_tokens IS NULL AND s.output_tokens IS NULL THEN NULL ELSE json_build_object(
    'inputTokens', coalesce(s.input_tokens, 0), 'outputTokens', coalesce(s.output_tokens, 0),
    'totalTokens', coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0)) END`,
} satisfies Record<keyof Step, RawBuilder<unknown>>;
// The grounding verdict of draft `d`, as groundingOf (drafts.ts) shows it.
const GROUNDING_PROJECTION = {
  verdict: sql`CASE WHEN d.grounding->'grounded' = 'true'::jsonb THEN 'grounded' ELSE 'unsupported' END`,
  unsupported: sql`CASE WHEN jsonb_typeof(d.grounding->'unsupported') = 'array'
    THEN (SELECT coalesce(json_agg(u #>> '{}'), '[]'::json) FROM jsonb_array_elements(d.grounding->'unsupported') u WHERE jsonb_typeof(u) = 'string')
    ELSE '[]'::json END`,
} satisfies Record<keyof DraftGrounding, RawBuilder<unknown>>;
// Delivery (DESIGN §7).
const DELIVERY_PROJECTION = {
  method: sql`e.method`, status: sql`e.status`, messageId: sql`e.message_id`, attempts: sql`e.attempts`,
  queuedAt: sql`leadrun_iso(e.queued_at)`, deliveredAt: sql`leadrun_iso(e.delivered_at)`, error: sql`e.error`,
  scheduledFor: sql`CASE WHEN e.status = 'SCHEDULED' THEN leadrun_iso(e.scheduled_for) END`,
} satisfies Record<keyof Delivery, RawBuilder<unknown>>;
const DRAFT_PROJECTION = {
  id: sql`d.id`, status: sql`d.status`, subject: sql`d.subject`, body: sql`d.body`, to: sql`d.to_address`, version: sql`d.version`,
  origin: sql`d.origin`, editedAt: sql`leadrun_iso(d.edited_at)`,
  grounding: sql`CASE WHEN jsonb_typeof(d.grounding) = 'object' THEN ${jsonObject(GROUNDING_PROJECTION)} END`,
  delivery: sql`(SELECT ${jsonObject(DELIVERY_PROJECTION)} FROM email_deliveries e WHERE e.draft_id = d.id)`,
} satisfies Record<keyof EmailDraft, RawBuilder<unknown>>;
// The run's newest reply (src/mail/replies.ts).
const REPLY_PROJECTION = {
  id: sql`p.id`, receivedAt: sql`leadrun_iso(p.received_at)`, from: sql`p.from_address`, snippet: sql`p.snippet`,
  classification: sql`p.classification`, returnsOn: sql`p.returns_on::text`, followUpAfter: sql`p.follow_up_after::text`,
  classifiedBy: sql`p.classified_by`,
} satisfies Record<keyof RunReply, RawBuilder<unknown>>;
/** The run as the API shows it, but for its traceUrl (made from its traceId, src/http/run-render.ts). */
const RUN_PROJECTION = {
  id: sql`r.id`, status: sql`r.status`, leadId: sql`r.lead_id`, callId: sql`r.call_id`,
  startedAt: sql`leadrun_iso(r.started_at)`, completedAt: sql`leadrun_iso(r.completed_at)`, error: sql`r.error`,
  tokensUsed: sql`r.tokens_used`, batchId: sql`r.batch_id`,
  steps: sql`(SELECT json_agg(${jsonObject(STEP_PROJECTION)} ORDER BY s.position) FROM run_steps s WHERE s.run_id = r.id)`,
  emailDraft: sql`(SELECT ${jsonObject(DRAFT_PROJECTION)} FROM email_drafts d WHERE d.run_id = r.id AND d.touch = 1 ORDER BY d.version DESC LIMIT 1)`,
  reply: sql`(SELECT ${jsonObject(REPLY_PROJECTION)}
    FROM email_replies p WHERE p.run_id = r.id AND p.workspace_id = r.workspace_id ORDER BY p.received_at DESC, p.id DESC LIMIT 1)`,
  sequence: RUN_SEQUENCE_SQL,
  replies: sql`(SELECT coalesce(json_agg(${jsonObject(REPLY_PROJECTION)} ORDER BY p.received_at, p.id), '[]'::json) FROM (
    SELECT * FROM email_replies q WHERE q.run_id = r.id AND q.workspace_id = r.workspace_id
    ORDER BY q.received_at DESC, q.id DESC LIMIT ${sql.lit(RUN_REPLIES_MAX)}) p)`,
} satisfies Record<Exclude<keyof Run, 'traceId'>, RawBuilder<unknown>>;

/** The keys each projection writes, for the test that holds them to the API's schemas. */
export const RUN_SHAPE = {
  Run: Object.keys(RUN_PROJECTION), Step: Object.keys(STEP_PROJECTION), EmailDraft: Object.keys(DRAFT_PROJECTION),
  DraftGrounding: Object.keys(GROUNDING_PROJECTION), Delivery: Object.keys(DELIVERY_PROJECTION), RunReply: Object.keys(REPLY_PROJECTION),
};

const RUN_JSON = jsonObject(RUN_PROJECTION);

const toRun = (row: { run: Omit<Run, 'traceId'>; trace_id: string }): Run => ({ ...row.run, traceId: row.trace_id });

export async function getRun(db: Kysely<DB>, workspaceId: string, runId: string): Promise<Run | null> {
  if (!isUuid(runId)) return null;
  const result = await sql<{ run: Omit<Run, 'traceId'>; trace_id: string }>`
    SELECT r.trace_id, ${RUN_JSON} AS run FROM runs r WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}`.execute(db);
  const row = result.rows[0];
  return row ? toRun(row) : null;
}

/**
 * A run as the JSON text of the API's Run, but for its traceUrl, as PostgreSQL writes it: sent on as it is, with no
 * step output parsed and written again in Node. Null when the workspace has no such run.
 */
export async function getRunJson(db: Kysely<DB>, workspaceId: string, runId: string): Promise<{ json: string; id: string; traceId: string } | null> {
  if (!isUuid(runId)) return null;
  const result = await sql<{ json: string; id: string; trace_id: string }>`
    ${prepare}SELECT r.id, r.trace_id, ${RUN_JSON}::text AS json
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
  if (options.cursor) filters.push(beyondCursor(options.cursor, 'r.started_at', 'r.id', oldestFirst ? 'oldest' : 'newest'));
  const direction = sql.raw(oldestFirst ? 'ASC' : 'DESC');
  const result = await sql<{ run: Omit<Run, 'traceId'>; trace_id: string }>`
    SELECT r.trace_id, ${RUN_JSON} AS run FROM runs r WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY r.started_at ${direction}, r.id ${direction} LIMIT ${options.limit + 1}`.execute(db);
  return pageOf(result.rows.map(toRun), options.limit, (run) => ({ at: new Date(run.startedAt), id: run.id }));
}

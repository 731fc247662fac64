// The run row is the job. These are the queries a worker moves a run with; every write after the claim checks
// that the worker still holds the lease, so a worker that lost its run (it stalled, another took over, the run
// was cancelled) can never overwrite what happened since. Each write records its event in the same transaction.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { EngineName, PreviousDraft, RunContext, TokenUsage } from '../agent/engine.ts';
import type { StepNode } from '../agent/outputs.ts';
import type { DB, RunStatus, StepStatus } from '../db/schema.ts';
import { prepare } from '../db/database.ts';
import {
  applyTransition, claimableRuns, emitTransitionWebhook, eventsInsert, RUN, RUN_EVENTS_CHANNEL, RUNS_CHANNEL, skipSteps, state, states, STEP,
} from '../domain/runs/lifecycle.ts';
import { secondsWaited } from './sql/jobStats.ts';
import { LeaseLost } from './errors.ts';
import type { JobKindStats, JobSource } from './types.ts';

export { LeaseLost } from './errors.ts';

/** The job kind of a run, in the job runner and on /metrics. */
export const RUN_KIND = 'run';

export interface ClaimedRun {
  id: string;
  workspaceId: string;
  leadId: string;
  callId: string;
  createdByUserId: string | null;
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

export interface Job {
  runId: string;
  workspaceId: string;
  workerId: string;
}

/** What one attempt at a step took, recorded on the step and its event. */
export interface AttemptCost {
  engine: EngineName;
  model: string | null;
  usage: TokenUsage | null;
  durationMs: number;
}

/** What starting a step writes on its row (the claim, startStep and completeStep's `next` start steps): one more attempt. */
const startsStep = (now: Date) => sql`status = ${state(STEP.start.to)}, attempts = attempts + 1, started_at = coalesce(started_at, ${now}::timestamptz), error = NULL`;

/** The `step.started` event of the step that a `started` CTE started (the claim, startStep), for the run `runId` and `workspaceId` name (from `alsoFrom`). */
const startedEvent = (runId: RawBuilder<unknown>, workspaceId: RawBuilder<unknown>, engine: EngineName, now: Date, alsoFrom = sql``) =>
  eventsInsert(runId, workspaceId, now, sql`(
    SELECT ${STEP.start.event}::text AS type, started.node, started.attempts AS attempt, NULL::int AS duration_ms, ${engine}::text AS engine,
           NULL::text AS model, NULL::int AS input_tokens, NULL::int AS output_tokens
    FROM started) e${alsoFrom}`);

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
    ${LOAD(start
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

/** Extends the lease; false when the worker no longer holds the run. */
export async function renewLease(db: Kysely<DB>, runId: string, workerId: string, now: Date, leaseMs: number): Promise<boolean> {
  const result = await db.updateTable('runs')
    .set({ lease_expires_at: new Date(now.getTime() + leaseMs) })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Locks the run row for the rest of the transaction if this worker still holds it. */
async function holdsLease(trx: Transaction<DB>, runId: string, workerId: string): Promise<boolean> {
  const row = await trx.selectFrom('runs').select('id')
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING')
    .forUpdate().executeTakeFirst();
  return row !== undefined;
}

async function underLease<T>(db: Kysely<DB>, job: Job, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(`run ${job.runId}`);
    return work(trx);
  });
}

export interface StoredStep {
  node: StepNode;
  status: StepStatus;
  output: unknown;
  attempts: number;
  /** When the model endpoint's refusals first put the step off since its last counted attempt (ISO), or null. */
  putOffSince: string | null;
}

/** What a worker needs to work a run: its context and its steps. */
export interface LoadedRun {
  context: RunContext;
  steps: StoredStep[];
  /** Whether the workspace has webhook endpoints: completeStep's first hint. */
  hooked: boolean;
}

type RunKeys = Pick<ClaimedRun, 'id' | 'workspaceId' | 'leadId' | 'callId' | 'createdByUserId'>;

interface LoadRow {
  id: string; workspace_id: string; lead_id: string; call_id: string; created_by_user_id: string | null;
  found_lead: string | null; lead_name: string; email: string | null; company_name: string | null; company_website: string | null;
  found_call: string | null; title: string | null; transcript: string; occurred_at: Date | null;
  sender: { name: string | null; signature: string | null } | null; from_name: string | null;
  previous_draft: Required<PreviousDraft> | null; steps: StoredStep[] | null; hooked: boolean;
}

/**
 * What a worker reads to work a run, over `r` (the run's id, workspace_id, lead_id, call_id and created_by_user_id):
 * the lead, the call, the sender, the draft a regeneration replaces (the latest version, a person's edit included),
 * the steps, and whether the workspace has webhook endpoints, with `more` columns (the claim's start). The claim
 * reads it for the run it takes, in the same statement; loadRun for a run it is given.
 *
 * The sender is the person who started the run (from the UI), else the workspace's admin (a run started through
 * the API has no person), each with their sender name (or their name) and signature; a person who has been removed
 * signs nothing. With no person, the workspace's configured sender name (Settings / E-mail) signs.
 */
const LOAD = (more?: RawBuilder<unknown>) => sql`
  SELECT r.*, ${more ? sql`${more}, ` : sql``}l.id AS found_lead, l.name AS lead_name, l.email, l.company_name, l.company_website,
         c.id AS found_call, c.title, c.transcript, c.occurred_at,
         (SELECT json_build_object('name', coalesce(nullif(trim(u.sender_name), ''), nullif(trim(u.name), '')), 'signature', nullif(trim(u.signature), ''))
          FROM users u, workspaces w
          WHERE w.id = r.workspace_id AND u.removed_at IS NULL AND (u.id = r.created_by_user_id OR u.id = w.admin_user_id)
          ORDER BY CASE WHEN u.id = r.created_by_user_id THEN 0 ELSE 1 END
          LIMIT 1) AS sender,
         (SELECT nullif(trim(m.from_name), '') FROM mail_settings m WHERE m.workspace_id = r.workspace_id) AS from_name,
         (SELECT json_build_object('version', d.version, 'subject', d.subject, 'body', d.body, 'origin', d.origin)
          FROM email_drafts d WHERE d.run_id = r.id ORDER BY d.version DESC LIMIT 1) AS previous_draft,
         (SELECT json_agg(json_build_object('node', s.node, 'status', s.status, 'output', s.output, 'attempts', s.attempts, 'putOffSince', s.put_off_since) ORDER BY s.position)
          FROM run_steps s WHERE s.run_id = r.id) AS steps,
         EXISTS (SELECT 1 FROM webhook_endpoints h WHERE h.workspace_id = r.workspace_id AND h.enabled) AS hooked
  FROM r
  LEFT JOIN leads l ON l.id = r.lead_id AND l.workspace_id = r.workspace_id
  LEFT JOIN calls c ON c.id = r.call_id AND c.workspace_id = r.workspace_id`;

/** A LOAD row as the worker uses it; null when the run's lead or call has been erased (src/domain/erasure.ts), and with it the run. */
function loaded(run: RunKeys, row: LoadRow): LoadedRun | null {
  if (!row.found_lead || !row.found_call) return null;
  const sender = { name: row.sender?.name ?? row.from_name, signature: row.sender?.signature ?? null };
  return {
    context: {
      runId: run.id,
      lead: { id: row.found_lead, name: row.lead_name, email: row.email, companyName: row.company_name, companyWebsite: row.company_website },
      call: { id: row.found_call, title: row.title, transcript: row.transcript, occurredAt: row.occurred_at },
      senderName: sender.name,
      sender,
      previousDraft: row.previous_draft,
    },
    steps: row.steps ?? [],
    hooked: row.hooked,
  };
}

/** What a worker needs to work a run it was given (the claim reads it for the run it takes), in one round trip. */
export async function loadRun(db: Kysely<DB>, run: RunKeys): Promise<LoadedRun | null> {
  const { rows: [row] } = await sql<LoadRow>`
    ${prepare}WITH r AS (
      SELECT ${run.id}::uuid AS id, ${run.workspaceId}::uuid AS workspace_id, ${run.leadId}::uuid AS lead_id, ${run.callId}::uuid AS call_id,
             ${run.createdByUserId}::uuid AS created_by_user_id)
    ${LOAD()}`.execute(db);
  return row ? loaded(run, row) : null;
}

export async function loadSteps(db: Kysely<DB>, runId: string): Promise<StoredStep[]> {
  const rows = await db.selectFrom('run_steps').select(['node', 'status', 'output', 'attempts', 'put_off_since']).where('run_id', '=', runId).orderBy('position').execute();
  return rows.map(({ put_off_since, ...step }) => ({ ...step, putOffSince: put_off_since?.toISOString() ?? null }));
}

// A step's completion and the next step's start are one statement (a run's first start is one of its own): the lease
// is checked (and the run row locked) by the first CTE, and every write below it happens only when that check passed;
// the statement commits whole or not at all. Run events are numbered in the order written. Each used to be a
// transaction of 6 to 11 statements, one round trip apiece (docs/PERFORMANCE.md).
// The lease CTE also reads whether anyone follows the run's events: a follow (src/http/run-event-hub.ts) updates the
// run row, so either it waits for this statement's commit and then reads the events written, or this statement
// waits for it and, locking the row, reads the count it committed. A notice wakes followers only: without any, none
// is sent, since PostgreSQL commits notifying transactions one at a time.
// A completion's lease CTE also looks up whether the workspace has webhook endpoints (completeStep).
const LEASE = (job: Job, { hooks = false } = {}) => sql`lease AS (
  SELECT id, followers${hooks ? sql`, EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = ${job.workspaceId} AND enabled) AS hooked` : sql``}
  FROM runs WHERE id = ${job.runId} AND lease_owner = ${job.workerId} AND status = 'RUNNING' FOR UPDATE)`;
const FOLLOWED = sql`EXISTS (SELECT 1 FROM lease WHERE followers > 0)`;

interface Transition {
  held: number;
  completed: number;
  attempt: number | null;
}

/**
 * Marks a step RUNNING and counts the attempt; returns the attempt number: the start of a run's first step to work
 * (completeStep starts the others). A statement on its own, as completeStep's: a worker that dies while it waits for a
 * row lock has it committed when the wait ends, as if it had died just after, and the attempt counts as one that
 * ended with its worker.
 */
export async function startStep(db: Kysely<DB>, job: Job, node: StepNode, engine: EngineName, now: Date): Promise<number> {
  const { rows: [row] } = await sql<Transition>`
    ${prepare}WITH ${LEASE(job)},
    started AS (
      UPDATE run_steps SET ${startsStep(now)}
      WHERE run_id = ${job.runId} AND node = ${node} AND status IN ${states(...STEP.start.from)} AND EXISTS (SELECT 1 FROM lease)
      RETURNING node, attempts),
    events AS (${startedEvent(sql`${job.runId}`, sql`${job.workspaceId}`, engine, now)})
    SELECT (SELECT count(*) FROM lease)::int AS held, 0 AS completed, (SELECT attempts FROM started) AS attempt,
           CASE WHEN EXISTS (SELECT 1 FROM started) AND ${FOLLOWED} THEN pg_notify(${RUN_EVENTS_CHANNEL}, ${job.runId}) END AS notified`.execute(db);
  if (!row?.held) throw new LeaseLost(`run ${job.runId}`);
  if (row.attempt === null) throw new Error(`step ${node} of run ${job.runId} cannot be started`);
  return row.attempt;
}

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
  hooked?: boolean;
}

export interface Completed {
  /** The attempt of `next` that was started, or null without one. */
  nextAttempt: number | null;
  /** Whether the workspace has webhook endpoints now: the hint for the run's next completion. */
  hooked: boolean;
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
  job: Job,
  node: StepNode,
  result: { output: object; promptVersion: string } & AttemptCost,
  attempt: number,
  now: Date,
  { draft, next, hooked = false }: Completion = {},
): Promise<Completed> {
  const tokens = result.usage && result.usage.totalTokens > 0 ? result.usage.totalTokens : 0;
  const durationMs = Math.round(result.durationMs);
  const inputTokens = result.usage?.inputTokens ?? null;
  const outputTokens = result.usage?.outputTokens ?? null;
  const statement = (withHooks: boolean) => {
    const ctes = [LEASE(job, { hooks: true }), sql`done AS (
      UPDATE run_steps SET status = ${state(STEP.complete.to)}, output = ${JSON.stringify(result.output)}::jsonb, completed_at = ${now}::timestamptz,
        error = NULL, put_off_since = NULL, engine = ${result.engine}, model = ${result.model}, prompt_version = ${result.promptVersion},
        input_tokens = ${inputTokens}::int, output_tokens = ${outputTokens}::int, duration_ms = ${durationMs}::int
      WHERE run_id = ${job.runId} AND node = ${node} AND status IN ${states(...STEP.complete.from)}
        AND EXISTS (SELECT 1 FROM lease ${withHooks ? sql`` : sql`WHERE NOT hooked`})
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
        FROM (SELECT coalesce(max(version), 0) + 1 AS version FROM email_drafts WHERE run_id = ${job.runId}) v
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
    return sql<Transition & { hooked: boolean | null }>`
      ${prepare}WITH ${sql.join(ctes, sql`,
`)}
      SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM done)::int AS completed,
             ${next ? sql`(SELECT attempts FROM started)` : sql`NULL::int`} AS attempt, (SELECT hooked FROM lease) AS hooked,
             CASE WHEN EXISTS (SELECT 1 FROM done) AND ${FOLLOWED} THEN pg_notify(${RUN_EVENTS_CHANNEL}, ${job.runId}) END AS notified`;
  };
  const write = async (conn: Kysely<DB>, withHooks: boolean): Promise<Completed | 'hooked'> => {
    const { rows: [row] } = await statement(withHooks).execute(conn);
    if (!row?.held) throw new LeaseLost(`run ${job.runId}`);
    if (!withHooks && row.hooked) return 'hooked';
    if (!row.completed) throw new Error(`step ${node} of run ${job.runId} was not running`);
    if (next && row.attempt === null) throw new Error(`step ${next.node} of run ${job.runId} cannot be started`);
    if (withHooks) {
      const target = { workspaceId: job.workspaceId, runId: job.runId, at: now };
      await emitTransitionWebhook(conn, STEP.complete, target);
      if (draft) await emitTransitionWebhook(conn, RUN.awaitApproval, target);
    }
    return { nextAttempt: row.attempt, hooked: row.hooked === true };
  };
  const withHooks = () => db.transaction().execute(async (trx) => write(trx, true) as Promise<Completed>);
  if (hooked) return withHooks();
  const written = await write(db, false);
  return written === 'hooked' ? withHooks() : written;
}

async function spendTokens(trx: Transaction<DB>, runId: string, usage: TokenUsage | null): Promise<void> {
  if (!usage || usage.totalTokens <= 0) return;
  await trx.updateTable('runs').set((eb) => ({ tokens_used: eb('tokens_used', '+', usage.totalTokens) })).where('id', '=', runId).execute();
}

/**
 * A failed attempt that will be retried: the run goes back to the queue, due at `retryAt`. An attempt put off
 * (`counted: false`: the model endpoint asked to wait) is taken back from the step's attempts, so that waiting for
 * the provider does not use up the step's attempts; `refused` (the endpoint refused it) marks when the step was first
 * put off, which bounds the wait (handlers/run.ts). A counted attempt clears that mark: the endpoint answered.
 */
export async function retryStepLater(
  db: Kysely<DB>, job: Job, node: StepNode, attempt: number, error: string, cost: AttemptCost, now: Date, retryAt: Date,
  { counted = true, refused = false }: { counted?: boolean; refused?: boolean } = {},
): Promise<void> {
  await underLease(db, job, async (trx) => {
    await applyTransition(trx, STEP.retry, {
      ...target(job, now), nodes: [node],
      set: {
        error,
        attempts: counted ? sql`attempts` : sql`attempts - 1`,
        put_off_since: counted ? null : refused ? sql`coalesce(put_off_since, ${now}::timestamptz)` : sql`put_off_since`,
      },
      event: { node, attempt, error, ...costOf(cost) },
    });
    await trx.updateTable('runs').set({ available_at: retryAt, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('id', '=', job.runId).execute();
    await spendTokens(trx, job.runId, cost.usage);
  });
}

/** A step that failed for good: it is FAILED, the steps after it SKIPPED, the run FAILED. */
export async function failRun(
  db: Kysely<DB>, job: Job, node: StepNode, attempt: number, error: string, cost: AttemptCost | null, now: Date,
): Promise<void> {
  await underLease(db, job, async (trx) => {
    await applyTransition(trx, STEP.fail, { ...target(job, now), nodes: [node], set: { error, completed_at: now }, event: { node, attempt, error, ...costOf(cost) } });
    await skipSteps(trx, target(job, now), null);
    await spendTokens(trx, job.runId, cost?.usage ?? null);
    const failure = `${node} failed: ${error}`;
    await applyTransition(trx, RUN.fail, {
      ...target(job, now), set: { completed_at: now, error: failure, lease_owner: null, lease_expires_at: null, feedback: null }, event: { error: failure },
    });
  });
}

const target = (job: Job, at: Date) => ({ workspaceId: job.workspaceId, runId: job.runId, at });

/** What an attempt took, as its event records it. */
function costOf(cost: AttemptCost | null) {
  return { durationMs: cost?.durationMs ?? null, engine: cost?.engine ?? null, model: cost?.model ?? null, usage: cost?.usage ?? null };
}

/** Hands a run back at shutdown so another worker can take it at once. */
export async function releaseRun(db: Kysely<DB>, runId: string, workerId: string, now: Date): Promise<void> {
  await db.updateTable('runs').set({ lease_owner: null, lease_expires_at: null, available_at: now, updated_at: now })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING').execute();
}

/** What /metrics shows of the runs as a queue: FAILED is a run's dead letter. Each count is read from its own index. */
export async function runStats(db: Kysely<DB>, now: Date): Promise<JobKindStats[]> {
  const { rows: [row] } = await sql<{ depth: number; oldest: Date | null; dead: number }>`
    SELECT (SELECT count(*) FROM runs WHERE status IN ('QUEUED', 'RUNNING'))::int AS depth,
           (SELECT min(available_at) FROM runs WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}::timestamptz) AS oldest,
           (SELECT count(*) FROM runs WHERE status = 'FAILED')::int AS dead`.execute(db);
  return [{ kind: RUN_KIND, depth: row?.depth ?? 0, dead: row?.dead ?? 0, oldestAgeSeconds: secondsWaited(row?.oldest ?? null, now) }];
}

/**
 * The runs table as the job source of kind `run`: the run row is the job (DESIGN §2). A notice holds a run's id, or
 * how many runs a batch queued, and wakes that many slots. Its claim also starts the run's first step to work.
 */
export function runSource(start: ClaimStart): JobSource<ClaimedRun> {
  return {
    channel: RUNS_CHANNEL,
    wakes: (payload) => claimableRuns(payload),
    claim: (db, _kind, owner, now, leaseMs) => claimNextRun(db, owner, now, leaseMs, start),
    renew: renewLease,
    release: releaseRun,
    stats: runStats,
  };
}

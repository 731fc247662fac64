// The run row is the job. These are the queries a worker moves a run with; every write after the claim checks
// that the worker still holds the lease, so a worker that lost its run (it stalled, another took over, the run
// was cancelled) can never overwrite what happened since. Each write records its event in the same transaction.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { EngineName, TokenUsage } from '../agent/engine.ts';
import type { StepNode } from '../agent/outputs.ts';
import type { DB, RunStatus, StepStatus } from '../db/schema.ts';
import { recordEvent } from '../domain/run-events.ts';

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

/** Takes the oldest run that is queued, due for a retry, or whose worker's lease ran out. */
export async function claimNextRun(db: Kysely<DB>, workerId: string, now: Date, leaseMs: number): Promise<ClaimedRun | null> {
  const result = await sql<{
    id: string; workspace_id: string; lead_id: string; call_id: string; created_by_user_id: string | null;
    trace_id: string; tokens_used: number; feedback: string | null;
  }>`
    UPDATE runs SET status = 'RUNNING', lease_owner = ${workerId}, lease_expires_at = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}
    WHERE id = (
      SELECT id FROM runs
      WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}
        AND (lease_expires_at IS NULL OR lease_expires_at < ${now})
      ORDER BY available_at, started_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING id, workspace_id, lead_id, call_id, created_by_user_id, trace_id, tokens_used, feedback`.execute(db);
  const row = result.rows[0];
  return row
    ? {
      id: row.id, workspaceId: row.workspace_id, leadId: row.lead_id, callId: row.call_id,
      createdByUserId: row.created_by_user_id, traceId: row.trace_id, tokensUsed: row.tokens_used, feedback: row.feedback,
    }
    : null;
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

export class LeaseLost extends Error {
  constructor(runId: string) {
    super(`the lease on run ${runId} was lost`);
    this.name = 'LeaseLost';
  }
}

async function underLease<T>(db: Kysely<DB>, job: Job, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(job.runId);
    return work(trx);
  });
}

export interface StoredStep {
  node: StepNode;
  status: StepStatus;
  output: unknown;
  attempts: number;
}

export async function loadSteps(db: Kysely<DB>, runId: string): Promise<StoredStep[]> {
  return db.selectFrom('run_steps').select(['node', 'status', 'output', 'attempts']).where('run_id', '=', runId).orderBy('position').execute();
}

/** Marks a step RUNNING and counts the attempt; returns the attempt number. */
export async function startStep(db: Kysely<DB>, job: Job, node: StepNode, engine: EngineName, now: Date): Promise<number> {
  return underLease(db, job, async (trx) => {
    const row = await trx.updateTable('run_steps')
      .set((eb) => ({ status: 'RUNNING', attempts: eb('attempts', '+', 1), started_at: eb.fn.coalesce('started_at', eb.val(now)), error: null }))
      .where('run_id', '=', job.runId).where('node', '=', node).where('status', 'in', ['PENDING', 'RUNNING'])
      .returning('attempts').executeTakeFirst();
    if (!row) throw new Error(`step ${node} of run ${job.runId} cannot be started`);
    await recordEvent(trx, { runId: job.runId, workspaceId: job.workspaceId, type: 'step.started', node, attempt: row.attempts, engine, at: now });
    return row.attempts;
  });
}

async function spendTokens(trx: Transaction<DB>, runId: string, usage: TokenUsage | null): Promise<void> {
  if (!usage || usage.totalTokens <= 0) return;
  await trx.updateTable('runs').set((eb) => ({ tokens_used: eb('tokens_used', '+', usage.totalTokens) })).where('id', '=', runId).execute();
}

/**
 * Stores a completed step's output and what it took. WRITER's completion also writes the draft and moves the run
 * to AWAITING_APPROVAL, in the same transaction: a run has its draft exactly when its WRITER step is COMPLETED.
 */
export async function completeStep(
  db: Kysely<DB>,
  job: Job,
  node: StepNode,
  result: { output: object; promptVersion: string } & AttemptCost,
  attempt: number,
  now: Date,
  draft?: { subject: string; body: string; to: string | null },
): Promise<void> {
  await underLease(db, job, async (trx) => {
    const updated = await trx.updateTable('run_steps')
      .set({
        status: 'COMPLETED',
        output: sql`${JSON.stringify(result.output)}::jsonb`,
        completed_at: now,
        error: null,
        engine: result.engine,
        model: result.model,
        prompt_version: result.promptVersion,
        input_tokens: result.usage?.inputTokens ?? null,
        output_tokens: result.usage?.outputTokens ?? null,
        duration_ms: Math.round(result.durationMs),
      })
      .where('run_id', '=', job.runId).where('node', '=', node).where('status', '=', 'RUNNING')
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) throw new Error(`step ${node} of run ${job.runId} was not running`);
    await spendTokens(trx, job.runId, result.usage);
    await recordEvent(trx, {
      runId: job.runId, workspaceId: job.workspaceId, type: 'step.completed', node, attempt,
      durationMs: result.durationMs, engine: result.engine, model: result.model, usage: result.usage, at: now,
    });
    if (!draft) return;
    const latest = await trx.selectFrom('email_drafts').select((eb) => eb.fn.max('version').as('version')).where('run_id', '=', job.runId).executeTakeFirst();
    await trx.insertInto('email_drafts').values({
      id: randomUUID(),
      workspace_id: job.workspaceId,
      run_id: job.runId,
      version: (latest?.version ?? 0) + 1,
      status: 'DRAFT',
      to_address: draft.to,
      subject: draft.subject,
      body: draft.body,
      created_at: now,
      feedback: null,
      decided_at: null,
      decided_by_key_id: null,
      decided_by_user_id: null,
    }).execute();
    await finishRun(trx, job, 'AWAITING_APPROVAL', now, null);
  });
}

async function finishRun(trx: Transaction<DB>, job: Job, status: RunStatus & ('AWAITING_APPROVAL' | 'FAILED'), now: Date, error: string | null): Promise<void> {
  await trx.updateTable('runs')
    .set({ status, completed_at: now, updated_at: now, error, lease_owner: null, lease_expires_at: null, feedback: null })
    .where('id', '=', job.runId).execute();
  await recordEvent(trx, {
    runId: job.runId, workspaceId: job.workspaceId, type: status === 'FAILED' ? 'run.failed' : 'run.awaiting_approval', error, at: now,
  });
}

/** A failed attempt that will be retried: the run goes back to the queue, due at `retryAt`. */
export async function retryStepLater(
  db: Kysely<DB>, job: Job, node: StepNode, attempt: number, error: string, cost: AttemptCost, now: Date, retryAt: Date,
): Promise<void> {
  await underLease(db, job, async (trx) => {
    await trx.updateTable('run_steps').set({ status: 'PENDING', error })
      .where('run_id', '=', job.runId).where('node', '=', node).where('status', '=', 'RUNNING').execute();
    await trx.updateTable('runs').set({ available_at: retryAt, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('id', '=', job.runId).execute();
    await spendTokens(trx, job.runId, cost.usage);
    await recordEvent(trx, {
      runId: job.runId, workspaceId: job.workspaceId, type: 'step.retrying', node, attempt, error,
      durationMs: cost.durationMs, engine: cost.engine, model: cost.model, usage: cost.usage, at: now,
    });
  });
}

/** A step that failed for good: it is FAILED, the steps after it SKIPPED, the run FAILED. */
export async function failRun(
  db: Kysely<DB>, job: Job, node: StepNode, attempt: number, error: string, cost: AttemptCost | null, now: Date,
): Promise<void> {
  await underLease(db, job, async (trx) => {
    await trx.updateTable('run_steps').set({ status: 'FAILED', error, completed_at: now })
      .where('run_id', '=', job.runId).where('node', '=', node).execute();
    await trx.updateTable('run_steps').set({ status: 'SKIPPED' })
      .where('run_id', '=', job.runId).where('status', '=', 'PENDING').execute();
    await spendTokens(trx, job.runId, cost?.usage ?? null);
    await recordEvent(trx, {
      runId: job.runId, workspaceId: job.workspaceId, type: 'step.failed', node, attempt, error,
      durationMs: cost?.durationMs ?? null, engine: cost?.engine ?? null, model: cost?.model ?? null, usage: cost?.usage ?? null, at: now,
    });
    await finishRun(trx, job, 'FAILED', now, `${node} failed: ${error}`);
  });
}

/** Hands a run back at shutdown so another worker can take it at once. */
export async function releaseRun(db: Kysely<DB>, runId: string, workerId: string, now: Date): Promise<void> {
  await db.updateTable('runs').set({ lease_owner: null, lease_expires_at: null, available_at: now, updated_at: now })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING').execute();
}

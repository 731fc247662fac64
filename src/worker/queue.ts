// The run row is the job. These are the queries a worker moves a run with; every write after the claim checks
// that the worker still holds the lease, so a worker that lost its run (it stalled, another took over) can
// never overwrite what the new holder did.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { StepNode } from '../agent/outputs.ts';
import type { DB, RunStatus, StepStatus } from '../db/schema.ts';

export interface ClaimedRun {
  id: string;
  workspaceId: string;
  leadId: string;
  callId: string;
  createdByUserId: string | null;
}

/** Takes the oldest run that is queued, due for a retry, or whose worker's lease ran out. */
export async function claimNextRun(db: Kysely<DB>, workerId: string, now: Date, leaseMs: number): Promise<ClaimedRun | null> {
  const result = await sql<{ id: string; workspace_id: string; lead_id: string; call_id: string; created_by_user_id: string | null }>`
    UPDATE runs SET status = 'RUNNING', lease_owner = ${workerId}, lease_expires_at = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}
    WHERE id = (
      SELECT id FROM runs
      WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}
        AND (lease_expires_at IS NULL OR lease_expires_at < ${now})
      ORDER BY available_at, started_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING id, workspace_id, lead_id, call_id, created_by_user_id`.execute(db);
  const row = result.rows[0];
  return row ? { id: row.id, workspaceId: row.workspace_id, leadId: row.lead_id, callId: row.call_id, createdByUserId: row.created_by_user_id } : null;
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
export async function startStep(db: Kysely<DB>, runId: string, node: StepNode, workerId: string, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, runId, workerId))) throw new LeaseLost(runId);
    const row = await trx.updateTable('run_steps')
      .set((eb) => ({ status: 'RUNNING', attempts: eb('attempts', '+', 1), started_at: eb.fn.coalesce('started_at', eb.val(now)), error: null }))
      .where('run_id', '=', runId).where('node', '=', node).where('status', 'in', ['PENDING', 'RUNNING'])
      .returning('attempts').executeTakeFirst();
    if (!row) throw new Error(`step ${node} of run ${runId} cannot be started`);
    return row.attempts;
  });
}

/**
 * Stores a completed step's output. WRITER's completion also writes the draft and moves the run to
 * AWAITING_APPROVAL, in the same transaction: a run has its draft exactly when its WRITER step is COMPLETED.
 */
export async function completeStep(
  db: Kysely<DB>,
  job: { runId: string; workspaceId: string; workerId: string },
  node: StepNode,
  output: object,
  now: Date,
  draft?: { subject: string; body: string; to: string | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(job.runId);
    const updated = await trx.updateTable('run_steps')
      .set({ status: 'COMPLETED', output: sql`${JSON.stringify(output)}::jsonb`, completed_at: now, error: null })
      .where('run_id', '=', job.runId).where('node', '=', node).where('status', '=', 'RUNNING')
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) throw new Error(`step ${node} of run ${job.runId} was not running`);
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
    }).execute();
    await finishRun(trx, job.runId, 'AWAITING_APPROVAL', now, null);
  });
}

async function finishRun(trx: Transaction<DB>, runId: string, status: RunStatus, now: Date, error: string | null): Promise<void> {
  await trx.updateTable('runs')
    .set({ status, completed_at: now, updated_at: now, error, lease_owner: null, lease_expires_at: null })
    .where('id', '=', runId).execute();
}

/** A failed attempt that will be retried: the run goes back to the queue, due after `retryAt`. */
export async function retryStepLater(
  db: Kysely<DB>, job: { runId: string; workerId: string }, node: StepNode, error: string, now: Date, retryAt: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(job.runId);
    await trx.updateTable('run_steps').set({ status: 'PENDING', error })
      .where('run_id', '=', job.runId).where('node', '=', node).where('status', '=', 'RUNNING').execute();
    await trx.updateTable('runs').set({ available_at: retryAt, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('id', '=', job.runId).execute();
  });
}

/** A step that failed for good: it is FAILED, the steps after it SKIPPED, the run FAILED. */
export async function failRun(db: Kysely<DB>, job: { runId: string; workerId: string }, node: StepNode, error: string, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(job.runId);
    await trx.updateTable('run_steps').set({ status: 'FAILED', error, completed_at: now })
      .where('run_id', '=', job.runId).where('node', '=', node).execute();
    await trx.updateTable('run_steps').set({ status: 'SKIPPED' })
      .where('run_id', '=', job.runId).where('status', '=', 'PENDING').execute();
    await finishRun(trx, job.runId, 'FAILED', now, `${node} failed: ${error}`);
  });
}

/** Hands a run back at shutdown so another worker can take it at once. */
export async function releaseRun(db: Kysely<DB>, runId: string, workerId: string, now: Date): Promise<void> {
  await db.updateTable('runs').set({ lease_owner: null, lease_expires_at: null, available_at: now, updated_at: now })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING').execute();
}

// The lease a worker holds on its run (the run row is the job): every write after the claim checks it, so a worker
// that lost its run (it stalled, another took over, the run was cancelled) can never overwrite what happened since.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { LeaseLost } from '../../errors.ts';

export interface RunLease {
  runId: string;
  workspaceId: string;
  workerId: string;
}

/** Locks the run row for the rest of the transaction if this worker still holds it. */
async function holdsLease(trx: Transaction<DB>, runId: string, workerId: string): Promise<boolean> {
  const row = await trx.selectFrom('runs').select('id')
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING')
    .forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Runs `work` in a transaction that holds the run row, if this worker still holds the run's lease. */
export async function underLease<T>(db: Kysely<DB>, job: RunLease, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    if (!(await holdsLease(trx, job.runId, job.workerId))) throw new LeaseLost(`run ${job.runId}`);
    return work(trx);
  });
}

// A step's completion and the next step's start are one statement (a run's first start is one of its own): the lease
// is checked (and the run row locked) by the first CTE, and every write below it happens only when that check passed;
// the statement commits whole or not at all. Run events are numbered in the order written.
// The lease CTE also reads whether anyone follows the run's events: a follow (src/http/run-event-hub.ts) updates the
// run row, so either it waits for this statement's commit and then reads the events written, or this statement
// waits for it and, locking the row, reads the count it committed. A notice wakes followers only: without any, none
// is sent, since PostgreSQL commits notifying transactions one at a time.
// A completion's lease CTE also looks up whether the workspace has webhook endpoints (completeStep).
export const heldLease = (job: RunLease, { hooks = false } = {}) => sql`lease AS (
  SELECT id, followers${hooks ? sql`, EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = ${job.workspaceId} AND enabled) AS has_webhooks` : sql``}
  FROM runs WHERE id = ${job.runId} AND lease_owner = ${job.workerId} AND status = 'RUNNING' FOR UPDATE)`;
export const anyFollower = sql`EXISTS (SELECT 1 FROM lease WHERE followers > 0)`;

/** What a step statement answers: whether the lease held, whether the step was completed, the attempt it started. */
export interface StepWritten {
  held: number;
  completed: number;
  attempt: number | null;
}

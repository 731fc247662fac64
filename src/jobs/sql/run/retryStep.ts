import { sql, type Kysely } from 'kysely';
import type { StepNode } from '../../../schemas/outputs.ts';
import type { DB } from '../../../db/schema.ts';
import { applyTransition, STEP } from '../../../domain/runs/lifecycle.ts';
import { costOf, spendTokens, target, type AttemptCost } from './cost.ts';
import { underLease, type RunLease } from './lease.ts';

/**
 * A failed attempt that will be retried: the run goes back to the queue, due at `retryAt`. An attempt put off
 * (`counted: false`: the model endpoint asked to wait) is taken back from the step's attempts, so that waiting for
 * the provider does not use up the step's attempts; `refused` (the endpoint refused it) marks when the step was first
 * put off, which bounds the wait (handlers/run.ts). A counted attempt clears that mark: the endpoint answered.
 */
export async function retryStepLater(
  db: Kysely<DB>, job: RunLease, node: StepNode, attempt: number, error: string, cost: AttemptCost, now: Date, retryAt: Date,
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
      event: { node, attempt, error, deferred: !counted, ...costOf(cost) },
    });
    await trx.updateTable('runs').set({ available_at: retryAt, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('id', '=', job.runId).execute();
    await spendTokens(trx, job.runId, cost.usage);
  });
}

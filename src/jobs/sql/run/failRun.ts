import type { Kysely } from 'kysely';
import type { StepNode } from '../../../schemas/outputs.ts';
import type { DB } from '../../../db/schema.ts';
import { applyTransition, RUN, skipSteps, STEP } from '../../../domain/runs/lifecycle.ts';
import { costOf, spendTokens, target, type AttemptCost } from './cost.ts';
import { underLease, type RunLease } from './lease.ts';

/** A step that failed for good: it is FAILED, the steps after it SKIPPED, the run FAILED. */
export async function failRun(
  db: Kysely<DB>, job: RunLease, node: StepNode, attempt: number, error: string, cost: AttemptCost | null, now: Date,
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

// What one attempt at a step took: recorded on the step, its event and the run's tokens.
import type { Transaction } from 'kysely';
import type { EngineName, TokenUsage } from '../../../agent/engine.ts';
import type { DB } from '../../../db/schema.ts';
import type { RunLease } from './lease.ts';

/** What one attempt at a step took, recorded on the step and its event. */
export interface AttemptCost {
  engine: EngineName;
  model: string | null;
  usage: TokenUsage | null;
  durationMs: number;
}

/** Adds what an attempt spent to the run's tokens. */
export async function spendTokens(trx: Transaction<DB>, runId: string, usage: TokenUsage | null): Promise<void> {
  if (!usage || usage.totalTokens <= 0) return;
  await trx.updateTable('runs').set((eb) => ({ tokens_used: eb('tokens_used', '+', usage.totalTokens) })).where('id', '=', runId).execute();
}

/** The run a job works, as a transition names it. */
export const target = (job: RunLease, at: Date) => ({ workspaceId: job.workspaceId, runId: job.runId, at });

/** What an attempt took, as its event records it. */
export function costOf(cost: AttemptCost | null) {
  return { durationMs: cost?.durationMs ?? null, engine: cost?.engine ?? null, model: cost?.model ?? null, usage: cost?.usage ?? null };
}

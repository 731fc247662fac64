// The follow-up scheduler's job (DESIGN §13): one for the installation (its key is fixed), run every minute. Each run
// works passes of the scheduler (src/domain/sequences/scheduler.ts) until one finds less than a full batch, at most
// PASSES_MAX, so that a backlog (a Monday morning) is worked through in bounded steps and the rest waits a minute.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Engine } from '../../agent/engine.ts';
import type { ModelEngineOptions } from '../../agent/engines/model.ts';
import { writeFollowUp } from '../../agent/follow-up/index.ts';
import { runSchedulerPass } from '../../domain/sequences/scheduler.ts';
import { SEQUENCES_TICK } from '../../domain/sequences/tick.ts';
import { TICK_BATCH, type FollowUpWriter } from '../../domain/sequences/touches.ts';
import { enqueueJob } from '../sql/enqueueJob.ts';
import { exponentialBackoff } from '../retry.ts';
import type { JobHandler } from '../types.ts';

export { SEQUENCES_TICK };
const TICK_EVERY_MS = 60_000;
const PASSES_MAX = 10;

/** Queues the scheduler's job unless it is live already; every worker process calls it at start (as pruning). */
export async function scheduleSequenceTicks(db: Kysely<DB>, now: Date): Promise<boolean> {
  const job = await db.transaction().execute((trx) => enqueueJob(trx, {
    kind: SEQUENCES_TICK, key: SEQUENCES_TICK, workspaceId: null, payload: {}, maxAttempts: 100, availableAt: now,
  }));
  return job.created;
}

export interface TouchTickOptions {
  leaseMs: number;
  /** The installation's engine, asked for ANALYSIS and STRATEGY when a run has none recorded. */
  engine?: Engine;
  /** Follow-ups are written through this model when it is set (LLM_*), else offline. */
  model?: ModelEngineOptions;
  /** Tests write their own follow-ups. */
  write?: FollowUpWriter;
}

export function touchTickHandler(options: TouchTickOptions): JobHandler {
  return {
    kind: SEQUENCES_TICK,
    retry: exponentialBackoff(100, 60_000),
    concurrency: 1,
    leaseMs: options.leaseMs,
    async run(_job, ctx) {
      // WRITER's follow-up, its transcript work in the CPU pool, through the model when one is set.
      const write: FollowUpWriter = options.write ?? ((input) => writeFollowUp(input, {
        cpu: ctx.cpu, signal: ctx.signal, ...(options.engine ? { engine: options.engine } : {}), ...(options.model ? { model: options.model } : {}),
      }));
      for (let pass = 0; pass < PASSES_MAX; pass += 1) {
        const counts = await runSchedulerPass(ctx.db, ctx.clock, write, {
          signal: ctx.signal,
          onError: (touchId, error) => ctx.logger.warn({ touchId, err: error }, 'a follow-up could not be worked; it is tried again later'),
        });
        if (counts.written + counts.delivered + counts.failed > 0) ctx.logger.info(counts, 'follow-ups worked');
        if (counts.claimed < TICK_BATCH) break;
      }
      return { again: new Date(ctx.clock.now().getTime() + TICK_EVERY_MS) };
    },
  };
}

// The pruning of finished jobs: a periodic job of its own kind, one for the installation (its key is fixed), that
// deletes the jobs that ended long enough ago. DONE jobs are kept a week, to look into; DEAD ones a month, since a
// dead letter is what someone may still need to find.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { enqueueJob } from '../sql/enqueueJob.ts';
import { exponentialBackoff } from '../retry.ts';
import type { JobHandler } from '../types.ts';

export const PRUNE_KIND = 'jobs.prune';
export const DAY_MS = 24 * 60 * 60_000;
export const DONE_RETENTION_MS = 7 * DAY_MS;
export const DEAD_RETENTION_MS = 30 * DAY_MS;
const PRUNE_EVERY_MS = 60 * 60_000;
/** Rows one statement deletes: a long backlog is removed in short statements that other work can pass between. */
const BATCH = 5_000;

/**
 * Queues the pruning job unless it is queued or running already (the live-key index makes a second one a no-op).
 * Every worker process calls it at start, so that a pruning job that went DEAD comes back.
 */
export async function schedulePruning(db: Kysely<DB>, now: Date): Promise<boolean> {
  const job = await db.transaction().execute((trx) => enqueueJob(trx, {
    kind: PRUNE_KIND, key: PRUNE_KIND, workspaceId: null, payload: {}, maxAttempts: pruneHandler.retry.maxAttempts, availableAt: now,
  }));
  return job.created;
}

/** Deletes the jobs finished before their retention; returns how many. */
export async function pruneJobs(db: Kysely<DB>, now: Date, signal?: AbortSignal): Promise<number> {
  const doneBefore = new Date(now.getTime() - DONE_RETENTION_MS);
  const deadBefore = new Date(now.getTime() - DEAD_RETENTION_MS);
  let pruned = 0;
  for (;;) {
    signal?.throwIfAborted();
    const result = await sql`
      DELETE FROM jobs WHERE id IN (
        SELECT id FROM jobs
        WHERE (status = 'DONE' AND finished_at < ${doneBefore}::timestamptz) OR (status = 'DEAD' AND finished_at < ${deadBefore}::timestamptz)
        LIMIT ${BATCH})`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0n);
    pruned += deleted;
    if (deleted < BATCH) return pruned;
  }
}

export const pruneHandler: JobHandler = {
  kind: PRUNE_KIND,
  retry: exponentialBackoff(5, 60_000),
  concurrency: 1,
  leaseMs: 5 * 60_000,
  async run(_job, ctx) {
    const pruned = await pruneJobs(ctx.db, ctx.clock.now(), ctx.signal);
    if (pruned > 0) ctx.logger.info({ pruned }, 'finished jobs pruned');
    return { again: new Date(ctx.clock.now().getTime() + PRUNE_EVERY_MS) };
  },
};

import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { secondsWaited } from '../jobStats.ts';
import type { JobKindStats } from '../../types.ts';

/** The job kind of a run, in the job runner and on /metrics. */
export const RUN_KIND = 'run';

/** What /metrics shows of the runs as a queue: FAILED is a run's dead letter. Each count is read from its own index. */
export async function runStats(db: Kysely<DB>, now: Date): Promise<JobKindStats[]> {
  const { rows: [row] } = await sql<{ depth: number; oldest: Date | null; dead: number }>`
    SELECT (SELECT count(*) FROM runs WHERE status IN ('QUEUED', 'RUNNING'))::int AS depth,
           (SELECT min(available_at) FROM runs WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}::timestamptz) AS oldest,
           (SELECT count(*) FROM runs WHERE status = 'FAILED')::int AS dead`.execute(db);
  return [{ kind: RUN_KIND, depth: row?.depth ?? 0, dead: row?.dead ?? 0, oldestAgeSeconds: secondsWaited(row?.oldest ?? null, now) }];
}

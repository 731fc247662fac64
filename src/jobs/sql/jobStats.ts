import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { JobKindStats } from '../types.ts';

/** What /metrics shows of the `jobs` table, per kind. */
export async function jobStats(db: Kysely<DB>, now: Date): Promise<JobKindStats[]> {
  const { rows } = await sql<{ kind: string; depth: number; oldest: Date | null; dead: number }>`
    SELECT kind,
           count(*) FILTER (WHERE status IN ('QUEUED', 'RUNNING'))::int AS depth,
           min(available_at) FILTER (WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}::timestamptz) AS oldest,
           count(*) FILTER (WHERE status = 'DEAD')::int AS dead
    FROM jobs GROUP BY kind`.execute(db);
  return rows.map((r) => ({ kind: r.kind, depth: r.depth, dead: r.dead, oldestAgeSeconds: secondsWaited(r.oldest, now) }));
}

/** How long the oldest due job has waited, from when it became due; 0 when none is due. */
export function secondsWaited(dueSince: Date | null, now: Date): number {
  return dueSince ? Math.max(0, (now.getTime() - new Date(dueSince).getTime()) / 1000) : 0;
}

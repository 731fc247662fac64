import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** A periodic job's next run: queued again for `at`, its attempts counted afresh. */
export async function rescheduleJob(db: Kysely<DB>, id: string, owner: string, now: Date, at: Date): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'QUEUED', attempts = 0, available_at = ${at}::timestamptz, lease_owner = NULL, lease_expires_at = NULL,
      last_error = NULL, finished_at = NULL, updated_at = ${now}::timestamptz
    WHERE id = ${id} AND lease_owner = ${owner} AND status IN ('RUNNING', 'DONE')`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

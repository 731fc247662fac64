import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { held } from './claimJob.ts';

/**
 * Hands a job back, its claim not counted as an attempt: at shutdown or after an error so that another runner takes
 * it at once, or (`until`) when it has to wait for that time without being tried (JobOutcome's `wait`).
 */
export async function releaseJob(db: Kysely<DB>, id: string, owner: string, now: Date, until?: Date): Promise<void> {
  await sql`
    UPDATE jobs SET status = 'QUEUED', attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL,
      available_at = coalesce(${until ?? null}::timestamptz, available_at),
      updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(db);
}

import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { held } from './claimJob.ts';

/** Hands a job back at shutdown, its attempt not counted, so that another runner takes it at once. */
export async function releaseJob(db: Kysely<DB>, id: string, owner: string, now: Date): Promise<void> {
  await sql`
    UPDATE jobs SET status = 'QUEUED', attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL,
      updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(db);
}

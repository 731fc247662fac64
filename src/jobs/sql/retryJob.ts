import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { held } from './claimJob.ts';

/** A failed attempt: back to the queue, due at `availableAt`, with the error kept. */
export async function retryJob(db: Kysely<DB>, id: string, owner: string, now: Date, availableAt: Date, error: string): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'QUEUED', available_at = ${availableAt}::timestamptz, lease_owner = NULL, lease_expires_at = NULL,
      last_error = ${error}, updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

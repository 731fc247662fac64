import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { held } from './claimJob.ts';

/** The job failed for good: DEAD with its last error, in `trx` (where the handler's onDead records what it means). */
export async function killJob(trx: Transaction<DB>, id: string, owner: string, now: Date, error: string): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'DEAD', lease_expires_at = NULL, last_error = ${error}, finished_at = ${now}::timestamptz,
      updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(trx);
  return (result.numAffectedRows ?? 0n) > 0n;
}

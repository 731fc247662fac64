import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { held } from './claimJob.ts';

/** Marks the job DONE in `trx` if this runner still holds it. */
export async function finishJob(trx: Transaction<DB>, id: string, owner: string, now: Date): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'DONE', lease_expires_at = NULL, finished_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(trx);
  return (result.numAffectedRows ?? 0n) > 0n;
}

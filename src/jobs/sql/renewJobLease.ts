import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { prepare } from '../../db/database.ts';
import { held } from './claimJob.ts';

/** Extends the lease; false when the runner no longer holds the job. */
export async function renewJobLease(db: Kysely<DB>, id: string, owner: string, now: Date, leaseMs: number): Promise<boolean> {
  const result = await sql`
    ${prepare}UPDATE jobs SET lease_expires_at = ${new Date(now.getTime() + leaseMs)}::timestamptz WHERE ${held(id, owner)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

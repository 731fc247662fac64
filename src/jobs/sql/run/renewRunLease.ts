import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.ts';

/** Extends the lease; false when the worker no longer holds the run. */
export async function renewLease(db: Kysely<DB>, runId: string, workerId: string, now: Date, leaseMs: number): Promise<boolean> {
  const result = await db.updateTable('runs')
    .set({ lease_expires_at: new Date(now.getTime() + leaseMs) })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

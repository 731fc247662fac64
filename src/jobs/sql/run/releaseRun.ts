import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.ts';

/** Hands a run back at shutdown so another worker can take it at once. */
export async function releaseRun(db: Kysely<DB>, runId: string, workerId: string, now: Date): Promise<void> {
  await db.updateTable('runs').set({ lease_owner: null, lease_expires_at: null, available_at: now, updated_at: now })
    .where('id', '=', runId).where('lease_owner', '=', workerId).where('status', '=', 'RUNNING').execute();
}

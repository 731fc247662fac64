// The follow-up scheduler's job (src/jobs/handlers/touch-tick.ts) is one for the installation and runs every minute.
// A person waiting for a touch to be written (a response asked for, a follow-up to regenerate) should not wait for
// that minute: the job is brought forward to now, and its runners woken when the transaction commits.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { wakeRunners } from '../../jobs/sql/enqueueJob.ts';

export const SEQUENCES_TICK = 'sequences.tick';

/** Makes the scheduler's waiting job due at `now` (a running one finds the touch in its next pass, or the one after). */
export async function tickSoon(trx: Kysely<DB>, now: Date): Promise<void> {
  await sql`UPDATE jobs SET available_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
    WHERE kind = ${SEQUENCES_TICK} AND key = ${SEQUENCES_TICK} AND status = 'QUEUED' AND available_at > ${now}::timestamptz`.execute(trx);
  await wakeRunners(trx, SEQUENCES_TICK);
}

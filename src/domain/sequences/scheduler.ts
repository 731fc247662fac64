// One pass of the follow-up scheduler (DESIGN §13), run by the sequences.tick job (src/jobs/handlers/touch-tick.ts):
// pauses that ended resume, then the touches whose time came are worked: written a day ahead of their due time, or,
// auto ones, delivered when due. Everything is found by an index on time, at most `limit` of each a pass, so a pass
// costs what is due now, not what is enrolled.
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB } from '../../db/schema.ts';
import { resumeEnrolment } from './stops.ts';
import { claimReadyTouches, deliverDueTouch, endedPauses, TICK_BATCH, writeTouch, type FollowUpWriter } from './touches.ts';

export interface TickCounts { resumed: number; written: number; delivered: number; claimed: number; failed: number }

export async function runSchedulerPass(
  db: Kysely<DB>, clock: Clock, write: FollowUpWriter,
  options: { limit?: number; signal?: AbortSignal; onError?: (touchId: string, error: unknown) => void } = {},
): Promise<TickCounts> {
  const limit = options.limit ?? TICK_BATCH;
  const counts: TickCounts = { resumed: 0, written: 0, delivered: 0, claimed: 0, failed: 0 };
  for (const id of await endedPauses(db, clock.now(), limit)) {
    if (await db.transaction().execute((trx) => resumeEnrolment(trx, id, clock.now()))) counts.resumed += 1;
  }
  const touches = await claimReadyTouches(db, clock.now(), limit);
  counts.claimed = touches.length;
  for (const touch of touches) {
    options.signal?.throwIfAborted();
    try {
      if (touch.status === 'SCHEDULED') {
        if (await writeTouch(db, touch.id, write, clock)) counts.written += 1;
      } else if (touch.status === 'DRAFTED') {
        if (await db.transaction().execute((trx) => deliverDueTouch(trx, touch.id, clock.now()))) counts.delivered += 1;
      }
    } catch (error) {
      // One touch that fails (its writer's model down) holds up no other: it is claimed again when its claim runs out.
      if (options.signal?.aborted) throw error;
      counts.failed += 1;
      options.onError?.(touch.id, error);
    }
  }
  return counts;
}

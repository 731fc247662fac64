// Per-sender limits and the send window at the moment a delivery is claimed (DESIGN §14). Each sending address sends
// at most `dailyLimit` e-mails a local day and waits `minGapSeconds` between two; a follow-up leaves only inside the
// window. The address's `sender_counters` row is locked (FOR UPDATE) in the transaction that claims the delivery, which
// either takes a slot or puts the delivery back to wait, before anything reaches the SMTP server: however many worker
// processes claim deliveries of one sender at once, they take its slots one after another, and a delivery that finds
// none waits SCHEDULED for the next allowed time, with its job due then. Never dropped; a retry of a delivery that took
// its slot takes none again (slot_taken_at). The claim asks the suppression list and the delivery's sequence first
// (src/jobs/handlers/email-deliver.ts), so a delivery refused or cancelled there never counts against the limit.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, WaitingFor } from '../../db/schema.ts';
import { rescheduleJob } from '../../jobs/sql/rescheduleJob.ts';
import { applyTransition, DELIVERY } from '../runs/lifecycle.ts';
import { loadSendingSettings, type SendingSettings } from './settings.ts';
import { windowZoneOfRun } from './schedule.ts';
import { isInWindow, localDate, nextWindowStart, startOfNextDay } from './window.ts';

/** The most a gap is stretched at random, as a share of it, so that a sender's e-mails do not tick like a clock. */
const GAP_JITTER = 0.2;

export interface ClaimedDelivery {
  id: string;
  workspace_id: string;
  run_id: string;
  method: 'send' | 'mailbox';
}

export interface SendingClaim {
  clock: Clock;
  /** The runner holding the delivery's job, and the job: a delivery put back to wait takes its job with it. */
  owner: string;
  jobId: string;
  /** Random in [0, 1), for the gap's jitter; tests fix it. */
  random?: () => number;
}

/**
 * What the sending rules say of a claimed delivery: `go` (it holds a slot of its sender now, or needs none), `wait`
 * (put back SCHEDULED until `again`, its job with it), or `gone` (cancelled meanwhile, or the job taken over).
 */
export type SendingVerdict = { go: true } | { again: Date } | { gone: true };

interface Hold { at: Date; waitingFor: WaitingFor }

/**
 * Checks the send window and the sender's limits for a delivery its job has just claimed, and takes a slot of the
 * sender or puts the delivery back to wait, in `trx`: the claim's transaction, which begins the delivery when the
 * answer is `go`. Locks the delivery's row, then its sender's counter.
 */
export async function takeSendingSlot(trx: Kysely<DB>, claim: SendingClaim, delivery: ClaimedDelivery, fromAddress: string): Promise<SendingVerdict> {
  const row = await trx.selectFrom('email_deliveries')
    .select(['status', 'scheduled_for', 'waiting_for', 'respect_window', 'slot_taken_at'])
    .where('id', '=', delivery.id).forUpdate().executeTakeFirst();
  if (!row || !['SCHEDULED', 'QUEUED', 'DELIVERING'].includes(row.status)) return { gone: true };
  // A delivery that took its slot is a retry, or the takeover of a runner that died while sending.
  if (row.slot_taken_at !== null || row.status === 'DELIVERING') return { go: true };
  const now = claim.clock.now();
  const settings = await loadSendingSettings(trx, delivery.workspace_id);
  const zone = await windowZoneOfRun(trx, delivery.workspace_id, delivery.run_id, settings);
  const hold = (row.status === 'SCHEDULED' && row.scheduled_for && row.scheduled_for > now)
    // Woken early: a runner that died after putting it back left its job due at the old time.
    ? { at: row.scheduled_for, waitingFor: row.waiting_for ?? 'sendAt' }
    : row.respect_window && !isInWindow(now, settings.window, zone)
      ? { at: nextWindowStart(now, settings.window, zone), waitingFor: 'window' as const }
      : delivery.method === 'send' ? await takeSlot(trx, delivery, fromAddress, settings, zone, now, claim.random ?? Math.random) : null;
  if (hold) return putBack(trx, claim, delivery, hold, now);
  if (row.status === 'SCHEDULED') {
    await applyTransition(trx, DELIVERY.release, { ...targetOf(delivery), at: now, set: { waiting_for: null } });
  }
  return { go: true };
}

const targetOf = (delivery: ClaimedDelivery) => ({ workspaceId: delivery.workspace_id, runId: delivery.run_id, deliveryId: delivery.id });

/** Takes a slot of the sender (null), or says how long the delivery must wait for one. */
async function takeSlot(
  trx: Kysely<DB>, delivery: ClaimedDelivery, fromAddress: string, settings: SendingSettings, zone: string, now: Date, random: () => number,
): Promise<Hold | null> {
  const address = fromAddress.toLowerCase();
  const today = localDate(now, settings.timeZone);
  await trx.insertInto('sender_counters').values({ workspace_id: delivery.workspace_id, address, day: today, sent: 0, last_sent_at: null })
    .onConflict((oc) => oc.columns(['workspace_id', 'address']).doNothing()).execute();
  const counter = await trx.selectFrom('sender_counters').select([sql<string>`day::text`.as('day'), 'sent', 'last_sent_at'])
    .where('workspace_id', '=', delivery.workspace_id).where('address', '=', address).forUpdate().executeTakeFirstOrThrow();
  const sentToday = counter.day === today ? counter.sent : 0;
  if (sentToday >= settings.dailyLimit) {
    return { at: nextWindowStart(startOfNextDay(now, settings.timeZone), settings.window, zone), waitingFor: 'daily_limit' };
  }
  const gapMs = settings.minGapSeconds * 1000;
  if (counter.last_sent_at && now.getTime() < counter.last_sent_at.getTime() + gapMs) {
    const at = new Date(counter.last_sent_at.getTime() + gapMs * (1 + GAP_JITTER * random()));
    return { at, waitingFor: 'gap' };
  }
  await trx.updateTable('sender_counters').set({ day: today, sent: sentToday + 1, last_sent_at: now })
    .where('workspace_id', '=', delivery.workspace_id).where('address', '=', address).execute();
  await trx.updateTable('email_deliveries').set({ slot_taken_at: now }).where('id', '=', delivery.id).execute();
  return null;
}

/** Puts the delivery back SCHEDULED until `hold.at`, its job due then; `gone` when the job is no longer this runner's. */
async function putBack(trx: Kysely<DB>, claim: SendingClaim, delivery: ClaimedDelivery, hold: Hold, now: Date): Promise<SendingVerdict> {
  if (!(await rescheduleJob(trx, claim.jobId, claim.owner, now, hold.at))) return { gone: true };
  await applyTransition(trx, DELIVERY.hold, {
    ...targetOf(delivery), at: now, set: { scheduled_for: hold.at, waiting_for: hold.waitingFor },
  });
  return { again: hold.at };
}

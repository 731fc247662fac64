// When an approved e-mail leaves (DESIGN §14): at once, unless the approval says `"sendAt": "next_window"` or an
// instant; then its delivery waits SCHEDULED until that time, and its job is due then.
import type { Kysely } from 'kysely';
import type { DB, WaitingFor } from '../../db/schema.ts';
import { invalid } from '../errors.ts';
import { loadSendingSettings, type SendingSettings } from './settings.ts';
import { nextWindowStart } from './window.ts';

export type SendAt = 'next_window' | Date;

/** How far in the past a `sendAt` may be and still mean "now": clocks of client and server differ a little. */
export const SEND_AT_SKEW_MS = 60_000;

/** The zone the window of a run's lead is kept in: the lead's own, else the workspace's. */
export async function windowZoneOfRun(db: Kysely<DB>, workspaceId: string, runId: string, settings: SendingSettings): Promise<string> {
  const lead = await db.selectFrom('runs as r')
    .innerJoin('leads as l', (join) => join.onRef('l.id', '=', 'r.lead_id').onRef('l.workspace_id', '=', 'r.workspace_id'))
    .select('l.time_zone').where('r.workspace_id', '=', workspaceId).where('r.id', '=', runId).executeTakeFirst();
  return lead?.time_zone ?? settings.timeZone;
}

/**
 * What an approval's `sendAt` means for its delivery: when it waits until, and for what; null to send at once (the
 * window is open now, or the instant is now). An instant further in the past than the skew is refused, before
 * anything is approved.
 */
export async function scheduleOfApproval(
  trx: Kysely<DB>, workspaceId: string, runId: string, sendAt: SendAt, now: Date,
): Promise<{ at: Date; waitingFor: WaitingFor } | null> {
  if (sendAt === 'next_window') {
    const settings = await loadSendingSettings(trx, workspaceId);
    const at = nextWindowStart(now, settings.window, await windowZoneOfRun(trx, workspaceId, runId, settings));
    return at.getTime() > now.getTime() ? { at, waitingFor: 'window' } : null;
  }
  if (sendAt.getTime() < now.getTime() - SEND_AT_SKEW_MS) throw invalid('sendAt', 'must not be in the past');
  return sendAt.getTime() > now.getTime() ? { at: sendAt, waitingFor: 'sendAt' } : null;
}

/** The body's `sendAt`: `next_window` or an RFC 3339 instant (the schema checked its form). */
export function sendAtOf(value: string | undefined): SendAt | undefined {
  if (value === undefined) return undefined;
  return value === 'next_window' ? value : new Date(value);
}

// A workspace's send window, time zone and per-sender limits (DESIGN §14), set by its admins in Settings / E-mail.
// Without a row, the defaults: Monday to Friday 08:00-18:00 UTC, 50 e-mails a day per sending address, 90 s apart.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB } from '../../db/schema.ts';
import type { AuditDetails } from '../audit/audit.ts';
import { invalid } from '../errors.ts';
import { canonicalTimeZone } from './time-zones.ts';
import { DEFAULT_WINDOW, localDate, type SendWindow } from './window.ts';

export const DAILY_LIMIT_MIN = 1;
export const DAILY_LIMIT_MAX = 2000;
export const MIN_GAP_MAX = 86_400;

export interface SendingSettings {
  window: SendWindow;
  /** The workspace's zone: the window's for a lead without one, and the day a sender's count belongs to. */
  timeZone: string;
  dailyLimit: number;
  minGapSeconds: number;
}

export const DEFAULT_SENDING: SendingSettings = { window: DEFAULT_WINDOW, timeZone: 'UTC', dailyLimit: 50, minGapSeconds: 90 };

/** The settings as Settings / E-mail shows them: the window's hours as `HH:MM`, and each sender's count today. */
export interface SendingSettingsView {
  days: number[];
  start: string;
  end: string;
  timeZone: string;
  dailyLimit: number;
  minGapSeconds: number;
  updatedAt: Date | null;
  senders: Array<{ address: string; sentToday: number; lastSentAt: Date | null }>;
}

export interface SendingSettingsInput {
  days?: number[];
  start?: string;
  end?: string;
  timeZone?: string;
  dailyLimit?: number;
  minGapSeconds?: number;
}

export async function loadSendingSettings(db: Kysely<DB>, workspaceId: string): Promise<SendingSettings> {
  const row = await db.selectFrom('sending_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!row) return DEFAULT_SENDING;
  return {
    window: { days: row.window_days.map(Number), start: row.window_start, end: row.window_end },
    timeZone: row.time_zone, dailyLimit: row.daily_limit, minGapSeconds: row.min_gap_seconds,
  };
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** `08:00` as minutes after midnight; `24:00` is the end of the day. */
function minutesOf(field: string, value: string): number {
  const match = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(value);
  const minutes = match ? Number(match[1]) * 60 + Number(match[2]) : NaN;
  if (!(minutes >= 0 && minutes <= 1440)) throw invalid(field, 'must be a time of day such as 08:00 (24:00 for midnight at the end)');
  return minutes;
}

export async function getSendingSettingsView(db: Kysely<DB>, workspaceId: string, clock: Clock): Promise<SendingSettingsView> {
  const settings = await loadSendingSettings(db, workspaceId);
  const row = await db.selectFrom('sending_settings').select('updated_at').where('workspace_id', '=', workspaceId).executeTakeFirst();
  const today = localDate(clock.now(), settings.timeZone);
  const senders = await db.selectFrom('sender_counters')
    .select(['address', 'sent', 'last_sent_at', sql<string>`day::text`.as('day')])
    .where('workspace_id', '=', workspaceId).orderBy('address').limit(100).execute();
  return {
    days: [...settings.window.days], start: hhmm(settings.window.start), end: hhmm(settings.window.end),
    timeZone: settings.timeZone, dailyLimit: settings.dailyLimit, minGapSeconds: settings.minGapSeconds,
    updatedAt: row?.updated_at ?? null,
    senders: senders.map((s) => ({ address: s.address, sentToday: s.day === today ? s.sent : 0, lastSentAt: s.last_sent_at })),
  };
}

/** Checks and saves a change (inside a transaction); answers the settings as they now are and what the audit records. */
export async function changeSendingSettings(
  trx: Kysely<DB>, workspaceId: string, input: SendingSettingsInput, userId: string | null, clock: Clock,
): Promise<{ view: SendingSettingsView; details: AuditDetails }> {
  const before = await loadSendingSettings(trx, workspaceId);
  const days = input.days ? [...new Set(input.days)].sort() : [...before.window.days];
  if (days.length === 0) throw invalid('days', 'must hold at least one day');
  const start = input.start === undefined ? before.window.start : minutesOf('start', input.start);
  const end = input.end === undefined ? before.window.end : minutesOf('end', input.end);
  if (start >= end || start >= 1440) throw invalid('end', 'must be later than start');
  const timeZone = input.timeZone === undefined ? before.timeZone : canonicalTimeZone(input.timeZone);
  if (!timeZone) throw invalid('timeZone', 'must be an IANA time zone name such as Europe/Berlin');
  const row = {
    window_days: days, window_start: start, window_end: end, time_zone: timeZone,
    daily_limit: input.dailyLimit ?? before.dailyLimit, min_gap_seconds: input.minGapSeconds ?? before.minGapSeconds,
    updated_at: clock.now(), updated_by_user_id: userId,
  };
  await trx.insertInto('sending_settings').values({ workspace_id: workspaceId, ...row })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(row)).execute();
  const changed = Object.keys(input).filter((field) => input[field as keyof SendingSettingsInput] !== undefined).sort().join(',');
  return { view: await getSendingSettingsView(trx, workspaceId, clock), details: { changed } };
}

// Outcomes (DESIGN §16): what the workspace's e-mails led to, by week, sender, STRATEGY's angle or sequence step,
// counted from what was recorded: the deliveries (each e-mail sent over SMTP, when it was sent, by whom, BOUNCED when a
// bounce came back) and the replies found to them, with their class. Nothing is tracked to count it: no pixel, no
// rewritten link, so there are no opens or clicks.
//
// Per e-mail sent in the range: `replied` when a person answered it (any class but out_of_office, auto_reply and
// bounce), `interested`, `unsubscribed` by a reply of that class, `bounced` when its delivery is BOUNCED or a bounce
// answered it; `delivered` is sent less bounced; `won` counts the e-mails whose lead is WON now. `replyRate` is replied
// over delivered; `medianHoursToReply` the median time from sending to the first person's reply. Weeks start on Monday
// in the workspace's time zone; `from` and `to` are days there, both included.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalid } from '../errors.ts';
import { GROUP_BYS } from '../../schemas/analytics.ts';
import { startOfDay } from '../replies/effects.ts';
import { loadSendingSettings } from '../sending/settings.ts';

export { GROUP_BYS };
export type GroupBy = (typeof GROUP_BYS)[number];

export interface OutreachRow {
  group: string;
  sent: number;
  delivered: number;
  bounced: number;
  replied: number;
  interested: number;
  unsubscribed: number;
  won: number;
  replyRate: number;
  medianHoursToReply: number | null;
}

export interface OutreachQuery {
  from?: string | undefined;
  to?: string | undefined;
  groupBy: GroupBy;
  /** IANA zone the weeks and days are in: the workspace's. */
  timeZone: string;
}

/** The range when none is asked for: the last 12 weeks, this one included. */
export const DEFAULT_WEEKS = 12;
/** The longest range one request may ask for. */
export const MAX_DAYS = 3 * 366;
const DAY_MS = 86_400_000;

/** The label of each group, from the columns of outreach_outcomes `o` (and the sender `u`); week is bucketed apart. */
const GROUP_SQL: Record<Exclude<GroupBy, 'week'>, RawBuilder<string>> = {
  sender: sql<string>`coalesce(u.email, u.removed_email, 'No sender')`,
  angle: sql<string>`coalesce(o.angle, 'No angle')`,
  sequenceStep: sql<string>`o.step::text`,
};

function dayOf(field: string, text: string): string {
  const date = new Date(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text) {
    throw invalid(field, 'must be a date (2026-03-01)');
  }
  return text;
}

/** Today in `timeZone`, `YYYY-MM-DD`. */
export function todayIn(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
/** The Monday of the week `day` is in. */
export const mondayOf = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));

/** The days asked for, checked, with the defaults filled in. */
export function rangeOf(query: Pick<OutreachQuery, 'from' | 'to' | 'timeZone'>, now: Date): { from: string; to: string } {
  const to = query.to ? dayOf('to', query.to) : todayIn(now, query.timeZone);
  const from = query.from ? dayOf('from', query.from) : addDays(mondayOf(to), -7 * (DEFAULT_WEEKS - 1));
  if (from > to) throw invalid('from', 'must not be after to');
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS >= MAX_DAYS) throw invalid('from', `must be at most ${MAX_DAYS} days before to`);
  return { from, to };
}

/** The Mondays of the weeks the range touches, oldest first. */
const mondaysOf = (from: string, to: string) => {
  const mondays: string[] = [];
  for (let week = mondayOf(from); week <= to; week = addDays(week, 7)) mondays.push(week);
  return mondays;
};

/**
 * The outreach figures per group, in the order of the groups (weeks oldest first, every week of the range shown).
 * Read from outreach_outcomes (migration 0057), which triggers keep as the deliveries and replies change: one row per
 * e-mail sent, so a range is one index scan, without the replies, the STRATEGY steps or the deliveries themselves.
 */
export async function outreach(db: Kysely<DB>, workspaceId: string, query: OutreachQuery, now: Date): Promise<{ from: string; to: string; data: OutreachRow[] }> {
  const { from, to } = rangeOf(query, now);
  const zone = query.timeZone;
  // The range's instants: midnight in the zone at its first day and after its last.
  const start = startOfDay(from, zone).toISOString();
  const end = startOfDay(addDays(to, 1), zone).toISOString();
  const mondays = mondaysOf(from, to);
  // A week is found among the instants its Mondays start at by a binary search, not by turning every e-mail's instant
  // into the zone's wall clock: the same weeks, a fraction of the work at 100,000 e-mails.
  const group = query.groupBy === 'week'
    ? sql<number>`width_bucket(o.sent_at, ${mondays.map((day) => startOfDay(day, zone).toISOString())}::timestamptz[])`
    : GROUP_SQL[query.groupBy];
  const rowsOfRange = sql`outreach_outcomes o ${query.groupBy === 'sender' ? sql`LEFT JOIN users u ON u.id = o.sender_user_id` : sql``}`;
  const inRange = sql`o.workspace_id = ${workspaceId} AND o.sent_at >= ${start}::timestamptz AND o.sent_at < ${end}::timestamptz`;
  // The counts are hashed by group in one pass over the range; the median, which must sort, sorts only the e-mails
  // replied to (a fifth of them), in a second pass that skips the others.
  const statement = sql<{
    grp: string | number; sent: string; bounced: string; replied: string; interested: string; unsubscribed: string; won: string;
    median_hours: number | null;
  }>`
    WITH counted AS (
      SELECT ${group} AS grp, count(*) AS sent, count(*) FILTER (WHERE o.bounced) AS bounced, count(o.first_reply_at) AS replied,
        count(*) FILTER (WHERE o.interested) AS interested, count(*) FILTER (WHERE o.unsubscribed) AS unsubscribed, count(w.id) AS won
      FROM ${rowsOfRange}
      -- The WON leads: a few, looked up by hash, where joining every e-mail's lead would read 100,000 leads.
      LEFT JOIN (SELECT id FROM leads WHERE workspace_id = ${workspaceId} AND status = 'WON') w ON w.id = o.lead_id
      WHERE ${inRange}
      GROUP BY 1
    ), medians AS (
      SELECT ${group} AS grp, percentile_cont(0.5) WITHIN GROUP (ORDER BY greatest(extract(epoch FROM o.first_reply_at - o.sent_at), 0) / 3600) AS median_hours
      FROM ${rowsOfRange}
      WHERE ${inRange} AND o.first_reply_at IS NOT NULL
      GROUP BY 1
    )
    SELECT c.*, m.median_hours FROM counted c LEFT JOIN medians m ON m.grp = c.grp`;
  const rows = await statement.execute(db);

  const data = rows.rows.map((row): OutreachRow => {
    const sent = Number(row.sent);
    const bounced = Number(row.bounced);
    const delivered = sent - bounced;
    const replied = Number(row.replied);
    return {
      group: query.groupBy === 'week' ? mondays[Number(row.grp) - 1]! : String(row.grp), sent, delivered, bounced, replied,
      interested: Number(row.interested), unsubscribed: Number(row.unsubscribed), won: Number(row.won),
      replyRate: delivered === 0 ? 0 : Math.round((replied / delivered) * 10_000) / 10_000,
      medianHoursToReply: row.median_hours === null ? null : Math.round(Number(row.median_hours) * 10) / 10,
    };
  });
  if (query.groupBy === 'week') return { from, to, data: everyWeek(mondays, data) };
  // Other groups: the most e-mails first, then by name.
  data.sort((a, b) => b.sent - a.sent || a.group.localeCompare(b.group));
  return { from, to, data };
}

/** Every week of the range, a week without e-mails at zero: a chart of the weeks has no gaps. */
function everyWeek(mondays: string[], rows: OutreachRow[]): OutreachRow[] {
  const byWeek = new Map(rows.map((row) => [row.group, row]));
  return mondays.map((week) => byWeek.get(week) ?? {
    group: week, sent: 0, delivered: 0, bounced: 0, replied: 0, interested: 0, unsubscribed: 0, won: 0, replyRate: 0, medianHoursToReply: null,
  });
}

/** The time zone the workspace's weeks and days are counted in: its sending settings' (DESIGN §14), UTC without them. */
export async function workspaceTimeZone(db: Kysely<DB>, workspaceId: string): Promise<string> {
  return (await loadSendingSettings(db, workspaceId)).timeZone;
}

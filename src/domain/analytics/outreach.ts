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

/**
 * The sequence step of delivery `e`: 1 for the first e-mail of a thread. Sequences (DESIGN §13) number their touches;
 * until their tables are merged every delivery is the first touch. The merger points this at the touch's number.
 */
export const SEQUENCE_STEP_SQL: RawBuilder<number> = sql<number>`1`;

const GROUP_SQL: Record<GroupBy, (zone: string) => RawBuilder<string>> = {
  week: (zone) => sql<string>`date_trunc('week', d.delivered_at AT TIME ZONE ${zone})::date::text`,
  sender: () => sql<string>`coalesce(u.email, u.removed_email, 'No sender')`,
  angle: () => sql<string>`coalesce(nullif(btrim(st.output->>'angle'), ''), 'No angle')`,
  sequenceStep: () => sql<string>`(${SEQUENCE_STEP_SQL})::text`,
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

/** The outreach figures per group, in the order of the groups (weeks oldest first, every week of the range shown). */
export async function outreach(db: Kysely<DB>, workspaceId: string, query: OutreachQuery, now: Date): Promise<{ from: string; to: string; data: OutreachRow[] }> {
  const { from, to } = rangeOf(query, now);
  const zone = query.timeZone;
  const group = GROUP_SQL[query.groupBy](zone);
  // The range's instants: midnight in the zone at its first day and after its last.
  const start = startOfDay(from, zone).toISOString();
  const end = startOfDay(addDays(to, 1), zone).toISOString();
  const needs = { sender: query.groupBy === 'sender', angle: query.groupBy === 'angle' };
  const statement = sql<{
    grp: string; sent: string; delivered: string; bounced: string; replied: string; interested: string; unsubscribed: string; won: string;
    median_hours: number | null;
  }>`
    SELECT grp, count(*) AS sent, count(*) FILTER (WHERE NOT bounced) AS delivered, count(*) FILTER (WHERE bounced) AS bounced,
      count(*) FILTER (WHERE replied) AS replied, count(*) FILTER (WHERE interested) AS interested,
      count(*) FILTER (WHERE unsubscribed) AS unsubscribed, count(*) FILTER (WHERE won) AS won,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY hours) FILTER (WHERE replied) AS median_hours
    FROM (
      SELECT ${group} AS grp, d.status = 'BOUNCED' OR coalesce(s.bounced, false) AS bounced, s.first_reply IS NOT NULL AS replied,
        coalesce(s.interested, false) AS interested, coalesce(s.unsubscribed, false) AS unsubscribed, w.id IS NOT NULL AS won,
        greatest(extract(epoch FROM s.first_reply - d.delivered_at), 0) / 3600 AS hours
      FROM email_deliveries d
      -- Only the runs of WON leads are joined: a few, where every run of the range would be a 100,000-row hash.
      LEFT JOIN (
        SELECT r.id FROM leads wl JOIN runs r ON r.lead_id = wl.id AND r.workspace_id = ${workspaceId}
        WHERE wl.workspace_id = ${workspaceId} AND wl.status = 'WON'
      ) w ON w.id = d.run_id
      LEFT JOIN (
        -- The replies of the range: a reply comes after the e-mail it answers (a day's leeway for a sender's clock).
        SELECT p.delivery_id,
          min(p.received_at) FILTER (WHERE p.classification NOT IN ('out_of_office', 'auto_reply', 'bounce')) AS first_reply,
          bool_or(p.classification = 'interested') AS interested,
          bool_or(p.classification = 'unsubscribe') AS unsubscribed,
          bool_or(p.classification = 'bounce') AS bounced
        FROM email_replies p
        WHERE p.workspace_id = ${workspaceId} AND p.received_at >= ${start}::timestamptz - interval '1 day'
        GROUP BY p.delivery_id
      ) s ON s.delivery_id = d.id
      ${needs.sender ? sql`LEFT JOIN users u ON u.id = d.sender_user_id` : sql``}
      ${needs.angle ? sql`LEFT JOIN run_steps st ON st.run_id = d.run_id AND st.node = 'STRATEGY'` : sql``}
      WHERE d.workspace_id = ${workspaceId} AND d.method = 'send' AND d.status IN ('DELIVERED', 'BOUNCED')
        AND d.delivered_at >= ${start}::timestamptz AND d.delivered_at < ${end}::timestamptz
    ) counted
    GROUP BY grp ORDER BY grp`;
  const rows = await statement.execute(db);

  const data = rows.rows.map((row): OutreachRow => {
    const delivered = Number(row.delivered);
    const replied = Number(row.replied);
    return {
      group: row.grp, sent: Number(row.sent), delivered, bounced: Number(row.bounced), replied,
      interested: Number(row.interested), unsubscribed: Number(row.unsubscribed), won: Number(row.won),
      replyRate: delivered === 0 ? 0 : Math.round((replied / delivered) * 10_000) / 10_000,
      medianHoursToReply: row.median_hours === null ? null : Math.round(Number(row.median_hours) * 10) / 10,
    };
  });
  if (query.groupBy === 'week') return { from, to, data: everyWeek(from, to, data) };
  // Other groups: the most e-mails first, then by name.
  data.sort((a, b) => b.sent - a.sent || a.group.localeCompare(b.group));
  return { from, to, data };
}

/** Every week of the range, a week without e-mails at zero: a chart of the weeks has no gaps. */
function everyWeek(from: string, to: string, rows: OutreachRow[]): OutreachRow[] {
  const byWeek = new Map(rows.map((row) => [row.group, row]));
  const weeks: OutreachRow[] = [];
  for (let week = mondayOf(from); week <= to; week = addDays(week, 7)) {
    weeks.push(byWeek.get(week) ?? {
      group: week, sent: 0, delivered: 0, bounced: 0, replied: 0, interested: 0, unsubscribed: 0, won: 0, replyRate: 0, medianHoursToReply: null,
    });
  }
  return weeks;
}

/**
 * The time zone the workspace's weeks are counted in. Workspaces gain a time-zone setting with DESIGN §14; until it
 * is merged it is UTC, and the merger reads the setting here.
 */
export async function workspaceTimeZone(_db: Kysely<DB>, _workspaceId: string): Promise<string> {
  return 'UTC';
}

// A workspace's plan and what it has used this month, for Settings / Plan and usage.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, Plan } from '../../db/schema.ts';
import { monthStart, monthUsage } from '../runs/start.ts';

export interface Usage {
  plan: Plan;
  /** Runs a month on the plan; null when unlimited. */
  limit: number | null;
  used: number;
  resetsAt: Date;
  /** Runs started each day of this month (UTC), up to today. */
  days: { date: string; runs: number }[];
}

export async function workspaceUsage(db: Kysely<DB>, workspaceId: string, freePlanMonthlyRuns: number, clock: Clock): Promise<Usage> {
  const now = clock.now();
  const start = monthStart(now);
  const workspace = await db.selectFrom('workspaces').select('plan').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  const perDay = await sql<{ day: string; runs: number }>`
    SELECT to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS runs
    FROM runs WHERE workspace_id = ${workspaceId} AND started_at >= ${start} AND started_at < ${monthStart(now, 1)}
    GROUP BY 1`.execute(db);
  const counted = new Map(perDay.rows.map((r) => [r.day, r.runs]));
  const days: { date: string; runs: number }[] = [];
  for (let day = new Date(start); day <= now; day = new Date(day.getTime() + 86_400_000)) {
    const date = day.toISOString().slice(0, 10);
    days.push({ date, runs: counted.get(date) ?? 0 });
  }
  return {
    plan: workspace.plan,
    limit: workspace.plan === 'FREE' ? freePlanMonthlyRuns : null,
    // A Free workspace's count of its limit; for other plans, the month's runs counted above.
    used: workspace.plan === 'FREE' ? await monthUsage(db, workspaceId, now) : perDay.rows.reduce((sum, r) => sum + r.runs, 0),
    resetsAt: monthStart(now, 1),
    days,
  };
}

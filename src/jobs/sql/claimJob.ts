// Claims the oldest due job of a kind for a runner, under a lease. Its pieces serve every claim of the `jobs`
// table (the fair claim of webhook deliveries, src/domain/webhooks/claim.ts).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { prepare } from '../../db/database.ts';
import type { ClaimedJob } from '../types.ts';

/** A claimed job's row as claimJob and every other claim of the `jobs` table return it. */
export interface ClaimedJobRow {
  id: string;
  kind: string;
  key: string | null;
  workspace_id: string | null;
  payload: unknown;
  attempts: number;
  max_attempts: number;
}

/** What a claim sets on the job it takes: RUNNING under this runner's lease, the attempt counted. */
export const claimedBy = (owner: string, now: Date, leaseMs: number) => sql`status = 'RUNNING', attempts = attempts + 1,
  lease_owner = ${owner}, lease_expires_at = ${new Date(now.getTime() + leaseMs)}::timestamptz,
  updated_at = ${now}::timestamptz`;

/** What a claim returns of the job it took (with `RETURNING ${claimedColumns}`). */
export const claimedColumns = sql`id, kind, key, workspace_id, payload, attempts, max_attempts`;

/** A job is due when queued and its time has come, or running under a lease that ran out (its runner died). */
export const dueJob = (now: Date, alias?: string) => {
  const column = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  return sql`${column('status')} IN ('QUEUED', 'RUNNING') AND ${column('available_at')} <= ${now}::timestamptz
    AND (${column('lease_expires_at')} IS NULL OR ${column('lease_expires_at')} < ${now}::timestamptz)`;
};

export function claimedJobOf(row: ClaimedJobRow): ClaimedJob {
  return {
    id: row.id, kind: row.kind, key: row.key, workspaceId: row.workspace_id, payload: row.payload,
    attempt: row.attempts, maxAttempts: row.max_attempts,
  };
}

/**
 * Takes the oldest due job of `kind`: queued and due, or running under a lease that ran out (its runner died).
 * The attempt is counted at the claim, so a job whose runner keeps dying still reaches its last attempt.
 */
export async function claimJob(db: Kysely<DB>, kind: string, owner: string, now: Date, leaseMs: number): Promise<ClaimedJob | null> {
  return claimOldestDue(db, sql`kind = ${kind}`, owner, now, leaseMs, prepare);
}

/**
 * Takes the oldest due job of those `which` picks (a condition over `jobs`), as claimJob does. `head` goes first in
 * the statement: `prepare` when its text is fixed.
 */
export async function claimOldestDue(
  db: Kysely<DB>, which: RawBuilder<unknown>, owner: string, now: Date, leaseMs: number, head = sql.raw(''),
): Promise<ClaimedJob | null> {
  const { rows: [row] } = await sql<ClaimedJobRow>`
    ${head}UPDATE jobs SET ${claimedBy(owner, now, leaseMs)}
    WHERE id = (
      SELECT id FROM jobs
      WHERE ${which} AND ${dueJob(now)}
      ORDER BY available_at, created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING ${claimedColumns}`.execute(db);
  return row ? claimedJobOf(row) : null;
}

/** The job `id` while `owner` holds its lease: every write after the claim names it. */
export const held = (id: string, owner: string) => sql`id = ${id} AND lease_owner = ${owner} AND status = 'RUNNING'`;

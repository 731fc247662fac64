// The queries of the job mechanism (runner.ts moves jobs with them). Every write after the claim names the runner
// that holds the lease, so a runner that lost a job (it stalled and another took over, or the job was erased) can
// never overwrite what happened since.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { prepare } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { ClaimedJob, JobKindStats, JobSource } from './types.ts';

/** Wakes idle runners: the notice holds the kind of the job that became due. */
export const JOBS_CHANNEL = 'leadrun_jobs';

export interface EnqueueJobInput {
  kind: string;
  /** Unique among the live (QUEUED or RUNNING) jobs of its kind: one delivery job per delivery. */
  key?: string | null;
  workspaceId: string | null;
  /** The lane a kind with a fair claim takes the job from in turn with other lanes' (a delivery's endpoint). */
  lane?: string | null;
  payload: unknown;
  maxAttempts: number;
  availableAt: Date;
  /** When the job is made; the available time when left out. */
  now?: Date;
}

export interface EnqueuedJob {
  id: string;
  /** False when a live job of the kind already had the key: that job is the one answered. */
  created: boolean;
}

/**
 * Adds a job inside the caller's transaction, so that it exists exactly when the change that asks for it commits;
 * the wake-up notice goes out at commit too. A live job of the kind with the same key is answered instead.
 */
export async function enqueueJob(trx: Kysely<DB>, input: EnqueueJobInput): Promise<EnqueuedJob> {
  const id = randomUUID();
  const now = input.now ?? input.availableAt;
  const key = input.key ?? null;
  const { rows: [inserted] } = await sql<{ id: string }>`
    INSERT INTO jobs (id, workspace_id, kind, key, lane, payload, status, attempts, max_attempts, available_at,
                      created_at, updated_at)
    VALUES (${id}, ${input.workspaceId}::uuid, ${input.kind}, ${key}, ${input.lane ?? null},
            ${JSON.stringify(input.payload ?? {})}::jsonb, 'QUEUED', 0, ${input.maxAttempts}::int,
            ${input.availableAt}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (kind, key) WHERE key IS NOT NULL AND status IN ('QUEUED', 'RUNNING') DO NOTHING
    RETURNING id`.execute(trx);
  if (inserted) {
    await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${input.kind})`.execute(trx);
    return { id: inserted.id, created: true };
  }
  const existing = await trx.selectFrom('jobs').select('id')
    .where('kind', '=', input.kind).where('key', '=', key).where('status', 'in', ['QUEUED', 'RUNNING'])
    .executeTakeFirst();
  if (existing) return { id: existing.id, created: false };
  // The live job it conflicted with ended between the two statements: the key is free again.
  return enqueueJob(trx, input);
}

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
  const { rows: [row] } = await sql<ClaimedJobRow>`
    ${prepare}UPDATE jobs SET ${claimedBy(owner, now, leaseMs)}
    WHERE id = (
      SELECT id FROM jobs
      WHERE kind = ${kind} AND ${dueJob(now)}
      ORDER BY available_at, created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING ${claimedColumns}`.execute(db);
  return row ? claimedJobOf(row) : null;
}

const held = (id: string, owner: string) => sql`id = ${id} AND lease_owner = ${owner} AND status = 'RUNNING'`;

/** Extends the lease; false when the runner no longer holds the job. */
export async function renewJobLease(db: Kysely<DB>, id: string, owner: string, now: Date, leaseMs: number): Promise<boolean> {
  const result = await sql`
    ${prepare}UPDATE jobs SET lease_expires_at = ${new Date(now.getTime() + leaseMs)}::timestamptz WHERE ${held(id, owner)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Marks the job DONE in `trx` if this runner still holds it. */
export async function finishJob(trx: Transaction<DB>, id: string, owner: string, now: Date): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'DONE', lease_expires_at = NULL, finished_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(trx);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** A failed attempt: back to the queue, due at `availableAt`, with the error kept. */
export async function retryJob(db: Kysely<DB>, id: string, owner: string, now: Date, availableAt: Date, error: string): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'QUEUED', available_at = ${availableAt}::timestamptz, lease_owner = NULL, lease_expires_at = NULL,
      last_error = ${error}, updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** The job failed for good: DEAD with its last error, in `trx` (where the handler's onDead records what it means). */
export async function killJob(trx: Transaction<DB>, id: string, owner: string, now: Date, error: string): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'DEAD', lease_expires_at = NULL, last_error = ${error}, finished_at = ${now}::timestamptz,
      updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(trx);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** A periodic job's next run: queued again for `at`, its attempts counted afresh. */
export async function rescheduleJob(db: Kysely<DB>, id: string, owner: string, now: Date, at: Date): Promise<boolean> {
  const result = await sql`
    UPDATE jobs SET status = 'QUEUED', attempts = 0, available_at = ${at}::timestamptz, lease_owner = NULL, lease_expires_at = NULL,
      last_error = NULL, finished_at = NULL, updated_at = ${now}::timestamptz
    WHERE id = ${id} AND lease_owner = ${owner} AND status IN ('RUNNING', 'DONE')`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Hands a job back at shutdown, its attempt not counted, so that another runner takes it at once. */
export async function releaseJob(db: Kysely<DB>, id: string, owner: string, now: Date): Promise<void> {
  await sql`
    UPDATE jobs SET status = 'QUEUED', attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL,
      updated_at = ${now}::timestamptz
    WHERE ${held(id, owner)}`.execute(db);
}

/** What /metrics shows of the `jobs` table, per kind. */
export async function jobStats(db: Kysely<DB>, now: Date): Promise<JobKindStats[]> {
  const { rows } = await sql<{ kind: string; depth: number; oldest: Date | null; dead: number }>`
    SELECT kind,
           count(*) FILTER (WHERE status IN ('QUEUED', 'RUNNING'))::int AS depth,
           min(available_at) FILTER (WHERE status IN ('QUEUED', 'RUNNING') AND available_at <= ${now}::timestamptz) AS oldest,
           count(*) FILTER (WHERE status = 'DEAD')::int AS dead
    FROM jobs GROUP BY kind`.execute(db);
  return rows.map((r) => ({ kind: r.kind, depth: r.depth, dead: r.dead, oldestAgeSeconds: secondsWaited(r.oldest, now) }));
}

/** How long the oldest due job has waited, from when it became due; 0 when none is due. */
export function secondsWaited(dueSince: Date | null, now: Date): number {
  return dueSince ? Math.max(0, (now.getTime() - new Date(dueSince).getTime()) / 1000) : 0;
}

/** The `jobs` table as the source of every kind that keeps its jobs there: a notice names the kind that became due. */
export const jobsTable: JobSource<ClaimedJob> = {
  channel: JOBS_CHANNEL,
  wakes: (payload, kind) => (payload === kind ? 1 : 0),
  claim: claimJob,
  renew: renewJobLease,
  release: releaseJob,
  stats: jobStats,
};

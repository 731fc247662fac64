// Adds a job (graphile/worker's addJob): in the caller's transaction, its wake-up notice sent at commit.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** Wakes idle runners: the notice holds the kind of the job that became due. */
export const JOBS_CHANNEL = 'leadrun_jobs';

/** Wakes idle runners of `kind` when `trx` commits: a job of the kind was queued, or may have become due. */
export async function wakeRunners(trx: Kysely<DB>, kind: string): Promise<void> {
  await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${kind})`.execute(trx);
}

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
    await wakeRunners(trx, input.kind);
    return { id: inserted.id, created: true };
  }
  const existing = await trx.selectFrom('jobs').select('id')
    .where('kind', '=', input.kind).where('key', '=', key).where('status', 'in', ['QUEUED', 'RUNNING'])
    .executeTakeFirst();
  if (existing) return { id: existing.id, created: false };
  // The live job it conflicted with ended between the two statements: the key is free again.
  return enqueueJob(trx, input);
}

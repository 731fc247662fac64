// The audit log: one entry for every POST made with a valid key, every UI mutation and every admin command.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditOutcome, AuditSource, DB } from '../db/schema.ts';

export interface AuditEntryInput {
  workspaceId: string;
  source: AuditSource;
  keyId?: string | null;
  userId?: string | null;
  action: string;
  target?: { type: string; id: string } | null;
  outcome: AuditOutcome;
  status?: number | null;
  requestId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  occurredAt: Date;
}

export async function writeAudit(db: Kysely<DB>, entry: AuditEntryInput): Promise<void> {
  await db.insertInto('audit_log').values({
    id: randomUUID(),
    workspace_id: entry.workspaceId,
    source: entry.source,
    key_id: entry.keyId ?? null,
    user_id: entry.userId ?? null,
    action: entry.action,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    outcome: entry.outcome,
    status: entry.status ?? null,
    request_id: entry.requestId ?? null,
    ip: entry.ip ?? null,
    user_agent: entry.userAgent?.slice(0, 512) ?? null,
    occurred_at: entry.occurredAt,
  }).execute();
}

export interface AuditEntry {
  id: string;
  workspaceId: string;
  source: AuditSource;
  keyId: string | null;
  userId: string | null;
  action: string;
  target: { type: string; id: string } | null;
  outcome: AuditOutcome;
  status: number | null;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  occurredAt: string;
}

/** The newest entries of a workspace, newest first. */
export async function listAudit(db: Kysely<DB>, workspaceId: string, options: { limit: number }): Promise<AuditEntry[]> {
  const rows = await db
    .selectFrom('audit_log')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('occurred_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    source: r.source,
    keyId: r.key_id,
    userId: r.user_id,
    action: r.action,
    target: r.target_type && r.target_id ? { type: r.target_type, id: r.target_id } : null,
    outcome: r.outcome,
    status: r.status,
    requestId: r.request_id,
    ip: r.ip,
    userAgent: r.user_agent,
    occurredAt: r.occurred_at.toISOString(),
  }));
}

// The audit log: one entry for every POST made with a valid key, every UI mutation and every admin command.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AuditOutcome, AuditSource, DB } from '../../db/schema.ts';
import { readPage, type Cursor } from '../pagination.ts';
import { isUuid } from '../validation.ts';

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
  /** Counts that say what the action did (e.g. a lead import's); never personal data. */
  details?: AuditDetails | null;
}

export type AuditDetails = Record<string, number | boolean | string | null>;

export async function writeAudit(db: Kysely<DB>, entry: AuditEntryInput): Promise<void> {
  await auditInsert(entry, sql`true`).execute(db);
}

/**
 * The INSERT of an audit entry, made only `when` that condition holds: a statement that is the whole of a change adds
 * it as one of its CTEs (`when` naming the change's own CTE), so that the change and its entry commit together.
 */
export function auditInsert(entry: AuditEntryInput, when: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO audit_log (id, workspace_id, source, key_id, user_id, action, target_type, target_id, outcome, status,
                                    request_id, ip, user_agent, occurred_at, details)
    SELECT ${randomUUID()}::uuid, ${entry.workspaceId}::uuid, ${entry.source}, ${entry.keyId ?? null}::uuid, ${entry.userId ?? null}::uuid,
           ${entry.action}, ${entry.target?.type ?? null}, ${entry.target?.id ?? null}, ${entry.outcome}, ${entry.status ?? null}::int,
           ${entry.requestId ?? null}, ${entry.ip ?? null}, ${entry.userAgent?.slice(0, 512) ?? null}, ${entry.occurredAt}::timestamptz,
           ${entry.details ? JSON.stringify(entry.details) : null}::jsonb
    WHERE ${when}`;
}

export interface AuditEntry {
  id: string;
  workspaceId: string;
  source: AuditSource;
  keyId: string | null;
  key: { name: string; prefix: string } | null;
  userId: string | null;
  user: { name: string | null; email: string | null; removed: boolean } | null;
  action: string;
  target: { type: string; id: string } | null;
  outcome: AuditOutcome;
  status: number | null;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  occurredAt: string;
  details: AuditDetails | null;
}

export interface AuditFilter {
  limit: number;
  cursor?: Cursor | null;
  source?: AuditSource | null;
  /** A key id or a user id. */
  actor?: string | null;
  action?: string | null;
  outcome?: AuditOutcome | null;
}

/** The workspace's entries, newest first, filtered. */
export async function listAudit(db: Kysely<DB>, workspaceId: string, filter: AuditFilter): Promise<{ items: AuditEntry[]; next: Cursor | null }> {
  let query = db.selectFrom('audit_log as a')
    .leftJoin('api_keys as k', 'k.id', 'a.key_id')
    .leftJoin('users as u', 'u.id', 'a.user_id')
    .selectAll('a')
    .select(['k.name as key_name', 'k.prefix as key_prefix', 'u.name as user_name', 'u.removed_at as user_removed_at'])
    // A removed person keeps their name and former address here: the log still says who did what.
    .select((eb) => eb.fn.coalesce('u.email', 'u.removed_email').as('user_email'))
    .where('a.workspace_id', '=', workspaceId);
  if (filter.source) query = query.where('a.source', '=', filter.source);
  if (filter.outcome) query = query.where('a.outcome', '=', filter.outcome);
  if (filter.action) query = query.where('a.action', '=', filter.action);
  const actor = filter.actor;
  if (actor) {
    if (!isUuid(actor)) return { items: [], next: null };
    query = query.where((eb) => eb.or([eb('a.key_id', '=', actor), eb('a.user_id', '=', actor)]));
  }
  return readPage(query, { at: 'a.occurred_at', id: 'a.id' }, filter, (r): AuditEntry => ({
    id: r.id,
    workspaceId: r.workspace_id,
    source: r.source,
    keyId: r.key_id,
    key: r.key_name && r.key_prefix ? { name: r.key_name, prefix: r.key_prefix } : null,
    userId: r.user_id,
    user: r.user_id ? { name: r.user_name, email: r.user_email, removed: r.user_removed_at !== null } : null,
    action: r.action,
    target: r.target_type && r.target_id ? { type: r.target_type, id: r.target_id } : null,
    outcome: r.outcome,
    status: r.status,
    requestId: r.request_id,
    ip: r.ip,
    userAgent: r.user_agent,
    occurredAt: r.occurred_at.toISOString(),
    details: (r.details ?? null) as AuditDetails | null,
  }), (e) => ({ at: new Date(e.occurredAt), id: e.id }));
}

// Leads: the people a workspace sells to. Every query is bounded by the workspace id.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
import { prepare } from '../db/database.ts';
import type { DB, LeadsTable, LeadStatus } from '../db/schema.ts';
import { invalid, notFound } from './errors.ts';
import { pageOf, type Cursor } from './pagination.ts';
import { isUuid } from './validation.ts';
import { isUserOfWorkspace } from './workspaces.ts';

export const LEAD_STATUSES = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'] as const;

export interface Lead {
  id: string;
  name: string;
  email: string | null;
  companyName: string | null;
  companyWebsite: string | null;
  status: LeadStatus;
  assignedToUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface LeadInput {
  name?: string;
  email?: string | null;
  companyName?: string | null;
  companyWebsite?: string | null;
  status?: LeadStatus;
  assignedToUserId?: string | null;
}

export function toLead(row: Selectable<LeadsTable>): Lead {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    companyName: row.company_name,
    companyWebsite: row.company_website,
    status: row.status,
    assignedToUserId: row.assigned_to_user_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function checkAssignee(db: Kysely<DB>, workspaceId: string, userId: string | null | undefined): Promise<void> {
  if (userId === null || userId === undefined) return;
  if (!isUuid(userId) || !(await isUserOfWorkspace(db, workspaceId, userId))) {
    throw invalid('assignedToUserId', 'is not a user of this workspace');
  }
}

export async function createLead(db: Kysely<DB>, workspaceId: string, input: LeadInput & { name: string }, clock: Clock): Promise<Lead> {
  await checkAssignee(db, workspaceId, input.assignedToUserId);
  const now = clock.now();
  // The lead as stored: built here rather than read back, so nothing is parsed (docs/PERFORMANCE.md).
  const lead: Lead = {
    id: randomUUID(),
    name: input.name,
    email: input.email ?? null,
    companyName: input.companyName ?? null,
    companyWebsite: input.companyWebsite ?? null,
    status: input.status ?? 'DISCOVERY',
    assignedToUserId: input.assignedToUserId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await sql`
    ${prepare}INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
    VALUES (${lead.id}, ${workspaceId}, ${lead.name}, ${lead.email}, ${lead.companyName}, ${lead.companyWebsite}, ${lead.status},
            ${lead.assignedToUserId}::uuid, ${now}::timestamptz, ${now}::timestamptz)`.execute(db);
  return lead;
}

export async function getLead(db: Kysely<DB>, workspaceId: string, leadId: string): Promise<Lead | null> {
  if (!isUuid(leadId)) return null;
  const row = await db.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  return row ? toLead(row) : null;
}

export async function updateLead(db: Kysely<DB>, workspaceId: string, leadId: string, input: LeadInput, clock: Clock): Promise<Lead> {
  if (!isUuid(leadId)) throw notFound('Lead');
  await checkAssignee(db, workspaceId, input.assignedToUserId);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.companyName !== undefined ? { company_name: input.companyName } : {}),
    ...(input.companyWebsite !== undefined ? { company_website: input.companyWebsite } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.assignedToUserId !== undefined ? { assigned_to_user_id: input.assignedToUserId } : {}),
  };
  const row = await db.updateTable('leads')
    // Never backwards: another process's clock may lag this one's, and updatedAt must not fall before what it was.
    .set({ ...changes, updated_at: sql<Date>`GREATEST(updated_at, ${clock.now()}::timestamptz)` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notFound('Lead');
  return toLead(row);
}

/**
 * A page of leads as PostgreSQL renders it: the JSON text of the Lead array, in the API's shape (timestamps by
 * leadrun_iso, as toISOString writes them), with the cursor of the next page. The API sends the text on as it is:
 * no lead is mapped, no timestamp parsed and nothing serialised in Node, which is most of what a page would
 * otherwise cost.
 */
export async function listLeadsJson(
  db: Kysely<DB>,
  workspaceId: string,
  options: { limit: number; cursor?: Cursor | null; status?: LeadStatus | null },
): Promise<{ json: string; next: Cursor | null }> {
  const filters = [sql`l.workspace_id = ${workspaceId}`];
  if (options.status) filters.push(sql`l.status = ${options.status}`);
  if (options.cursor) filters.push(sql`(l.created_at, l.id) < (${options.cursor.at}::timestamptz, ${options.cursor.id}::uuid)`);
  // limit + 1 rows tell whether there is a next page. Each row is the lead's JSON, concatenated rather than built by
  // row_to_json, which costs PostgreSQL a third more, and not aggregated into one text, which costs it more than
  // the rows do (docs/PERFORMANCE.md). to_json escapes every free-text field; the rest (uuids, the status,
  // timestamps) hold no character that needs escaping.
  const result = await sql<{ json: string; id: string }>`
    ${prepare}SELECT '{"id":"' || l.id || '","name":' || to_json(l.name) || ',"email":' || coalesce(to_json(l.email)::text, 'null')
        || ',"companyName":' || coalesce(to_json(l.company_name)::text, 'null')
        || ',"companyWebsite":' || coalesce(to_json(l.company_website)::text, 'null')
        || ',"status":"' || l.status || '","assignedToUserId":' || coalesce('"' || l.assigned_to_user_id || '"', 'null')
        || ',"createdAt":"' || leadrun_iso(l.created_at) || '","updatedAt":"' || leadrun_iso(l.updated_at) || '"}' AS json,
      l.id
    FROM leads l WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY l.created_at DESC, l.id DESC LIMIT ${options.limit + 1}`.execute(db);
  const rows = result.rows.length > options.limit ? result.rows.slice(0, options.limit) : result.rows;
  const last = result.rows.length > options.limit ? rows.at(-1) : undefined;
  // The last createdAt of the page, read back from its JSON: every value before it is escaped, so its key's
  // last occurrence is the key itself.
  const at = last ? last.json.slice(last.json.lastIndexOf('"createdAt":"') + 13, last.json.lastIndexOf('","updatedAt":"')) : null;
  return { json: `[${rows.map((r) => r.json).join(',')}]`, next: last && at ? { at: new Date(at), id: last.id } : null };
}

export async function listLeads(
  db: Kysely<DB>,
  workspaceId: string,
  options: { limit: number; cursor?: Cursor | null; status?: LeadStatus | null },
): Promise<{ items: Lead[]; next: Cursor | null }> {
  let query = db.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId);
  if (options.status) query = query.where('status', '=', options.status);
  const cursor = options.cursor;
  if (cursor) {
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.at, cursor.id)));
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit + 1).execute();
  return pageOf(rows.map(toLead), options.limit, (lead) => ({ at: lead.createdAt, id: lead.id }));
}

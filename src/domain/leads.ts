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

/** The columns a Lead is made of: its stored JSON (api_json), which only a page of leads reads, left out. */
const LEAD_COLUMNS = [
  'id', 'workspace_id', 'name', 'email', 'company_name', 'company_website', 'status', 'assigned_to_user_id', 'created_at', 'updated_at',
] as const;

export function toLead(row: Omit<Selectable<LeadsTable>, 'api_json'>): Lead {
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
  const row = await db.selectFrom('leads').select(LEAD_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
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
    .returning(LEAD_COLUMNS)
    .executeTakeFirst();
  if (!row) throw notFound('Lead');
  return toLead(row);
}

/**
 * A page of leads as the JSON text of the Lead array, in the API's shape, with the cursor of the next page. Each
 * lead's JSON is stored with it (api_json, which PostgreSQL writes with the row: 0005_lead_json.sql), so a page is
 * read as text and sent on as it is: nothing is rendered by the database at each read, and no lead is mapped, no
 * timestamp parsed and nothing serialised in Node.
 *
 * `oneRow` asks for the page as one text instead of a row per lead: cheaper on PGlite, whose protocol parser in
 * JavaScript costs more per row than the aggregation costs its database, and dearer on PostgreSQL, where it is the
 * other way round (docs/PERFORMANCE.md).
 */
export async function listLeadsJson(
  db: Kysely<DB>,
  workspaceId: string,
  options: { limit: number; cursor?: Cursor | null; status?: LeadStatus | null; oneRow?: boolean },
): Promise<{ json: string; next: Cursor | null }> {
  const filters = [sql`l.workspace_id = ${workspaceId}`];
  if (options.status) filters.push(sql`l.status = ${options.status}`);
  if (options.cursor) filters.push(sql`(l.created_at, l.id) < (${options.cursor.at}::timestamptz, ${options.cursor.id}::uuid)`);
  // limit + 1 rows tell whether there is a next page.
  const page = sql`
    SELECT l.api_json, l.created_at, l.id FROM leads l WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY l.created_at DESC, l.id DESC LIMIT ${options.limit + 1}`;
  // A lead's JSON holds no line break: to_json escapes every control character of the text fields.
  const leads = options.oneRow
    ? ((await sql<{ page: string | null }>`
        SELECT string_agg(p.api_json, E'\n' ORDER BY p.created_at DESC, p.id DESC) AS page FROM (${page}) p`.execute(db)).rows[0]?.page?.split('\n') ?? [])
    : (await sql<{ api_json: string }>`${prepare}${page}`.execute(db)).rows.map((r) => r.api_json);
  const items = leads.length > options.limit ? leads.slice(0, options.limit) : leads;
  const last = leads.length > options.limit ? items.at(-1) : undefined;
  // The id and createdAt of the page's last lead, read back from its JSON: the id comes first; every value before
  // createdAt is escaped, so that key's last occurrence is the key itself.
  const next = last
    ? { at: new Date(last.slice(last.lastIndexOf('"createdAt":"') + 13, last.lastIndexOf('","updatedAt":"'))), id: last.slice(7, 43) }
    : null;
  return { json: `[${items.join(',')}]`, next };
}

// Leads: the people a workspace sells to. Every query is bounded by the workspace id.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
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
  const row = await db.insertInto('leads').values({
    id: randomUUID(),
    workspace_id: workspaceId,
    name: input.name,
    email: input.email ?? null,
    company_name: input.companyName ?? null,
    company_website: input.companyWebsite ?? null,
    status: input.status ?? 'DISCOVERY',
    assigned_to_user_id: input.assignedToUserId ?? null,
    created_at: now,
    updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return toLead(row);
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

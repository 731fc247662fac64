// Leads: the people a workspace sells to. Every query is bounded by the workspace id.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import { literal, prepare } from '../../db/database.ts';
import type { DB, LeadsTable, LeadStatus } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { beyondCursor, pageOf, type Cursor } from '../pagination.ts';
import { isUuid, websiteUrl } from '../validation.ts';
import { isUserOfWorkspace } from '../workspaces/workspaces.ts';
import { emitWebhookEvent } from '../webhooks/events.ts';
import { canonicalTimeZone } from '../sending/time-zones.ts';
import { doNotContactOf } from '../suppressions/entries.ts';
import { SEARCH_MAX_LENGTH, SEARCH_MAX_WORDS, UNASSIGNED } from '../../schemas/leads.ts';
import { stopEnrolments } from '../sequences/stops.ts';

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
  lastContactedAt: Date | null;
  lastReplyAt: Date | null;
  timeZone: string | null;
  /** True when the lead's address or domain is on the suppression list (DESIGN §15); left out otherwise. */
  doNotContact?: true;
  nextActionAt: Date | null;
}

export interface LeadInput {
  name?: string;
  email?: string | null;
  companyName?: string | null;
  companyWebsite?: string | null;
  status?: LeadStatus;
  assignedToUserId?: string | null;
  timeZone?: string | null;
}

/** The columns a Lead is made of: its stored JSON (api_json), which only a page of leads reads, left out. */
const LEAD_COLUMNS = [
  'id', 'workspace_id', 'name', 'email', 'company_name', 'company_website', 'status', 'assigned_to_user_id', 'created_at', 'updated_at',
  'last_contacted_at', 'last_reply_at', 'time_zone', 'next_action_at',
] as const;

export function toLead(row: Omit<Selectable<LeadsTable>, 'api_json' | 'search_text'>): Lead {
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
    lastContactedAt: row.last_contacted_at,
    lastReplyAt: row.last_reply_at,
    timeZone: row.time_zone,
    nextActionAt: row.next_action_at,
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
  // The lead as stored: built here rather than read back, so nothing is parsed.
  const lead: Lead = {
    id: randomUUID(),
    name: input.name,
    email: input.email ?? null,
    companyName: input.companyName ?? null,
    companyWebsite: input.companyWebsite ? websiteUrl(input.companyWebsite) : null,
    status: input.status ?? 'DISCOVERY',
    assignedToUserId: input.assignedToUserId ?? null,
    createdAt: now,
    updatedAt: now,
    lastContactedAt: null,
    lastReplyAt: null,
    timeZone: input.timeZone ? canonicalTimeZone(input.timeZone) : null,
    nextActionAt: null,
  };
  await sql`
    ${prepare}INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at, time_zone)
    VALUES (${lead.id}, ${workspaceId}, ${lead.name}, ${lead.email}, ${lead.companyName}, ${lead.companyWebsite}, ${lead.status},
            ${lead.assignedToUserId}::uuid, ${now}::timestamptz, ${now}::timestamptz, ${lead.timeZone})`.execute(db);
  await emitWebhookEvent(db, workspaceId, 'lead.created', lead, { at: now, leadId: lead.id });
  return lead;
}

export async function getLead(db: Kysely<DB>, workspaceId: string, leadId: string): Promise<Lead | null> {
  if (!isUuid(leadId)) return null;
  const row = await db.selectFrom('leads').select(LEAD_COLUMNS)
    .select(doNotContactOf(sql.ref('leads.workspace_id'), sql.ref('leads.email')).as('do_not_contact'))
    .where('workspace_id', '=', workspaceId).where('id', '=', leadId).executeTakeFirst();
  if (!row) return null;
  const { do_not_contact: doNotContact, ...columns } = row;
  return doNotContact ? { ...toLead(columns), doNotContact: true } : toLead(columns);
}

export async function updateLead(db: Kysely<DB>, workspaceId: string, leadId: string, input: LeadInput, clock: Clock): Promise<Lead> {
  if (!isUuid(leadId)) throw notFound('Lead');
  await checkAssignee(db, workspaceId, input.assignedToUserId);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.companyName !== undefined ? { company_name: input.companyName } : {}),
    ...(input.companyWebsite !== undefined
      ? { company_website: input.companyWebsite && websiteUrl(input.companyWebsite) }
      : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.assignedToUserId !== undefined ? { assigned_to_user_id: input.assignedToUserId } : {}),
    ...(input.timeZone !== undefined ? { time_zone: input.timeZone && canonicalTimeZone(input.timeZone) } : {}),
  };
  const row = await db.updateTable('leads')
    // Never backwards: another process's clock may lag this one's, and updatedAt must not fall before what it was.
    .set({ ...changes, updated_at: sql<Date>`GREATEST(updated_at, ${clock.now()}::timestamptz)` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', leadId)
    .returning(LEAD_COLUMNS)
    .executeTakeFirst();
  if (!row) throw notFound('Lead');
  const lead = toLead(row);
  // A lead moved to WON or LOST gets no more follow-ups (DESIGN §13).
  if (input.status === 'WON' || input.status === 'LOST') await stopEnrolments(db, { workspaceId, leadId, reason: 'lead_closed', at: clock.now() });
  await emitWebhookEvent(db, workspaceId, 'lead.updated', lead, { at: clock.now(), leadId: lead.id });
  return lead;
}

/** What a list of leads, its count and its export are narrowed by; every filter given must hold. */
export interface LeadFilter {
  /** Words, each of which must appear inside the name, the e-mail or the company, whatever the case and accents. */
  q?: string | null;
  status?: LeadStatus | null;
  /** The id of the user the leads are assigned to, or `none` for the leads assigned to nobody. */
  assignedToUserId?: string | null;
}

/**
 * The words of a search, none for a blank one. Whitespace and control characters part words alike, so no control
 * character (a NUL among them, which PostgreSQL refuses in text) reaches the database.
 */
export function searchWords(q: string | null | undefined): string[] {
  if (!q) return [];
  if (q.length > SEARCH_MAX_LENGTH) throw invalid('q', `must be at most ${SEARCH_MAX_LENGTH} characters`);
  const words = q.split(/[\s\p{Cc}]+/u).filter((word) => word.length > 0);
  if (words.length > SEARCH_MAX_WORDS) throw invalid('q', `must hold at most ${SEARCH_MAX_WORDS} words`);
  return words;
}

/**
 * `search_text LIKE '%word%'` for a word folded as search_text is (leadrun_search_text, 0008_lead_search.sql), its
 * LIKE wildcards escaped after the fold, so that `100%` and `a_b` are found as written. The word is written into the
 * statement (see `searched`), so PostgreSQL folds the pattern once, when it plans, and estimates how many leads hold it.
 */
const CONTAINS = (word: string) =>
  sql`l.search_text LIKE '%' || replace(replace(replace(leadrun_search_text(${literal(word)}), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;

/**
 * A value of a search's statement that its plan depends on: written into the statement when there are words, a
 * parameter otherwise. leadrun's PostgreSQL connections plan every statement once for any values of its parameters
 * (src/db/database.ts), and no single plan suits every word: a word that most leads hold is best found by reading the
 * newest leads in order until a page is full, a rare word through the trigram index, and which is which depends on
 * the word, on how many leads the workspace has, and on the LIMIT. With these in its text, a search's statement is
 * planned for them at each execution, in one round trip. A list without words is the same statement for any values.
 */
function searched(words: string[], value: string | number): RawBuilder<unknown> {
  return words.length > 0 ? literal(value) : sql`${value}`;
}

/** The conditions a lead `l` must meet: the workspace's, and the filter's. */
function leadConditions(workspaceId: string, filter: LeadFilter, words: string[]): RawBuilder<unknown>[] {
  const conditions = [sql`l.workspace_id = ${searched(words, workspaceId)}::uuid`];
  if (filter.status) conditions.push(sql`l.status = ${filter.status}`);
  if (filter.assignedToUserId === UNASSIGNED) conditions.push(sql`l.assigned_to_user_id IS NULL`);
  else if (filter.assignedToUserId) conditions.push(sql`l.assigned_to_user_id = ${filter.assignedToUserId}::uuid`);
  for (const word of words) conditions.push(CONTAINS(word));
  return conditions;
}

/**
 * The statement of a page of leads' JSON, newest first, and the words of its search: listLeadsJson runs it, the
 * benchmark's search workload (bench/run.ts) shows its plan. It reads `limit + 1` rows, which tell whether there is a next page.
 */
export function leadsPageStatement(workspaceId: string, options: LeadFilter & { limit: number; cursor?: Cursor | null }) {
  const words = searchWords(options.q);
  const filters = leadConditions(workspaceId, options, words);
  if (options.cursor) filters.push(beyondCursor(options.cursor, 'l.created_at', 'l.id'));
  // The stored JSON, with `"doNotContact":true` added at its end (where the cursor below does not look) for a lead
  // whose address is suppressed.
  const page = sql<{ api_json: string; created_at: Date; id: string }>`
    SELECT CASE WHEN ${doNotContactOf(sql.ref('l.workspace_id'), sql.ref('l.email'))}
                THEN left(l.api_json, -1) || ',"doNotContact":true}' ELSE l.api_json END AS api_json,
           l.created_at, l.id FROM leads l WHERE ${sql.join(filters, sql` AND `)}
    ORDER BY l.created_at DESC, l.id DESC LIMIT ${searched(words, options.limit + 1)}`;
  return { words, page };
}

/**
 * A page of leads as the JSON text of the Lead array, in the API's shape, with the cursor of the next page. Each
 * lead's JSON is stored with it (api_json, which PostgreSQL writes with the row: 0005_lead_json.sql), so a page is
 * read as text and sent on as it is: nothing is rendered by the database at each read, and no lead is mapped, no
 * timestamp parsed and nothing serialised in Node.
 *
 * `oneRow` asks for the page as one text instead of a row per lead: cheaper on PGlite, whose protocol parser in
 * JavaScript costs more per row than the aggregation costs its database, and dearer on PostgreSQL, where it is the
 * other way round.
 */
export async function listLeadsJson(
  db: Kysely<DB>,
  workspaceId: string,
  options: LeadFilter & { limit: number; cursor?: Cursor | null; oneRow?: boolean },
): Promise<{ json: string; next: Cursor | null }> {
  const { words, page } = leadsPageStatement(workspaceId, options);
  // A lead's JSON holds no line break: to_json escapes every control character of the text fields.
  const leads = await (async () => {
    if (options.oneRow) {
      const { rows: [row] } = await sql<{ page: string | null }>`
        SELECT string_agg(p.api_json, E'\n' ORDER BY p.created_at DESC, p.id DESC) AS page FROM (${page}) p`.execute(db);
      return row?.page?.split('\n') ?? [];
    }
    // A search is planned for its words at each execution: only a list without words is a prepared statement.
    const statement = words.length > 0 ? page : sql`${prepare}${page}`;
    return (await sql<{ api_json: string }>`${statement}`.execute(db)).rows.map((r) => r.api_json);
  })();
  const items = leads.length > options.limit ? leads.slice(0, options.limit) : leads;
  const last = leads.length > options.limit ? items.at(-1) : undefined;
  // The id and createdAt of the page's last lead, read back from its JSON: the id comes first; every value before
  // createdAt is escaped, so that key's last occurrence is the key itself.
  const next = last
    ? { at: new Date(last.slice(last.lastIndexOf('"createdAt":"') + 13, last.lastIndexOf('","updatedAt":"'))), id: last.slice(7, 43) }
    : null;
  return { json: `[${items.join(',')}]`, next };
}

/** How many leads of the workspace the filter finds. */
export async function countLeads(db: Kysely<DB>, workspaceId: string, filter: LeadFilter): Promise<number> {
  const words = searchWords(filter.q);
  const conditions = leadConditions(workspaceId, filter, words);
  const { rows: [row] } = await sql<{ count: string }>`SELECT count(*) AS count FROM leads l WHERE ${sql.join(conditions, sql` AND `)}`.execute(db);
  return Number(row?.count ?? 0);
}

/** A page of leads (newest first, as GET /api/v1/leads orders them) and the cursor of the next page. */
export async function listLeads(
  db: Kysely<DB>,
  workspaceId: string,
  options: LeadFilter & { limit: number; cursor?: Cursor | null },
): Promise<{ items: Lead[]; next: Cursor | null }> {
  const words = searchWords(options.q);
  const conditions = leadConditions(workspaceId, options, words);
  if (options.cursor) conditions.push(beyondCursor(options.cursor, 'l.created_at', 'l.id'));
  const columns = sql.join(LEAD_COLUMNS.map((column) => sql.ref(`l.${column}`)));
  const { rows } = await sql<Omit<Selectable<LeadsTable>, 'api_json' | 'search_text'>>`
    SELECT ${columns} FROM leads l WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY l.created_at DESC, l.id DESC LIMIT ${searched(words, options.limit + 1)}`.execute(db);
  return pageOf(rows.map(toLead), options.limit, (lead) => ({ at: lead.createdAt, id: lead.id }));
}

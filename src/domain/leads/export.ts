// Leads as a CSV file: every lead a filter finds, read a page at a time, so that exporting 100,000 leads holds one
// page in memory, not the file. The header names are the API's, which the import reads back; the columns the leads
// table shows besides (the owner's name and e-mail, the last contact and reply) are for people, and the import
// ignores them by name.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { listLeads, searchWords, type Lead, type LeadFilter } from './leads.ts';
import type { Cursor } from '../pagination.ts';

export const EXPORT_COLUMNS = [
  'name', 'email', 'companyName', 'companyWebsite', 'status', 'assignedToUserId', 'createdAt', 'updatedAt',
  'ownerName', 'ownerEmail', 'lastContactedAt', 'lastReplyAt', 'timeZone',
] as const;
/** Leads read and written per page. */
export const EXPORT_PAGE = 1000;

// A cell of apostrophes and then what a spreadsheet would run as a formula: csv-stringify leaves it as it is, and
// the import, which drops the apostrophe an export puts before a formula, would drop one of its own. One more ' before
// it keeps it (src/domain/leads/import-file.ts).
const APOSTROPHES_THEN_FORMULA = /^'+[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const defused = (cell: string | null) => (cell !== null && APOSTROPHES_THEN_FORMULA.test(cell) ? `'${cell}` : cell);

interface Owner {
  name: string | null;
  email: string | null;
}

const cells = (lead: Lead, owners: ReadonlyMap<string, Owner>) => {
  const owner = lead.assignedToUserId === null ? undefined : owners.get(lead.assignedToUserId);
  return [
    defused(lead.name), lead.email, defused(lead.companyName), lead.companyWebsite, lead.status, lead.assignedToUserId,
    lead.createdAt.toISOString(), lead.updatedAt.toISOString(),
    defused(owner?.name ?? null), owner?.email ?? null,
    lead.lastContactedAt?.toISOString() ?? null, lead.lastReplyAt?.toISOString() ?? null,
    // Read back by the import (DESIGN §14).
    lead.timeZone,
  ];
};

/**
 * The CSV text of the workspace's leads that `filter` finds, newest first, in chunks of a page each: the first with
 * a byte order mark (so that spreadsheets read the file as UTF-8) and the header row. A cell a spreadsheet would
 * run as a formula (one starting with =, +, -, @, a tab or a carriage return) gets a ' before it. The filter is
 * checked at the call, before any chunk is asked for.
 */
export function exportLeadsCsv(db: Kysely<DB>, workspaceId: string, filter: LeadFilter, pageSize = EXPORT_PAGE): AsyncGenerator<string> {
  searchWords(filter.q);
  return chunks(db, workspaceId, filter, pageSize);
}

async function* chunks(db: Kysely<DB>, workspaceId: string, filter: LeadFilter, pageSize: number): AsyncGenerator<string> {
  // Loaded by the first export, not by every server that starts.
  const { stringify } = await import('csv-stringify/sync');
  // A workspace has a few members and many leads: its users are read once, not joined to every page. A removed
  // member keeps their name; their address is theirs no more, and is not written.
  const users = await db.selectFrom('users').select(['id', 'name', 'email'])
    .where('workspace_id', '=', workspaceId).execute();
  const owners = new Map(users.map((user) => [user.id, { name: user.name, email: user.email }]));
  let cursor: Cursor | null = null;
  let first = true;
  do {
    const page: { items: Lead[]; next: Cursor | null } = await listLeads(db, workspaceId, { ...filter, limit: pageSize, cursor });
    yield stringify(page.items.map((lead) => cells(lead, owners)), {
      bom: first, header: first, columns: [...EXPORT_COLUMNS], record_delimiter: 'windows', escape_formulas: true,
      // A line break of any kind inside a cell is quoted, not only the record delimiter: not every reader of the file
      // takes a lone \n or \r for data.
      quoted_match: /[\r\n]/,
    });
    first = false;
    cursor = page.next;
  } while (cursor);
}

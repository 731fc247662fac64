// Leads as a CSV file: every lead a filter finds, read a page at a time, so that exporting 100,000 leads holds one
// page in memory, not the file. The header names are the API's, which the import reads back.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { listLeads, searchWords, type Lead, type LeadFilter } from './leads.ts';
import type { Cursor } from './pagination.ts';

export const EXPORT_COLUMNS = ['name', 'email', 'companyName', 'companyWebsite', 'status', 'assignedToUserId', 'createdAt', 'updatedAt'] as const;
/** Leads read and written per page. */
export const EXPORT_PAGE = 1000;

const cells = (lead: Lead) => [
  lead.name, lead.email, lead.companyName, lead.companyWebsite, lead.status, lead.assignedToUserId,
  lead.createdAt.toISOString(), lead.updatedAt.toISOString(),
];

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
  let cursor: Cursor | null = null;
  let first = true;
  do {
    const page: { items: Lead[]; next: Cursor | null } = await listLeads(db, workspaceId, { ...filter, limit: pageSize, cursor });
    yield stringify(page.items.map(cells), {
      bom: first, header: first, columns: [...EXPORT_COLUMNS], record_delimiter: 'windows', escape_formulas: true,
      // A line break of any kind inside a cell is quoted, not only the record delimiter: not every reader of the file
      // takes a lone \n or \r for data.
      quoted_match: /[\r\n]/,
    });
    first = false;
    cursor = page.next;
  } while (cursor);
}

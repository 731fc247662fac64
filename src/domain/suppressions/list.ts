// The suppression list as people and keys manage it (DESIGN §15): listed newest first, added one at a time, removed,
// imported from a CSV file and exported as one.
import { sql, type Kysely } from 'kysely';
import type { DB, SuppressionReason } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { isUuid } from '../validation.ts';
import { readPage, type Cursor } from '../pagination.ts';
import { stopEnrolments } from '../sequences/stops.ts';
import { entryOf, type SuppressionFile } from './csv.ts';
import { lockWholeList, toSuppression, type Suppression } from './entries.ts';
import { addAddress, addDomain } from './suppress.ts';

export interface SuppressionFilter {
  /** Part of an address or domain. */
  q?: string | undefined;
  limit: number;
  cursor?: Cursor | null;
}

/** The workspace's entries, newest first. */
export async function listSuppressions(db: Kysely<DB>, workspaceId: string, filter: SuppressionFilter): Promise<{ items: Suppression[]; next: Cursor | null }> {
  let query = db.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId);
  const q = filter.q?.trim().toLowerCase();
  if (q) {
    // A substring, matched literally: % and _ in the search are themselves.
    const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb('email', 'like', like), eb('domain', 'like', like)]));
  }
  return readPage(query, { at: 'created_at', id: 'id' }, filter, toSuppression, (entry) => ({ at: entry.createdAt, id: entry.id }));
}

export interface SuppressionCreateInput {
  email?: string | undefined;
  domain?: string | undefined;
  reason?: SuppressionReason | undefined;
}

/** Adds an address or a domain; one already on the list is answered as it is (`created: false`). */
export async function createSuppression(
  trx: Kysely<DB>, workspaceId: string, input: SuppressionCreateInput, source: string, at: Date,
): Promise<{ entry: Suppression; created: boolean }> {
  if ((input.email === undefined) === (input.domain === undefined)) throw invalid('email', 'or domain must be given, not both');
  const entry = entryOf(input.email ?? input.domain ?? '');
  if (!entry || ('email' in entry) !== (input.email !== undefined)) {
    throw input.email !== undefined ? invalid('email', 'must be an e-mail address') : invalid('domain', 'must be a domain name');
  }
  const reason = input.reason ?? 'manual';
  const added = 'email' in entry
    ? await addAddress(trx, { workspaceId, email: entry.email, reason, source, at })
    : await addDomain(trx, { workspaceId, domain: entry.domain, reason, source, at });
  if (added) return { entry: added, created: true };
  const existing = await trx.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId)
    .where('email' in entry ? 'email' : 'domain', '=', 'email' in entry ? entry.email : entry.domain).executeTakeFirstOrThrow();
  return { entry: toSuppression(existing), created: false };
}

/** Removes an entry: the address or domain may be written to again. */
export async function deleteSuppression(trx: Kysely<DB>, workspaceId: string, id: string): Promise<Suppression> {
  if (!isUuid(id)) throw notFound('Suppression');
  const row = await trx.deleteFrom('suppressions').where('workspace_id', '=', workspaceId).where('id', '=', id)
    .returningAll().executeTakeFirst();
  if (!row) throw notFound('Suppression');
  return toSuppression(row);
}

/** Adds a file's addresses and domains (reason `imported`, source `import`) in a few statements; those there stay. */
export async function importSuppressions(
  trx: Kysely<DB>, workspaceId: string, file: SuppressionFile, at: Date,
): Promise<{ added: number; existing: number; invalid: number }> {
  const insert = async (column: 'email' | 'domain', values: string[]): Promise<string[]> => {
    if (values.length === 0) return [];
    const rows = await sql<{ value: string }>`
      INSERT INTO suppressions (id, workspace_id, email, domain, reason, source, created_at)
      SELECT gen_random_uuid(), ${workspaceId}::uuid, ${column === 'email' ? sql`v` : sql`NULL`}, ${column === 'domain' ? sql`v` : sql`NULL`},
             'imported', 'import', ${at}::timestamptz
      FROM unnest(${sql.val(values)}::text[]) AS t(v)
      ON CONFLICT (workspace_id, ${sql.ref(column)}) WHERE ${sql.ref(column)} IS NOT NULL DO NOTHING
      RETURNING ${sql.ref(column)} AS value`.execute(trx);
    return rows.rows.map((r) => r.value);
  };
  // Before the first insert: a delivery's claim (gate.ts) either commits before the import writes, or waits for it.
  await lockWholeList(trx, workspaceId, 'exclusive');
  const emails = await insert('email', file.emails);
  const domains = await insert('domain', file.domains);
  for (const email of emails) await stopEnrolments(trx, { workspaceId, email, reason: 'suppressed', at });
  const added = emails.length + domains.length;
  return { added, existing: file.emails.length + file.domains.length - added, invalid: file.invalid };
}

/** A CSV cell: quoted when it holds a delimiter, a quote or a line break; a leading =+-@ defused for spreadsheets. */
function csvCell(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const SUPPRESSION_CSV_HEADER = 'email,domain,reason,source,created_at';

/** The workspace's list as CSV, oldest first, a page of rows at a time. */
export async function* exportSuppressions(db: Kysely<DB>, workspaceId: string): AsyncGenerator<string> {
  yield `${SUPPRESSION_CSV_HEADER}\r\n`;
  let after: { at: Date; id: string } | null = null;
  for (;;) {
    let query = db.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId);
    const from = after;
    if (from) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(from.at, from.id)));
    const rows = await query.orderBy('created_at').orderBy('id').limit(1000).execute();
    if (rows.length === 0) return;
    yield rows.map((r) => [r.email, r.domain, r.reason, r.source, r.created_at.toISOString()].map(csvCell).join(',')).join('\r\n') + '\r\n';
    const last = rows.at(-1)!;
    after = { at: last.created_at, id: last.id };
  }
}


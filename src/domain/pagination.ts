// Keyset pagination, the one way every list of the API pages. A cursor is the timestamp and id of the last item of a
// page, opaque to clients (base64url); the next page is everything strictly beyond it in (timestamp, id) order: before
// it for a newest-first list, after it for an oldest-first one. A list reads `limit + 1` rows, the one more telling
// whether there is a next page (pageOf). The HTTP side, the `cursor` parameter and the Link header, is
// src/http/pagination.ts.
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { invalid } from './errors.ts';
import { isStorableInstant, isUuid } from './validation.ts';

export interface Cursor {
  at: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.at.toISOString()}|${cursor.id}`).toString('base64url');
}

/** The cursor a `cursor` parameter holds; anything this service could not have given out is a 400 naming it. */
export function decodeCursor(text: string): Cursor {
  const [at = '', id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const date = new Date(at);
  // Only what encodeCursor writes: a forged date far outside what the database stores would fail the query.
  const sane = isStorableInstant(date) && date.toISOString() === at;
  if (rest.length > 0 || !id || !isUuid(id) || !sane) throw invalid('cursor', 'is not a cursor this service gave out');
  return { at: date, id };
}

/** Cuts the `limit + 1` rows a query fetched into a page and the cursor of the page after it, if any. */
export function pageOf<T>(rows: T[], limit: number, positionOf: (item: T) => Cursor): { items: T[]; next: Cursor | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? positionOf(last) : null };
}

/**
 * The rows beyond `cursor` in a list ordered by (`at`, `id`): strictly before it when the list is newest first,
 * strictly after it when oldest first. The cursor's values are typed as the columns are (timestamptz, uuid), so that
 * the row comparison is the index's own in raw SQL as in a query builder's `where`.
 */
export function beyondCursor(cursor: Cursor, at: string, id: string, order: 'newest' | 'oldest' = 'newest'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(at)}, ${sql.ref(id)}) ${sql.raw(order === 'newest' ? '<' : '>')} (${cursor.at}::timestamptz, ${cursor.id}::uuid)`;
}

/** The order of a list: its timestamp and id columns, and its direction (newest first unless said). */
export interface Keyset {
  at: string;
  id: string;
  order?: 'newest' | 'oldest';
}

/**
 * Reads one page of a list from `query` (its selection and filters): the rows beyond the cursor in the keyset's
 * order, `limit + 1` of them, made items by `toItem` and cut by pageOf.
 */
export async function readPage<Row, Item>(
  // Any table of any database: only the rows' type matters here.
  query: SelectQueryBuilder<any, any, Row>,
  keyset: Keyset,
  page: { limit: number; cursor?: Cursor | null | undefined },
  toItem: (row: Row) => Item,
  positionOf: (item: Item) => Cursor,
): Promise<{ items: Item[]; next: Cursor | null }> {
  const direction = keyset.order === 'oldest' ? 'asc' : 'desc';
  const after = page.cursor ? query.where(beyondCursor(page.cursor, keyset.at, keyset.id, keyset.order)) : query;
  const rows = await after.orderBy(sql.ref(keyset.at), direction).orderBy(sql.ref(keyset.id), direction).limit(page.limit + 1).execute();
  return pageOf(rows.map(toItem), page.limit, positionOf);
}

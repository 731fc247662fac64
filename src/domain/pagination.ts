// Keyset pagination for newest-first lists. A cursor is the timestamp and id of the last item of a page,
// opaque to clients (base64url); the next page is everything strictly before it in (timestamp, id) order.
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

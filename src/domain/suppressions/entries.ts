// The suppression list's entries (DESIGN §15) as the API shows them, and the look-up every delivery makes.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { DB, SuppressionReason, SuppressionsTable } from '../../db/schema.ts';
import { AppError } from '../errors.ts';

export interface Suppression {
  id: string;
  email: string | null;
  domain: string | null;
  reason: SuppressionReason;
  source: string;
  createdAt: Date;
}

export const toSuppression = (row: Selectable<SuppressionsTable>): Suppression => ({
  id: row.id, email: row.email, domain: row.domain, reason: row.reason, source: row.source, createdAt: row.created_at,
});

/** An address as the list keeps it: trimmed and lower-cased (the part before the @ too: nobody relies on its case). */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

/** The domain of an address, lower-cased ('' when it has none). */
export function domainOf(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).trim().toLowerCase();
}

/**
 * Serialises a suppression of `key` (an address, or `@domain`) with the claim of a delivery to it: both take this
 * lock in their transaction, so the claim either sees the committed entry or commits before the entry is made.
 */
export async function lockAddress(trx: Kysely<DB>, workspaceId: string, key: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`suppression:${workspaceId}:${key}`}, 0))`.execute(trx);
}

/**
 * The workspace's list as a whole, which an import locks instead of its addresses: one lock per address of a
 * 50,000-row file overflows PostgreSQL's lock table (64 per connection by default). Every claim shares it (claims do
 * not wait for each other), an import holds it alone: a claim either commits before the import writes, or waits for
 * the import to commit and then finds the address. Taken before any address's lock, so no two wait in a circle.
 */
export async function lockWholeList(trx: Kysely<DB>, workspaceId: string, mode: 'shared' | 'exclusive'): Promise<void> {
  const key = `suppressions:${workspaceId}`;
  await (mode === 'shared'
    ? sql`SELECT pg_advisory_xact_lock_shared(hashtextextended(${key}, 0))`
    : sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`).execute(trx);
}

/** Whether an address is suppressed (its own entry or its domain's), as SQL over a lead's columns: "Do not contact". */
export function doNotContactOf(workspaceId: RawBuilder<unknown> | ReturnType<typeof sql.ref>, email: RawBuilder<unknown> | ReturnType<typeof sql.ref>) {
  return sql<boolean>`EXISTS (SELECT 1 FROM suppressions s WHERE s.workspace_id = ${workspaceId}
    AND (s.email = lower(${email}) OR s.domain = lower(split_part(${email}, '@', 2))))`;
}

/** The entry that suppresses `email` in the workspace (its address's, else its domain's), or null. */
export async function suppressionOf(db: Kysely<DB>, workspaceId: string, email: string): Promise<Suppression | null> {
  const address = normalEmail(email);
  const row = await db.selectFrom('suppressions').selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('email', '=', address), eb('domain', '=', domainOf(address))]))
    .orderBy(sql`email IS NULL`).limit(1).executeTakeFirst();
  return row ? toSuppression(row) : null;
}

/** Refuses (409 recipient_suppressed, with `reason`) an approval whose e-mail would go to a suppressed address or domain. */
export async function refuseSuppressed(trx: Kysely<DB>, workspaceId: string, to: string | null): Promise<void> {
  if (!to) return;
  const entry = await suppressionOf(trx, workspaceId, to);
  if (!entry) return;
  throw new AppError('recipient_suppressed',
    `${entry.email ? 'The recipient\'s address' : 'The recipient\'s domain'} is on the suppression list (${entry.reason}): nothing is delivered to it. Nothing was approved.`,
    { extra: { reason: entry.reason }, errors: [{ field: 'to', message: `is suppressed (${entry.reason})` }] });
}

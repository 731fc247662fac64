// One-time links to set a new password, made by an admin for a member who forgot theirs. The link carries a random
// token (256 bits) in its fragment; the database keeps only its SHA-256 digest. A link works once, for 24 hours,
// and only while it is the person's newest: a newer link, a password change or a removal ends it.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DB } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { checkPassword, hashPassword } from './passwords.ts';
import { endUserSessions } from './sessions.ts';
import { isUuid } from '../validation.ts';

export const RESET_LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The address of the page that takes a token. The token goes in the fragment, which a browser never sends to a
 * server: not to leadrun in the request, nor to anyone in a Referer.
 */
export function resetLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/reset-password#token=${token}`;
}

/** Ends a person's unused links: a newer link, a changed password or a removal makes them stale. */
export async function endResetLinks(db: Kysely<DB>, userId: string, clock: Clock): Promise<void> {
  await db.updateTable('password_reset_links').set({ revoked_at: clock.now() })
    .where('user_id', '=', userId).where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
}

export interface CreatedResetLink {
  token: string;
  expiresAt: Date;
  user: { id: string; name: string | null; email: string | null };
}

/** Makes a new link for a present member of the workspace, ending their older ones. */
export async function createResetLink(
  db: Kysely<DB>, workspaceId: string, input: { userId: string; createdByUserId: string | null }, clock: Clock,
): Promise<CreatedResetLink> {
  return inTransaction(db, async (trx) => {
    if (!isUuid(input.userId)) throw notFound('Member');
    // The person's row is locked, so two links made at once end up one valid, and a removal cannot interleave.
    const user = await trx.selectFrom('users').select(['id', 'name', 'email']).where('id', '=', input.userId)
      .where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).forUpdate().executeTakeFirst();
    if (!user) throw notFound('Member');
    await endResetLinks(trx, user.id, clock);
    const token = randomBytes(32).toString('base64url');
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + RESET_LINK_LIFETIME_MS);
    await trx.insertInto('password_reset_links').values({
      digest: digest(token), workspace_id: workspaceId, user_id: user.id, created_by_user_id: input.createdByUserId,
      created_at: now, expires_at: expiresAt, used_at: null, revoked_at: null,
    }).execute();
    return { token, expiresAt, user };
  });
}

const NOT_VALID = 'is not valid; ask an admin of your workspace for a new link';

/**
 * The link of a token, as long as it can still be used; otherwise a 400 naming `token` that says why. A token
 * that is unknown, malformed, or belongs to a removed person gets the same answer.
 */
async function usableLink(db: Kysely<DB>, token: string, clock: Clock, lock: boolean) {
  if (!TOKEN.test(token)) throw invalid('token', NOT_VALID);
  let query = db.selectFrom('password_reset_links as l').innerJoin('users as u', 'u.id', 'l.user_id')
    .select(['l.digest', 'l.user_id', 'l.workspace_id', 'l.expires_at', 'l.used_at', 'l.revoked_at', 'u.name', 'u.email', 'u.removed_at'])
    .where('l.digest', '=', digest(token));
  // Locking the link makes a second, concurrent use wait, then find it used.
  if (lock) query = query.forUpdate('l');
  const link = await query.executeTakeFirst();
  if (!link || link.removed_at !== null) throw invalid('token', NOT_VALID);
  if (link.used_at !== null) throw invalid('token', 'was used already; sign in with the password you set, or ask an admin for a new link');
  if (link.revoked_at !== null) throw invalid('token', 'is no longer valid: a newer link was made, or the password was changed since; ask an admin for a new link');
  if (link.expires_at <= clock.now()) throw invalid('token', 'has expired; ask an admin of your workspace for a new one');
  return link;
}

/** Whose link a token is, for the page that asks for the new password. */
export async function describeResetLink(db: Kysely<DB>, token: string, clock: Clock): Promise<{ name: string | null; email: string | null; expiresAt: Date }> {
  const link = await usableLink(db, token, clock, false);
  return { name: link.name, email: link.email, expiresAt: link.expires_at };
}

/**
 * Sets the password of the link's person and uses the link up, in one transaction that also ends every session and
 * every other link of theirs. The caller signs them in afresh.
 */
export async function resetPassword(
  db: Kysely<DB>, input: { token: string; password: string }, clock: Clock,
): Promise<{ userId: string; workspaceId: string }> {
  checkPassword(input.password);
  // Hashed before the transaction, so that no lock is held for the time scrypt takes.
  const passwordHash = await hashPassword(input.password);
  return inTransaction(db, async (trx) => {
    const link = await usableLink(trx, input.token, clock, true);
    // A removal running at the same moment holds the person's row: this waits for it, then finds them removed.
    const user = await trx.updateTable('users').set({ password_hash: passwordHash })
      .where('id', '=', link.user_id).where('removed_at', 'is', null).returning('id').executeTakeFirst();
    if (!user) throw invalid('token', NOT_VALID);
    // Used up only if still unused: exact even if the lock above were dropped one day.
    const used = await trx.updateTable('password_reset_links').set({ used_at: clock.now() })
      .where('digest', '=', link.digest).where('used_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw invalid('token', 'was used already; sign in with the password you set, or ask an admin for a new link');
    await endResetLinks(trx, link.user_id, clock);
    await endUserSessions(trx, link.user_id, clock);
    return { userId: link.user_id, workspaceId: link.workspace_id };
  });
}

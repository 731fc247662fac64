// What every person changes about themselves: their name and their password.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { inTransaction } from '../db/transaction.ts';
import type { DB } from '../db/schema.ts';
import { invalid, notFound } from './errors.ts';
import { endResetLinks } from './password-resets.ts';
import { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
import { endUserSessions } from './sessions.ts';

export async function renameUser(db: Kysely<DB>, workspaceId: string, userId: string, name: string): Promise<void> {
  const trimmed = name.trim();
  if (!trimmed) throw invalid('name', 'must not be empty');
  const updated = await db.updateTable('users').set({ name: trimmed })
    .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw notFound('User');
}

/**
 * Changes a person's own password, given their current one, and ends every session and reset link of theirs; the
 * caller gives the person's browser a new session. The new password follows the rules of every other.
 */
export async function changeOwnPassword(
  db: Kysely<DB>, workspaceId: string, userId: string, input: { currentPassword: string; newPassword: string }, clock: Clock,
): Promise<void> {
  checkPassword(input.newPassword, 'newPassword');
  if (input.newPassword === input.currentPassword) throw invalid('newPassword', 'must differ from your current password');
  const user = await db.selectFrom('users').select(['id', 'password_hash'])
    .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  if (!user) throw notFound('User');
  if (!(await verifyPassword(input.currentPassword, user.password_hash))) throw invalid('currentPassword', 'is not your current password');
  const passwordHash = await hashPassword(input.newPassword);
  await inTransaction(db, async (trx) => {
    // Only over the hash that was checked: a change made meanwhile (another tab, the CLI, a reset) wins, and this
    // one is refused rather than silently replacing it.
    const updated = await trx.updateTable('users').set({ password_hash: passwordHash })
      .where('id', '=', user.id).where('removed_at', 'is', null).where('password_hash', '=', user.password_hash!).executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) throw invalid('currentPassword', 'is not your current password');
    await endUserSessions(trx, user.id, clock);
    await endResetLinks(trx, user.id, clock);
  });
}

// What admins do to the people of their workspace: change a role, remove someone. A workspace always keeps an admin:
// both changes lock the workspace row before counting its admins, so two admins demoting or removing each other at
// the same moment are taken one after the other, and the second is refused.
import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DB, Role } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { revokeKey } from '../keys/keys.ts';
import { endResetLinks } from './password-resets.ts';
import { endUserSessions } from './sessions.ts';
import type { Member } from './users.ts';
import { isUuid } from '../validation.ts';

// FOR NO KEY UPDATE, not FOR UPDATE: it takes role changes and removals in turn all the same, and lets rows that
// reference the workspace be written meanwhile (their foreign key takes KEY SHARE on it). With FOR UPDATE, a lead
// created for the person being removed held its share lock on the person and waited for the workspace row, while the
// removal held the workspace row and waited for the person: a deadlock, answered 500.
async function lockWorkspace(trx: Transaction<DB>, workspaceId: string) {
  const workspace = await trx.selectFrom('workspaces').select(['id', 'admin_user_id']).where('id', '=', workspaceId).forNoKeyUpdate().executeTakeFirst();
  if (!workspace) throw notFound('Workspace');
  return workspace;
}

async function presentMember(trx: Transaction<DB>, workspaceId: string, userId: string) {
  if (!isUuid(userId)) throw notFound('Member');
  const user = await trx.selectFrom('users').select(['id', 'name', 'email', 'role', 'created_at'])
    .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  if (!user) throw notFound('Member');
  return user;
}

/** The workspace's longest-standing present admin other than `userId`, or null when there is none. */
async function anotherAdmin(trx: Transaction<DB>, workspaceId: string, userId: string): Promise<string | null> {
  const row = await trx.selectFrom('users').select('id')
    .where('workspace_id', '=', workspaceId).where('role', '=', 'ADMIN').where('removed_at', 'is', null).where('id', '!=', userId)
    .orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  return row?.id ?? null;
}

const lastAdmin = (name: string | null, doing: string) =>
  new AppError('invalid_state', `${name ?? 'This person'} is the workspace's only admin and cannot be ${doing}: make someone else an admin first.`);

/**
 * Makes a member an admin or an admin a member. The workspace's admin user (to whom API-started runs are
 * attributed) moves to another admin when it is the one demoted.
 */
export async function changeRole(db: Kysely<DB>, workspaceId: string, input: { userId: string; role: Role }): Promise<Member> {
  return inTransaction(db, async (trx) => {
    const workspace = await lockWorkspace(trx, workspaceId);
    const user = await presentMember(trx, workspaceId, input.userId);
    const member = { id: user.id, name: user.name, email: user.email, role: input.role, createdAt: user.created_at };
    if (user.role === input.role) return member;
    if (input.role === 'MEMBER') {
      const successor = await anotherAdmin(trx, workspaceId, user.id);
      if (!successor) throw lastAdmin(user.name, 'made a member');
      if (workspace.admin_user_id === user.id) await trx.updateTable('workspaces').set({ admin_user_id: successor }).where('id', '=', workspaceId).execute();
    } else if (workspace.admin_user_id === null) {
      await trx.updateTable('workspaces').set({ admin_user_id: user.id }).where('id', '=', workspaceId).execute();
    }
    await trx.updateTable('users').set({ role: input.role }).where('id', '=', user.id).execute();
    return member;
  });
}

export interface RemovedMember {
  id: string;
  name: string | null;
  /** The address they had, now free for someone else. */
  email: string | null;
  removedAt: Date;
  endedSessions: number;
  unassignedLeads: number;
  revokedKeys: Array<{ id: string; digest: string }>;
}

/**
 * Removes a person from the workspace, at once: their sessions and reset links end, their password is forgotten,
 * their address is freed, the leads assigned to them are unassigned, and (with `revokeKeys`) the API keys they
 * created are revoked. Their row stays, so that the audit log, runs and drafts still say who they were.
 */
export async function removeMember(
  db: Kysely<DB>, workspaceId: string, input: { userId: string; revokeKeys: boolean }, clock: Clock,
): Promise<RemovedMember> {
  return inTransaction(db, async (trx) => {
    const workspace = await lockWorkspace(trx, workspaceId);
    const user = await presentMember(trx, workspaceId, input.userId);
    const successor = await anotherAdmin(trx, workspaceId, user.id);
    if (user.role === 'ADMIN' && !successor) throw lastAdmin(user.name, 'removed');
    const now = clock.now();
    await trx.updateTable('users').set({ removed_at: now, removed_email: user.email, email: null, password_hash: null })
      .where('id', '=', user.id).execute();
    const endedSessions = await endUserSessions(trx, user.id, clock);
    await endResetLinks(trx, user.id, clock);
    const unassigned = await trx.updateTable('leads').set({ assigned_to_user_id: null, updated_at: now })
      .where('workspace_id', '=', workspaceId).where('assigned_to_user_id', '=', user.id).executeTakeFirst();
    if (workspace.admin_user_id === user.id) {
      // A member's removal never leaves the workspace without an admin user: `successor` exists when they were one.
      await trx.updateTable('workspaces').set({ admin_user_id: successor }).where('id', '=', workspaceId).execute();
    }
    const revokedKeys: RemovedMember['revokedKeys'] = [];
    if (input.revokeKeys) {
      const keys = await trx.selectFrom('api_keys').select('id')
        .where('workspace_id', '=', workspaceId).where('created_by_user_id', '=', user.id).where('revoked_at', 'is', null).execute();
      for (const key of keys) {
        const revoked = await revokeKey(trx, key.id, clock, workspaceId);
        if (revoked) revokedKeys.push({ id: revoked.id, digest: revoked.digest });
      }
    }
    return {
      id: user.id, name: user.name, email: user.email, removedAt: now, endedSessions,
      unassignedLeads: Number(unassigned.numUpdatedRows), revokedKeys,
    };
  });
}

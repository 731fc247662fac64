// Workspaces and their users. A workspace is created with its admin user, who is the one runs started
// through the API are attributed to.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, Plan } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import { isEmail, oneLineProblem } from '../validation.ts';
import { inTransaction } from '../../db/transaction.ts';
import { createDefaultSequence } from '../sequences/sequences.ts';

export interface CreatedWorkspace {
  id: string;
  name: string;
  plan: 'free' | 'pro';
  adminUserId: string;
}

export async function createWorkspace(
  db: Kysely<DB>,
  input: { name: string; plan?: string; adminEmail?: string | null; adminName?: string | null },
  clock: Clock,
): Promise<CreatedWorkspace> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) {
    throw new AppError('invalid_request', 'A workspace needs a name of 1 to 200 characters.', { errors: [{ field: 'name', message: 'must be 1 to 200 characters' }] });
  }
  // The name is in the subject of the e-mails that send a member a password-reset link: one line.
  const nameProblem = oneLineProblem(name);
  if (nameProblem) {
    const errors = [{ field: 'name', message: nameProblem }];
    throw new AppError('invalid_request', `A workspace's name ${nameProblem}.`, { errors });
  }
  const planInput = (input.plan ?? 'free').toUpperCase();
  if (planInput !== 'FREE' && planInput !== 'PRO') {
    throw new AppError('invalid_request', 'The plan must be free or pro.', { errors: [{ field: 'plan', message: 'must be free or pro' }] });
  }
  const plan: Plan = planInput;
  const adminEmail = input.adminEmail?.trim().toLowerCase() || null;
  if (adminEmail !== null && !isEmail(adminEmail)) {
    throw new AppError('invalid_request', 'The admin e-mail is not a valid address.', { errors: [{ field: 'adminEmail', message: 'must be an e-mail address' }] });
  }
  const now = clock.now();
  const workspaceId = randomUUID();
  const adminUserId = randomUUID();
  await inTransaction(db, async (trx) => {
    if (adminEmail !== null) {
      const taken = await trx.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', adminEmail)).executeTakeFirst();
      if (taken) {
        throw new AppError('invalid_request', `A user with the e-mail ${adminEmail} already exists.`, { errors: [{ field: 'adminEmail', message: 'is already in use' }] });
      }
    }
    await trx.insertInto('workspaces').values({ id: workspaceId, name, plan, admin_user_id: null, created_at: now }).execute();
    await trx.insertInto('users').values({
      id: adminUserId, workspace_id: workspaceId, email: adminEmail, name: input.adminName?.trim() || null, role: 'ADMIN', password_hash: null, created_at: now,
    }).execute();
    await trx.updateTable('workspaces').set({ admin_user_id: adminUserId }).where('id', '=', workspaceId).execute();
    await createDefaultSequence(trx, workspaceId, now);
  });
  return { id: workspaceId, name, plan: plan === 'FREE' ? 'free' : 'pro', adminUserId };
}

export async function getWorkspace(db: Kysely<DB>, workspaceId: string) {
  return (await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst()) ?? null;
}

/**
 * True for a present (not removed) user of the workspace. The row is share-locked: a lead assigned in the caller's
 * transaction cannot slip past a removal running at the same moment, which unassigns that person's leads.
 */
export async function isUserOfWorkspace(db: Kysely<DB>, workspaceId: string, userId: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('id', '=', userId).where('workspace_id', '=', workspaceId)
    .where('removed_at', 'is', null).forShare().executeTakeFirst();
  return row !== undefined;
}

/** A workspace as the admin commands list it: with its admin's e-mail. */
export interface WorkspaceSummary {
  id: string;
  name: string;
  plan: 'free' | 'pro';
  adminUserId: string | null;
  adminEmail: string | null;
  createdAt: string;
}

/**
 * The installation's workspaces, oldest first (the first is the one setup made), optionally only the one with an
 * id or those with an exact name. Installation-wide on purpose: only the admin commands, run by whoever runs the installation, call it.
 */
export async function listWorkspaces(db: Kysely<DB>, filter: { id?: string; name?: string; limit?: number } = {}): Promise<WorkspaceSummary[]> {
  let query = db.selectFrom('workspaces as w').leftJoin('users as u', 'u.id', 'w.admin_user_id')
    .select(['w.id', 'w.name', 'w.plan', 'w.admin_user_id', 'u.email', 'w.created_at'])
    .orderBy('w.created_at').orderBy('w.id');
  if (filter.id !== undefined) query = query.where('w.id', '=', filter.id);
  if (filter.name !== undefined) query = query.where('w.name', '=', filter.name);
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.id, name: r.name, plan: r.plan === 'FREE' ? 'free' : 'pro', adminUserId: r.admin_user_id, adminEmail: r.email, createdAt: r.created_at.toISOString(),
  }));
}

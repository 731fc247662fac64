// The people of a workspace: members added by admins, their passwords, and the first-run setup that creates an
// installation's first workspace and admin. An e-mail address names one person in a workspace; the same address may
// be someone's in other workspaces too, and sign-in finds the account by its password
// (docs/decisions/0008-addresses-are-unique-per-workspace.md).
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DB, Role } from '../../db/schema.ts';
import { AppError, invalid } from '../errors.ts';
import { endResetLinks } from './password-resets.ts';
import { checkPassword, hashPassword } from './passwords.ts';
import { endUserSessions } from './sessions.ts';
import { isEmail, oneLineProblem } from '../validation.ts';
import { createWorkspace, listWorkspaces, type WorkspaceSummary } from '../workspaces/workspaces.ts';

function normaliseEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (!isEmail(normal)) throw invalid('email', 'must be an e-mail address');
  return normal;
}

export interface Member {
  id: string;
  name: string | null;
  email: string | null;
  role: Role;
  createdAt: Date;
}

export async function listMembers(db: Kysely<DB>, workspaceId: string): Promise<Member[]> {
  const rows = await db.selectFrom('users').select(['id', 'name', 'email', 'role', 'created_at'])
    .where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, email: r.email, role: r.role, createdAt: r.created_at }));
}

/** A new person's e-mail (normalised), password and name, checked; the name trimmed. */
function checkPerson(input: { name: string; email: string; password: string }): { email: string; name: string } {
  const email = normaliseEmail(input.email);
  checkPassword(input.password);
  const name = input.name.trim();
  if (!name) throw invalid('name', 'must not be empty');
  // A name goes into the From header of the e-mails sent in this person's name: one line.
  const nameProblem = oneLineProblem(name);
  if (nameProblem) throw invalid('name', nameProblem);
  return { email, name };
}

export async function addMember(
  db: Kysely<DB>,
  workspaceId: string,
  input: { name: string; email: string; role: Role; password: string },
  clock: Clock,
): Promise<Member> {
  const { email, name } = checkPerson(input);
  const row = {
    id: randomUUID(), workspace_id: workspaceId, email, name, role: input.role,
    password_hash: await hashPassword(input.password), created_at: clock.now(),
  };
  // Only this workspace's members can be in the way (users_email_key is per workspace), so the answer is the same
  // whether or not the address has an account in another workspace: an admin learns nothing of the others. An
  // address that was refused because it was someone's elsewhere told them just that (issue 38). The insert itself
  // decides, so two admins adding the same address at once get one member and this answer, never a 500.
  const added = await db.insertInto('users').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
  if (!added) throw invalid('email', 'is a member of this workspace already');
  return { id: row.id, name, email, role: row.role, createdAt: row.created_at };
}

/** True while the installation has no workspace: the first visit to the UI sets it up. */
export async function setupNeeded(db: Kysely<DB>): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').limit(1).executeTakeFirst()) === undefined;
}

// Only one setup may win: the lock makes a second, concurrent one (in the browser or the CLI) wait for the first
// one's transaction to end, and then find a workspace.
const lockSetup = (db: Kysely<DB>) => sql`SELECT pg_advisory_xact_lock(7361204552)`.execute(db);

/** Creates the installation's first workspace and its admin, once. */
export async function setUpInstallation(
  db: Kysely<DB>,
  input: { workspaceName: string; name: string; email: string; password: string },
  clock: Clock,
): Promise<{ userId: string; workspaceId: string }> {
  const { email, name } = checkPerson(input);
  await lockSetup(db);
  if (!(await setupNeeded(db))) throw new AppError('invalid_state', 'This installation is already set up; sign in instead.');
  const workspace = await createWorkspace(db, { name: input.workspaceName, plan: 'free', adminEmail: email, adminName: name }, clock);
  await db.updateTable('users').set({ password_hash: await hashPassword(input.password) }).where('id', '=', workspace.adminUserId).execute();
  return { userId: workspace.adminUserId, workspaceId: workspace.id };
}

/**
 * Sets a user's password (the CLI's `user password`) and ends their sessions and unused reset links in the same
 * transaction: whoever was signed in with the old password is signed out. Null when there is no such user. An
 * address that is someone's in several workspaces needs `workspaceId`, to say whose password it is.
 */
export async function setPassword(
  db: Kysely<DB>, email: string, password: string, clock: Clock, workspaceId: string | null = null,
): Promise<{ id: string; email: string } | null> {
  checkPassword(password);
  const normal = normaliseEmail(email);
  const passwordHash = await hashPassword(password);
  return inTransaction(db, async (trx) => {
    let users = trx.selectFrom('users').select('id').where(sql`lower(email)`, '=', normal);
    if (workspaceId) users = users.where('workspace_id', '=', workspaceId);
    const found = await users.limit(2).execute();
    if (found.length > 1) {
      const errors = [{ field: 'workspace', message: 'is required for an address that is in more than one workspace' }];
      const message = `${normal} is a user in more than one workspace: name one with --workspace.`;
      throw new AppError('invalid_request', message, { errors });
    }
    const row = found[0] ? await trx.updateTable('users').set({ password_hash: passwordHash })
      .where('id', '=', found[0].id).returning(['id']).executeTakeFirst() : undefined;
    if (!row) return null;
    await endUserSessions(trx, row.id, clock);
    await endResetLinks(trx, row.id, clock);
    return { id: row.id, email: normal };
  });
}

/**
 * `leadrun setup`: on an empty installation, creates its first workspace and admin (who then sets a password with
 * `leadrun user password`); on one that is set up already, changes nothing. Either way it answers the
 * installation's first workspace, the one a setup made, so that whatever follows works on that one whether the
 * installation was set up in the browser, by an earlier `leadrun setup`, or just now. Holds the setup lock until
 * the caller's transaction ends.
 */
export async function setUpOrFindInstallation(
  db: Kysely<DB>,
  input: { workspaceName: string; plan: string; adminEmail: string },
  clock: Clock,
): Promise<{ workspace: WorkspaceSummary; created: boolean }> {
  const email = normaliseEmail(input.adminEmail);
  await lockSetup(db);
  const created = await setupNeeded(db);
  if (created) await createWorkspace(db, { name: input.workspaceName, plan: input.plan, adminEmail: email }, clock);
  const [first] = await listWorkspaces(db, { limit: 1 });
  return { workspace: first!, created };
}

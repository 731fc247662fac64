// The people of a workspace: members added by admins, their passwords, and the first-run setup that creates an
// installation's first workspace and admin. An e-mail address names one person in the whole installation: it is
// what they sign in with (docs/decisions/0004-e-mail-addresses-are-installation-wide.md).
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { inTransaction } from '../db/transaction.ts';
import type { DB, Role } from '../db/schema.ts';
import { AppError, invalid } from './errors.ts';
import { endResetLinks } from './password-resets.ts';
import { checkPassword, hashPassword } from './passwords.ts';
import { endUserSessions } from './sessions.ts';
import { isEmail, oneLineProblem } from './validation.ts';
import { createWorkspace, listWorkspaces, type WorkspaceSummary } from './workspaces.ts';

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

export async function addMember(
  db: Kysely<DB>,
  workspaceId: string,
  input: { name: string; email: string; role: Role; password: string },
  clock: Clock,
): Promise<Member> {
  const email = normaliseEmail(input.email);
  checkPassword(input.password);
  const name = input.name.trim();
  if (!name) throw invalid('name', 'must not be empty');
  // A name goes into the From header of the e-mails sent in this person's name: one line.
  const nameProblem = oneLineProblem(name);
  if (nameProblem) throw invalid('name', nameProblem);
  const row = {
    id: randomUUID(), workspace_id: workspaceId, email, name, role: input.role,
    password_hash: await hashPassword(input.password), created_at: clock.now(),
  };
  const added = await db.insertInto('users').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
  // The address is someone's already, in this workspace or another. The answer does not say which, nor that it is
  // taken: an admin must not learn who has an account in another workspace.
  if (!added) throw invalid('email', 'cannot be used for a new member; use another address');
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
  const email = normaliseEmail(input.email);
  checkPassword(input.password);
  const name = input.name.trim();
  if (!name) throw invalid('name', 'must not be empty');
  // A name goes into the From header of the e-mails sent in this person's name: one line.
  const nameProblem = oneLineProblem(name);
  if (nameProblem) throw invalid('name', nameProblem);
  await lockSetup(db);
  if (!(await setupNeeded(db))) throw new AppError('invalid_state', 'This installation is already set up; sign in instead.');
  const workspace = await createWorkspace(db, { name: input.workspaceName, plan: 'free', adminEmail: email, adminName: name }, clock);
  await db.updateTable('users').set({ password_hash: await hashPassword(input.password) }).where('id', '=', workspace.adminUserId).execute();
  return { userId: workspace.adminUserId, workspaceId: workspace.id };
}

/**
 * Sets a user's password (the CLI's `user password`) and ends their sessions and unused reset links in the same
 * transaction: whoever was signed in with the old password is signed out. Null when there is no such user.
 */
export async function setPassword(db: Kysely<DB>, email: string, password: string, clock: Clock): Promise<{ id: string; email: string } | null> {
  checkPassword(password);
  const normal = normaliseEmail(email);
  const passwordHash = await hashPassword(password);
  return inTransaction(db, async (trx) => {
    const row = await trx.updateTable('users').set({ password_hash: passwordHash })
      .where(sql`lower(email)`, '=', normal).returning(['id']).executeTakeFirst();
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

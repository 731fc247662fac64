// The people of a workspace: their passwords (scrypt), members added by admins, and the first-run setup that
// creates an installation's first workspace and admin.
import { randomBytes, randomUUID, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB, Role } from '../db/schema.ts';
import { AppError, invalid } from './errors.ts';
import { isEmail } from './validation.ts';
import { createWorkspace } from './workspaces.ts';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCallback(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));

// OWASP's recommended scrypt cost (N=2^17, r=8, p=1) needs 128 MiB a hash; 2^15 keeps sign-in fast on small
// machines and is stored with each hash, so it can be raised later without invalidating existing passwords.
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 64;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, { ...COST, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Compares in constant time. A missing hash still costs one scrypt, so an unknown e-mail is not faster. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$').split('$');
  if (scheme !== 'scrypt' || !salt || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), KEY_LENGTH, { N: Number(n), r: Number(r), p: Number(p), maxmem: 256 * 1024 * 1024 });
  return stored !== null && expected.length === actual.length && timingSafeEqual(expected, actual);
}

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN) throw invalid('password', `must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw invalid('password', `must be at most ${PASSWORD_MAX} characters`);
}

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
    .where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
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
  const taken = await db.selectFrom('users').select('id').where(sql`lower(email)`, '=', email).executeTakeFirst();
  if (taken) throw invalid('email', 'is already in use');
  const row = {
    id: randomUUID(), workspace_id: workspaceId, email, name, role: input.role,
    password_hash: await hashPassword(input.password), created_at: clock.now(),
  };
  await db.insertInto('users').values(row).execute();
  return { id: row.id, name, email, role: row.role, createdAt: row.created_at };
}

/** True while the installation has no workspace: the first visit to the UI sets it up. */
export async function setupNeeded(db: Kysely<DB>): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').limit(1).executeTakeFirst()) === undefined;
}

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
  // Only one setup may win: the lock makes a second, concurrent one wait and then find a workspace.
  await sql`SELECT pg_advisory_xact_lock(7361204552)`.execute(db);
  if (!(await setupNeeded(db))) throw new AppError('invalid_state', 'This installation is already set up; sign in instead.');
  const workspace = await createWorkspace(db, { name: input.workspaceName, plan: 'free', adminEmail: email, adminName: name }, clock);
  await db.updateTable('users').set({ password_hash: await hashPassword(input.password) }).where('id', '=', workspace.adminUserId).execute();
  return { userId: workspace.adminUserId, workspaceId: workspace.id };
}

/** Sets a user's password (the CLI's `user password`); null when there is no such user. */
export async function setPassword(db: Kysely<DB>, email: string, password: string): Promise<{ id: string; email: string } | null> {
  checkPassword(password);
  const normal = normaliseEmail(email);
  const row = await db.updateTable('users').set({ password_hash: await hashPassword(password) })
    .where(sql`lower(email)`, '=', normal).returning(['id']).executeTakeFirst();
  return row ? { id: row.id, email: normal } : null;
}

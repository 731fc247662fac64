// Web UI sessions. The session token (256 random bits) lives only in the user's HttpOnly cookie; the database
// keeps its SHA-256 digest, so a copy of the database signs nobody in. Each session has its own CSRF token, kept
// as a digest too.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DB, Plan, Role } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import { verifyPassword } from './passwords.ts';

export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** A session unused for this long ends early. */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;
// Failed sign-ins allowed in the window, then 429 until it moves on: per e-mail from one address (so that someone
// guessing elsewhere cannot lock the owner out), and per address over every e-mail (so that spraying one
// password over many accounts is slowed too). An IPv6 client counts by its /64 (the caller's `network`).
const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
const FAILURES_PER_EMAIL_AND_ADDRESS = 5;
const FAILURES_PER_ADDRESS = 20;

const digest = (token: string) => createHash('sha256').update(token).digest('hex');
// The CSRF token follows from the session token, so the UI can be given it again after a reload although the
// database keeps only its digest; it does not give the session token away.
const csrfTokenOf = (sessionToken: string) => createHmac('sha256', sessionToken).update('leadrun csrf').digest('base64url');

export interface SessionView {
  user: { id: string; name: string | null; email: string | null; role: Role };
  workspace: { id: string; name: string; plan: Plan; adminUserId: string | null };
  csrfToken: string;
  /** SHA-256 of the CSRF token, as stored: what a request's X-CSRF-Token is checked against. */
  csrfDigest: string;
  expiresAt: Date;
}

/** The X-CSRF-Token a request sent is the session's: their digests compared in constant time. */
export function csrfTokenMatches(session: SessionView, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(session.csrfDigest, 'hex');
  const actual = createHash('sha256').update(presented).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export async function createSession(
  db: Kysely<DB>, userId: string, clock: Clock, client: { ip: string | null; userAgent: string | null },
): Promise<{ token: string; session: SessionView }> {
  const token = randomBytes(32).toString('base64url');
  const now = clock.now();
  const user = await db.selectFrom('users').select(['workspace_id']).where('id', '=', userId).executeTakeFirstOrThrow();
  await db.insertInto('sessions').values({
    id: digest(token),
    user_id: userId,
    workspace_id: user.workspace_id,
    csrf_digest: digest(csrfTokenOf(token)),
    created_at: now,
    last_seen_at: now,
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
    revoked_at: null,
    ip: client.ip,
    user_agent: client.userAgent?.slice(0, 512) ?? null,
  }).execute();
  const session = await findSession(db, token, clock);
  if (!session) throw new Error('a session just created could not be read back');
  return { token, session };
}

/** The live session of a token; null when unknown, signed out, expired or idle too long. */
export async function findSession(db: Kysely<DB>, token: string, clock: Clock): Promise<SessionView | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const now = clock.now();
  const row = await db.selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('workspaces as w', 'w.id', 's.workspace_id')
    .select(['s.id', 's.csrf_digest', 's.expires_at', 's.last_seen_at', 'u.id as user_id', 'u.name as user_name', 'u.email', 'u.role',
      'w.id as workspace_id', 'w.name as workspace_name', 'w.plan', 'w.admin_user_id'])
    .where('s.id', '=', digest(token)).where('s.revoked_at', 'is', null).where('s.expires_at', '>', now)
    // A removal ends the person's sessions too; this keeps a removed person out even if one were missed.
    .where('u.removed_at', 'is', null)
    .where('s.last_seen_at', '>', new Date(now.getTime() - SESSION_IDLE_MS))
    .executeTakeFirst();
  if (!row) return null;
  // Note the use at most once a minute, which keeps a busy session from writing on every request.
  if (now.getTime() - row.last_seen_at.getTime() > 60_000) {
    await db.updateTable('sessions').set({ last_seen_at: now }).where('id', '=', row.id).execute();
  }
  return {
    user: { id: row.user_id, name: row.user_name, email: row.email, role: row.role },
    workspace: { id: row.workspace_id, name: row.workspace_name, plan: row.plan, adminUserId: row.admin_user_id },
    csrfToken: csrfTokenOf(token),
    csrfDigest: row.csrf_digest,
    expiresAt: row.expires_at,
  };
}

export async function endSession(db: Kysely<DB>, token: string, clock: Clock): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: clock.now() }).where('id', '=', digest(token)).where('revoked_at', 'is', null).execute();
}

/**
 * Ends every session of a user, in the database, so that every process refuses them at once: sessions are not
 * cached. For a changed password, and for a person who is no longer a member.
 */
export async function endUserSessions(db: Kysely<DB>, userId: string, clock: Clock): Promise<number> {
  const ended = await db.updateTable('sessions').set({ revoked_at: clock.now() })
    .where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(ended.numUpdatedRows);
}

/**
 * Checks an e-mail and password, counting failures: after too many for the e-mail from this address, or from
 * this address at all, in the window, every attempt is refused (429) without looking at the password. The answer
 * never says which part was wrong.
 */
export async function signIn(
  db: Kysely<DB>,
  input: { email: string; password: string },
  clock: Clock,
  client: { ip: string; userAgent: string | null; network: string },
): Promise<{ token: string; session: SessionView }> {
  const email = input.email.trim().toLowerCase().slice(0, 254);
  const now = clock.now();
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  // The attempt is counted as a failure before the password is checked, under a lock per address: attempts sent
  // all at once cannot each find the count still low.
  const attempt = await inTransaction(db, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`leadrun sign-in ${client.network}`}, 0))`.execute(trx);
    const failures = await trx.selectFrom('sign_in_attempts')
      .select((eb) => [
        eb.fn.countAll<string>().as('by_address'),
        eb.fn.count<string>('id').filterWhere('email', '=', email).as('by_email_and_address'),
      ])
      .where('ip', '=', client.network).where('succeeded', '=', false).where('attempted_at', '>', since)
      .executeTakeFirstOrThrow();
    if (Number(failures.by_email_and_address) >= FAILURES_PER_EMAIL_AND_ADDRESS || Number(failures.by_address) >= FAILURES_PER_ADDRESS) return null;
    return trx.insertInto('sign_in_attempts').values({ email, ip: client.network, succeeded: false, attempted_at: now })
      .returning('id').executeTakeFirstOrThrow();
  });
  if (!attempt) {
    throw new AppError('rate_limited', 'Too many failed sign-ins; wait a few minutes and try again.', { extra: { retryAfterSeconds: SIGN_IN_WINDOW_MS / 1000 } });
  }
  const user = await accountOf(db, email, input.password);
  if (!user) throw new AppError('unauthorized', 'The e-mail or password is not right.');
  await db.updateTable('sign_in_attempts').set({ succeeded: true }).where('id', '=', attempt.id).execute();
  return createSession(db, user.id, clock, client);
}

/**
 * The account an address and password sign in to. An address may be someone's in several workspaces (each
 * workspace's admin adds whom they like: docs/decisions/0008-addresses-are-unique-per-workspace.md); the password
 * is tried against each, and it is the account whose password it is. When it is the password of several (a person
 * who chose the same one in two workspaces), the one they signed in to last, then the oldest. An address with no
 * account costs one password check all the same.
 */
async function accountOf(db: Kysely<DB>, email: string, password: string): Promise<{ id: string } | null> {
  const accounts = await db.selectFrom('users as u')
    .select((eb) => ['u.id', 'u.password_hash', eb.selectFrom('sessions as s')
      .select((s) => s.fn.max('s.created_at').as('last')).whereRef('s.user_id', '=', 'u.id').as('last_signed_in')])
    .where((eb) => eb(eb.fn('lower', ['u.email']), '=', email)).where('u.password_hash', 'is not', null)
    .orderBy('last_signed_in', sql`desc nulls last`).orderBy('u.created_at').orderBy('u.id')
    .execute();
  if (accounts.length === 0) await verifyPassword(password, null);
  for (const account of accounts) {
    if (await verifyPassword(password, account.password_hash)) return { id: account.id };
  }
  return null;
}

// What every person changes about themselves: their name, the sender name and signature of the e-mails sent in their
// name (DESIGN §7), and their password.
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { DB } from '../../db/schema.ts';
import { AppError, invalid, notFound, type FieldError } from '../errors.ts';
import { endResetLinks } from './password-resets.ts';
import { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
import { endUserSessions } from './sessions.ts';
import { oneLineProblem } from '../validation.ts';

export async function renameUser(db: Kysely<DB>, workspaceId: string, userId: string, name: string): Promise<void> {
  const trimmed = name.trim();
  if (!trimmed) throw invalid('name', 'must not be empty');
  const problem = oneLineProblem(trimmed);
  if (problem) throw invalid('name', problem);
  const updated = await db.updateTable('users').set({ name: trimmed })
    .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw notFound('User');
}

export const SENDER_NAME_MAX = 100;
export const SIGNATURE_MAX = 2000;
export const SIGNATURE_MAX_LINES = 20;

// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

export interface Profile {
  name: string | null;
  email: string | null;
  /** The name on e-mails sent in this person's name; null: the workspace's sender name. */
  senderName: string | null;
  /** Plain text under the e-mails sent in this person's name. */
  signature: string | null;
}

export interface ProfileChange {
  name?: string;
  senderName?: string | null;
  signature?: string | null;
}

export async function getProfile(db: Kysely<DB>, workspaceId: string, userId: string): Promise<Profile> {
  const user = await db.selectFrom('users').select(['name', 'email', 'sender_name', 'signature'])
    .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  if (!user) throw notFound('User');
  return { name: user.name, email: user.email, senderName: user.sender_name, signature: user.signature };
}

/**
 * A signature as kept: line ends made \n, trailing spaces of each line and blank lines at either end dropped; null
 * when nothing is left. Plain text of at most 20 lines: it ends every e-mail, so it must not become the e-mail.
 */
export function normalSignature(signature: string): { value: string | null; problem: string | null } {
  const lines = signature.replace(/\r\n?/g, '\n').split('\n').map((line) => line.replace(/[ \t]+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  const value = lines.join('\n');
  if (CONTROL_BUT_LINES.test(value)) return { value: null, problem: 'must be plain text, without control characters' };
  if (lines.length > SIGNATURE_MAX_LINES) return { value: null, problem: `must be at most ${SIGNATURE_MAX_LINES} lines` };
  if (value.length > SIGNATURE_MAX) return { value: null, problem: `must be at most ${SIGNATURE_MAX} characters` };
  return { value: value || null, problem: null };
}

/** Changes what a person says about themselves: what the change leaves out stays; null or blank clears. */
export async function updateProfile(db: Kysely<DB>, workspaceId: string, userId: string, change: ProfileChange): Promise<Profile> {
  const errors: FieldError[] = [];
  const set: { name?: string; sender_name?: string | null; signature?: string | null } = {};
  if (change.name !== undefined) {
    const name = change.name.trim();
    // A person's name is the sender's name on the e-mails sent in their name when they set none: one line.
    const problem = name ? oneLineProblem(name) : 'must not be empty';
    if (problem) errors.push({ field: 'name', message: problem });
    set.name = name;
  }
  if (change.senderName !== undefined) {
    const senderName = change.senderName?.trim() || null;
    const problem = senderName ? oneLineProblem(senderName) : null;
    if (problem) errors.push({ field: 'senderName', message: problem });
    else if (senderName && senderName.length > SENDER_NAME_MAX) errors.push({ field: 'senderName', message: `must be at most ${SENDER_NAME_MAX} characters` });
    set.sender_name = senderName;
  }
  if (change.signature !== undefined) {
    const signature = change.signature === null ? { value: null, problem: null } : normalSignature(change.signature);
    if (signature.problem) errors.push({ field: 'signature', message: signature.problem });
    set.signature = signature.value;
  }
  if (errors.length === 1) throw invalid(errors[0]!.field, errors[0]!.message);
  if (errors.length > 1) throw new AppError('invalid_request', `The request is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, { errors });
  if (Object.keys(set).length > 0) {
    const updated = await db.updateTable('users').set(set)
      .where('id', '=', userId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) throw notFound('User');
  }
  return getProfile(db, workspaceId, userId);
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

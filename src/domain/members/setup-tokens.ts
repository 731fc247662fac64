// The one-time setup token. Whoever first reaches an empty installation sets it up and becomes its admin; on a
// server that listens only on loopback that is someone on the machine, but on any other address it could be
// anyone on the network. There `serve` issues a token at start and prints it, and setup needs it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../errors.ts';

const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Issues a new token (192 random bits) and stores its digest; the token itself is returned, to be printed. */
export async function issueSetupToken(db: Kysely<DB>, clock: Clock): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  await db.insertInto('setup_tokens').values({ digest: digestOf(token).toString('hex'), created_at: clock.now() }).execute();
  return token;
}

/**
 * Refuses (403) a missing token, or one that is not among those issued. Every stored digest is compared in constant
 * time, so the answer's timing says nothing about how close a guess came.
 */
export async function checkSetupToken(db: Kysely<DB>, token: string | undefined): Promise<void> {
  if (!token) {
    throw new AppError('forbidden', 'Setting up this installation needs the setup token that `leadrun serve` printed when it started.',
      { errors: [{ field: 'setupToken', message: 'is required: `leadrun serve` printed it when it started' }] });
  }
  const given = digestOf(token);
  const issued = await db.selectFrom('setup_tokens').select('digest').execute();
  let match = false;
  for (const { digest } of issued) match = timingSafeEqual(given, Buffer.from(digest, 'hex')) || match;
  if (!match) {
    throw new AppError('forbidden', 'The setup token is not right: give the one `leadrun serve` printed when it started.',
      { errors: [{ field: 'setupToken', message: 'is not the one `leadrun serve` printed' }] });
  }
}

/** Setup is done: no token is good for anything any more. */
export async function clearSetupTokens(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('setup_tokens').execute();
}

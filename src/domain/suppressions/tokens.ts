// Unsubscribe tokens (DESIGN §15): 256 random bits naming one workspace and one address, without expiry. The first
// e-mail to an address makes its token and every later one carries the same; a request names it, and is looked up by
// its SHA-256 digest. The token itself is kept sealed (src/domain/secret-box.ts), to be put in the next e-mail.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SecretBox } from '../secret-box.ts';
import { normalEmail } from './entries.ts';

const digestOf = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
const contextOf = (workspaceId: string, email: string) => `unsubscribe_tokens:${workspaceId}:${email}`;
/** What a token looks like: 43 base64url characters. Anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The address's token in the workspace, made on first use. */
export async function unsubscribeToken(db: Kysely<DB>, box: SecretBox, workspaceId: string, address: string, at: Date): Promise<string> {
  const email = normalEmail(address);
  const fresh = randomBytes(32).toString('base64url');
  await db.insertInto('unsubscribe_tokens')
    .values({ workspace_id: workspaceId, email, digest: digestOf(fresh), sealed_token: box.seal(fresh, contextOf(workspaceId, email)), created_at: at })
    .onConflict((oc) => oc.columns(['workspace_id', 'email']).doNothing())
    .execute();
  const row = await db.selectFrom('unsubscribe_tokens').select('sealed_token')
    .where('workspace_id', '=', workspaceId).where('email', '=', email).executeTakeFirstOrThrow();
  return box.open(row.sealed_token, contextOf(workspaceId, email));
}

/** The workspace and address a token names, or null for a token leadrun did not make. */
export async function tokenHolder(db: Kysely<DB>, token: string): Promise<{ workspaceId: string; email: string } | null> {
  if (!TOKEN.test(token)) return null;
  const row = await db.selectFrom('unsubscribe_tokens').select(['workspace_id', 'email'])
    .where('digest', '=', digestOf(token)).executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, email: row.email } : null;
}

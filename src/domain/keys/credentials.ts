// What a long-lived request (an event stream) was opened with: an API key or a UI session. A request is checked
// once, when it arrives; a stream lasts, so its credential is checked again while it is open, and the stream ends
// when the key is revoked or the session signed out, expired or idle.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { SESSION_IDLE_MS } from '../members/sessions.ts';

export interface Credential {
  kind: 'key' | 'session';
  /** The key's id, or the session's id (the digest of its token). */
  id: string;
}

export const credentialName = (credential: Credential): string => `${credential.kind}:${credential.id}`;

/** The credential of a UI session's token: sessions are stored under the SHA-256 digest of the token (sessions.ts). */
export function sessionCredential(token: string): Credential {
  return { kind: 'session', id: createHash('sha256').update(token).digest('hex') };
}

/** Which of the credentials still let their holder in, by `credentialName`, in one statement. */
export async function validCredentials(db: Kysely<DB>, credentials: Iterable<Credential>, now: Date): Promise<Set<string>> {
  const keyIds: string[] = [];
  const sessionIds: string[] = [];
  for (const c of credentials) (c.kind === 'key' ? keyIds : sessionIds).push(c.id);
  if (keyIds.length === 0 && sessionIds.length === 0) return new Set();
  const { rows } = await sql<{ name: string }>`
    SELECT 'key:' || id::text AS name FROM api_keys WHERE id = ANY(${keyIds}::uuid[]) AND revoked_at IS NULL
    UNION ALL
    SELECT 'session:' || id AS name FROM sessions
    WHERE id = ANY(${sessionIds}::text[]) AND revoked_at IS NULL AND expires_at > ${now}::timestamptz
      AND last_seen_at > ${new Date(now.getTime() - SESSION_IDLE_MS)}::timestamptz`.execute(db);
  return new Set(rows.map((r) => r.name));
}

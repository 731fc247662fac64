// API keys: `sk_` + 32 random base62 characters (190 bits) + a 6-character checksum. Only a SHA-256 digest of
// the whole key is stored; a key whose checksum is wrong is refused without touching the database.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, Plan } from '../../db/schema.ts';
import { AppError } from '../errors.ts';

/** Carries the digest of each revoked key to every process. */
export const KEY_REVOKED_CHANNEL = 'leadrun_key_revoked';

export const SCOPES = ['leads:read', 'leads:write', 'runs:read', 'runs:write', 'webhooks:read', 'webhooks:write', 'sequences:read', 'sequences:write'] as const;
export type Scope = (typeof SCOPES)[number];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^sk_[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
const PREFIX_LENGTH = 10; // "sk_" and 7 characters: enough to tell keys apart in a list, far too few to guess from

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes at or above it are dropped so that every character is equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateKey(): string {
  const body = randomBase62(BODY_LENGTH);
  return `sk_${body}${checksum(body)}`;
}

/** True when the key has the right shape and its checksum matches; says nothing of whether it exists. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(3, 3 + BODY_LENGTH);
  return checksum(body) === key.slice(3 + BODY_LENGTH);
}

export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function parseScopes(input: readonly string[]): Scope[] {
  const unknown = input.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new AppError('invalid_request', `Unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}.`, {
      errors: [{ field: 'scopes', message: `unknown scope ${unknown.join(', ')}` }],
    });
  }
  if (input.length === 0) {
    throw new AppError('invalid_request', 'A key needs at least one scope.', { errors: [{ field: 'scopes', message: 'must not be empty' }] });
  }
  return SCOPES.filter((s) => input.includes(s));
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  scopes: Scope[];
  createdAt: Date;
}

export async function createKey(
  db: Kysely<DB>,
  workspaceId: string,
  input: { name: string; scopes: readonly string[]; createdByUserId: string | null },
  clock: Clock,
): Promise<CreatedKey> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    throw new AppError('invalid_request', 'A key needs a name of 1 to 100 characters.', { errors: [{ field: 'name', message: 'must be 1 to 100 characters' }] });
  }
  const scopes = parseScopes(input.scopes);
  const workspace = await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst();
  if (!workspace) throw new AppError('not_found', 'Workspace was not found.');
  const key = generateKey();
  const row = {
    id: randomUUID(),
    workspace_id: workspaceId,
    name,
    prefix: key.slice(0, PREFIX_LENGTH),
    digest: keyDigest(key),
    scopes,
    created_by_user_id: input.createdByUserId,
    created_at: clock.now(),
  };
  await db.insertInto('api_keys').values(row).execute();
  return { id: row.id, key, prefix: row.prefix, name, scopes, createdAt: row.created_at };
}

/** Revokes a key at once; revoking it again keeps the first revocation time. Null when there is no such key. */
export async function revokeKey(db: Kysely<DB>, keyId: string, clock: Clock, workspaceId?: string) {
  let query = db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(clock.now())) }))
    .where('id', '=', keyId);
  if (workspaceId) query = query.where('workspace_id', '=', workspaceId);
  const revoked = (await query.returning(['id', 'workspace_id', 'digest', 'revoked_at']).executeTakeFirst()) ?? null;
  // Every process caching this key forgets it when the revocation commits (see KeyVerifier).
  if (revoked) await sql`SELECT pg_notify(${KEY_REVOKED_CHANNEL}, ${revoked.digest})`.execute(db);
  return revoked;
}

export interface KeyPrincipal {
  keyId: string;
  workspaceId: string;
  scopes: Scope[];
  plan: Plan;
  /** The workspace's admin: runs started with the key are attributed to this user. */
  adminUserId: string | null;
}

/** Looks a key up by its digest; null when unknown or revoked. */
export async function findActiveKey(db: Kysely<DB>, digest: string): Promise<KeyPrincipal | null> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
    .select(['k.id', 'k.workspace_id', 'k.scopes', 'k.revoked_at', 'w.plan', 'w.admin_user_id'])
    .where('k.digest', '=', digest)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null) return null;
  return { keyId: row.id, workspaceId: row.workspace_id, scopes: row.scopes as Scope[], plan: row.plan, adminUserId: row.admin_user_id };
}

/**
 * Remembers key look-ups for at most `ttlMs` (1 s by default), so a busy key costs one query a second while a
 * revocation made by any process still takes effect within the TTL. Revocations made in this process are
 * forgotten at once. Requests that miss the cache for the same key at the same time (a burst from one client, or
 * every request in flight when the entry expires) share one look-up.
 */
export class KeyVerifier {
  readonly #db: Kysely<DB>;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #cache = new Map<string, { principal: KeyPrincipal | null; expires: number }>();
  readonly #lookups = new Map<string, Promise<KeyPrincipal | null>>();

  constructor(db: Kysely<DB>, options: { ttlMs?: number; maxEntries?: number } = {}) {
    this.#db = db;
    this.#ttlMs = options.ttlMs ?? 1_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** Null for a malformed, unknown or revoked key. */
  verify(key: string): Promise<KeyPrincipal | null> {
    if (!isWellFormedKey(key)) return Promise.resolve(null);
    const digest = keyDigest(key);
    const hit = this.#cache.get(digest);
    if (hit && hit.expires > performance.now()) return Promise.resolve(hit.principal);
    return this.#lookups.get(digest) ?? this.#lookUp(digest);
  }

  #lookUp(digest: string): Promise<KeyPrincipal | null> {
    // The entry lives from when the look-up was asked, never longer: the TTL bounds how stale an answer can be.
    const asked = performance.now();
    const lookup = findActiveKey(this.#db, digest).then((principal) => {
      // A revocation heard while the look-up ran (forget) has dropped it: its answer may predate the revocation.
      if (this.#lookups.get(digest) === lookup) {
        if (this.#cache.size >= this.#maxEntries) this.#cache.clear();
        this.#cache.set(digest, { principal, expires: asked + this.#ttlMs });
      }
      return principal;
    }).finally(() => {
      if (this.#lookups.get(digest) === lookup) this.#lookups.delete(digest);
    });
    this.#lookups.set(digest, lookup);
    return lookup;
  }

  forget(digest: string): void {
    this.#cache.delete(digest);
    this.#lookups.delete(digest);
  }
}

/**
 * Write-behind `lastUsedAt`: the first use after a quiet second is written at once, later uses within that second
 * are folded into one write at its end. So the stored value is at most 1 s behind, and a busy key costs at most
 * one write per second.
 */
export class LastUsedRecorder {
  readonly #db: Kysely<DB>;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #keys = new Map<string, { lastWrite: number; pending: Date | null; timer: NodeJS.Timeout | null }>();
  readonly #inFlight = new Set<Promise<void>>();

  constructor(db: Kysely<DB>, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}) {
    this.#db = db;
    this.#intervalMs = options.intervalMs ?? 1_000;
    this.#onError = options.onError ?? (() => {});
  }

  record(keyId: string, at: Date): void {
    const now = performance.now();
    const state = this.#keys.get(keyId) ?? { lastWrite: -Infinity, pending: null, timer: null };
    this.#keys.set(keyId, state);
    if (!state.timer && now - state.lastWrite >= this.#intervalMs) {
      state.lastWrite = now;
      this.#write(keyId, at);
      return;
    }
    if (!state.pending || state.pending < at) state.pending = at;
    if (!state.timer) {
      state.timer = setTimeout(() => this.#flushKey(keyId), Math.max(0, state.lastWrite + this.#intervalMs - now));
      state.timer.unref();
    }
  }

  #flushKey(keyId: string): void {
    const state = this.#keys.get(keyId);
    if (!state) return;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    if (state.pending) {
      state.lastWrite = performance.now();
      this.#write(keyId, state.pending);
      state.pending = null;
    } else {
      this.#keys.delete(keyId);
    }
  }

  #write(keyId: string, at: Date): void {
    const write = this.#db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute()
      .then(() => {}, this.#onError)
      .finally(() => this.#inFlight.delete(write));
    this.#inFlight.add(write);
  }

  /** Writes everything still pending; called at shutdown. */
  async flush(): Promise<void> {
    for (const keyId of [...this.#keys.keys()]) this.#flushKey(keyId);
    await Promise.all(this.#inFlight);
  }
}

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  /** Who made the key in the UI; `removed` once they are no longer a member (the key stays valid unless revoked). */
  createdBy: { id: string; name: string | null; email: string | null; removed: boolean } | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  state: 'active' | 'revoked';
}

/** The workspace's keys for Settings / API keys, newest first; never the digest. */
export async function listKeys(db: Kysely<DB>, workspaceId: string, keyId?: string): Promise<KeyView[]> {
  let query = db.selectFrom('api_keys as k')
    .leftJoin('users as u', 'u.id', 'k.created_by_user_id')
    .select(['k.id', 'k.name', 'k.prefix', 'k.scopes', 'k.created_at', 'k.last_used_at', 'k.revoked_at', 'u.id as user_id', 'u.name as user_name', 'u.removed_at'])
    .select((eb) => eb.fn.coalesce('u.email', 'u.removed_email').as('email'))
    .where('k.workspace_id', '=', workspaceId);
  if (keyId) query = query.where('k.id', '=', keyId);
  const rows = await query.orderBy('k.created_at', 'desc').orderBy('k.id', 'desc').execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes,
    createdBy: r.user_id ? { id: r.user_id, name: r.user_name, email: r.email, removed: r.removed_at !== null } : null,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    state: r.revoked_at ? 'revoked' : 'active',
  }));
}

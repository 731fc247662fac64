// Every API mutation goes through `mutate`: the change, its audit entry and (with an Idempotency-Key) the stored
// response commit in one transaction, tried again when PostgreSQL ends it for a deadlock. A POST that fails still
// gets its audit entry, written as the answer leaves.
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { inTransaction, retryConflicts } from '../db/transaction.ts';
import { writeAudit, type AuditDetails, type AuditEntryInput } from '../domain/audit/audit.ts';
import { AppError } from '../domain/errors.ts';
import { principalOf } from './auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the request's audit entry has been written (in the mutation's transaction). */
    audited: boolean;
    /** The Idempotency-Key this request holds while in flight. */
    idempotency: { keyId: string; key: string; hash: string } | null;
  }
}

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
// A first request that has not finished in this time is taken to have died; a retry may then take its place.
const IN_FLIGHT_MS = 60 * 1000;

export interface Outcome<T> {
  status: number;
  /** null for an answer without a body (204). */
  body: T | null;
  location?: string;
  /** What the change acted on; null for one that acted on many rows (an import). */
  target: { type: string; id: string } | null;
  /** Counts for the audit entry (an import's); never personal data. */
  details?: AuditDetails;
  /**
   * Runs once the change has committed, before the answer is sent: to set a new session's cookie, say, or to send an
   * e-mail whose outcome the body then tells (it may change the body it was given).
   */
  afterCommit?: (reply: FastifyReply) => void | Promise<void>;
}

export interface MutationDeps {
  db: Kysely<DB>;
  clock: Clock;
}

/** Where a request came from, as every audit entry records it. */
export function auditContext(request: FastifyRequest) {
  return {
    requestId: request.id,
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
  };
}

/** The audit action of a request: its route's, which may depend on what was asked (reject, or regenerate). */
export function auditActionOf(request: FastifyRequest, fallback: string): string {
  const action = request.routeOptions.config.auditAction;
  return typeof action === 'function' ? action(request) : action ?? fallback;
}

/**
 * A change that writes its own audit entry, `audit(target, status)`, with itself: as one statement when it can, else
 * in a transaction of its own. It answers null, having written nothing, to leave the change to `mutate`'s transaction.
 */
export type ChangeAlone<T> = (db: Kysely<DB>, audit: (target: Outcome<T>['target'], status: number) => AuditEntryInput) =>
  Promise<Omit<Outcome<T>, 'afterCommit' | 'details'> | null>;

/**
 * Runs `change` in a transaction with its audit entry and idempotent response, then sends the outcome. `change` may
 * run more than once (after a deadlock, see inTransaction): it writes only through `trx` and leaves what must happen
 * after the commit to `afterCommit`. A route whose change is usually one statement gives `alone` too, which is tried
 * first when the request holds no Idempotency-Key: one round trip instead of a transaction's four or more.
 */
export async function mutate<T>(
  deps: MutationDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  change: (trx: Transaction<DB>) => Promise<Outcome<T>>,
  alone?: ChangeAlone<T>,
): Promise<FastifyReply> {
  const principal = principalOf(request);
  const action = auditActionOf(request, `${request.method} ${request.routeOptions.url}`);
  const entry = (target: Outcome<T>['target'], status: number, details: AuditDetails | null = null) => ({
    workspaceId: principal.workspaceId,
    source: principal.source,
    keyId: principal.keyId,
    userId: principal.userId,
    action,
    target,
    outcome: 'success' as const,
    status,
    occurredAt: deps.clock.now(),
    details,
    ...auditContext(request),
  });
  const outcome: Outcome<T> = (alone && !request.idempotency
    ? await retryConflicts(() => alone(deps.db, entry))
    : null) ?? await inTransaction(deps.db, async (trx) => {
    const result = await change(trx);
    await writeAudit(trx, entry(result.target, result.status, result.details ?? null));
    if (request.idempotency) {
      await trx.updateTable('idempotency_keys').set({
        locked_until: null,
        response_status: result.status,
        response_body: result.body === null ? null : sql`${JSON.stringify(result.body)}::jsonb`,
        response_location: result.location ?? null,
        target_type: result.target?.type ?? null,
        target_id: result.target?.id ?? null,
      }).where('key_id', '=', request.idempotency.keyId).where('idempotency_key', '=', request.idempotency.key).execute();
    }
    return result;
  });
  request.audited = true;
  request.idempotency = null;
  await outcome.afterCommit?.(reply);
  if (outcome.location) reply.header('location', outcome.location);
  if (outcome.body === null) return reply.code(outcome.status).send();
  return reply.code(outcome.status).send(outcome.body);
}

/**
 * preHandler of POST routes: claims the Idempotency-Key, or answers for it (a replay, 409 while the first is in
 * flight, 422 for another body). Runs after validation, so a refused body never holds a key.
 */
export function idempotency(deps: MutationDeps) {
  return async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new AppError('invalid_request', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.', {
        errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
      });
    }
    const principal = principalOf(request);
    // Idempotency keys belong to API keys; the UI does not send them.
    if (!principal.keyId) return;
    // A body read as raw bytes (a lead import's file) is hashed as it came, not as JSON of a Buffer.
    const body = Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body ?? null);
    const hash = createHash('sha256').update(`${request.method} ${request.url}\n`).update(body).digest('hex');
    const now = deps.clock.now();
    const unclaimed = {
      request_hash: hash, locked_until: new Date(now.getTime() + IN_FLIGHT_MS), created_at: now,
      response_status: null, response_body: null, response_location: null, target_type: null, target_id: null,
    };
    const claimed = await deps.db.insertInto('idempotency_keys')
      .values({ key_id: principal.keyId, idempotency_key: key, ...unclaimed })
      .onConflict((oc) => oc.columns(['key_id', 'idempotency_key']).doUpdateSet(unclaimed).where((eb) => eb.or([
        // An expired record is forgotten; a first request that died in flight is taken over.
        eb('idempotency_keys.created_at', '<', new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)),
        eb.and([eb('idempotency_keys.response_status', 'is', null), eb('idempotency_keys.locked_until', '<', now), eb('idempotency_keys.request_hash', '=', hash)]),
      ])))
      .returning('key_id')
      .executeTakeFirst();
    if (claimed) {
      request.idempotency = { keyId: principal.keyId, key, hash };
      return;
    }
    const existing = await deps.db.selectFrom('idempotency_keys').selectAll()
      .where('key_id', '=', principal.keyId).where('idempotency_key', '=', key).executeTakeFirst();
    if (!existing) throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is in progress; retry shortly.');
    if (existing.request_hash !== hash) {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request; use a new key for a new request.');
    }
    if (existing.response_status === null) {
      throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress; retry shortly.');
    }
    request.audited = true;
    await writeAudit(deps.db, {
      workspaceId: principal.workspaceId,
      source: principal.source,
      keyId: principal.keyId,
      userId: principal.userId,
      action: auditActionOf(request, request.method),
      target: existing.target_type && existing.target_id ? { type: existing.target_type, id: existing.target_id } : null,
      outcome: 'replayed',
      status: existing.response_status,
      occurredAt: deps.clock.now(),
      ...auditContext(request),
    });
    if (existing.response_location) reply.header('location', existing.response_location);
    if (existing.response_body === null) return reply.code(existing.response_status).header('idempotent-replayed', 'true').send();
    return reply.code(existing.response_status).header('idempotent-replayed', 'true')
      .type('application/json; charset=utf-8').serializer(JSON.stringify).send(existing.response_body);
  };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * onSend of every route: a mutating request made with a valid key that did not commit its audit entry (it was
 * refused or failed) records one now; a failed request gives its Idempotency-Key back, so it can be retried.
 */
export function auditRefusals(deps: MutationDeps) {
  return async function onSend(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.idempotency) {
      const { keyId, key } = request.idempotency;
      request.idempotency = null;
      await deps.db.deleteFrom('idempotency_keys')
        .where('key_id', '=', keyId).where('idempotency_key', '=', key).where('response_status', 'is', null)
        .execute().catch((error: unknown) => request.log.warn({ err: error }, 'could not release an idempotency key'));
    }
    if (!MUTATING.has(request.method) || request.audited || !request.principal) return;
    request.audited = true;
    const status = reply.statusCode;
    await writeAudit(deps.db, {
      workspaceId: request.principal.workspaceId,
      source: request.principal.source,
      keyId: request.principal.keyId,
      userId: request.principal.userId,
      action: auditActionOf(request, `${request.method} ${request.routeOptions.url ?? request.url}`),
      target: null,
      outcome: status === 401 || status === 403 ? 'denied' : 'failure',
      status,
      occurredAt: deps.clock.now(),
      ...auditContext(request),
    }).catch((error: unknown) => request.log.error({ err: error }, 'could not write the audit entry of a refused request'));
  };
}

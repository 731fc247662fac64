// Webhook endpoints (DESIGN §9): made, read, changed and removed by a workspace's admins (or keys with the
// webhooks scopes); the delivery log with replay, the test event, and secret roll-over. Every query is scoped to
// the workspace: another workspace's endpoint is "not found". The secret is shown once, when it is made.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { DB, WebhookDeliveryStatus, WebhookEndpointsTable } from '../../db/schema.ts';
import type { SecretBox } from '../secret-box.ts';
import { AppError, invalid, notFound } from '../errors.ts';
import { readPage, type Cursor } from '../pagination.ts';
import { isUuid } from '../validation.ts';
import {
  emitWebhookEvent, eventReadScope, queueWebhookDelivery, readScopesOf, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT,
  type WebhookEventType,
} from './events.ts';
import { newWebhookSecret, secretContext } from './signing.ts';
import { AddressRefused } from '../../net/address-guard.ts';
import { parseEndpointUrl, resolveEndpointHost, WebhookUrlRefused } from './url.ts';

/** More endpoints than a workspace could mean: each one multiplies every change's deliveries. */
export const ENDPOINTS_MAX = 20;
/** How long the previous secret signs too after a roll-over. */
export const ROLL_OVER_MS = 24 * 3_600_000;

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  /** Until when the previous secret signs too, after a roll-over. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookDelivery {
  id: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  lastResponseExcerpt: string | null;
  lastDurationMs: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointDeps {
  secrets: () => SecretBox;
  clock: Clock;
  allowPrivateHosts: boolean;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toEndpoint(r: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: r.id, url: r.url, description: r.description, events: r.events, enabled: r.enabled,
    disabledReason: r.disabled_reason, disabledAt: iso(r.disabled_at), failingSince: iso(r.failing_since),
    previousSecretExpiresAt: iso(r.previous_secret_expires_at),
    createdAt: iso(r.created_at)!, updatedAt: iso(r.updated_at)!,
  };
}

/**
 * Checks an endpoint URL: its form, then where its host points (the private-address guard). Resolving takes time,
 * so call it before the transaction. A refusal is a 400 naming `url`.
 */
export async function checkEndpointUrl(url: string, allowPrivateHosts: boolean): Promise<void> {
  try {
    await resolveEndpointHost(parseEndpointUrl(url), allowPrivateHosts);
  } catch (error) {
    if (error instanceof WebhookUrlRefused || error instanceof AddressRefused) throw invalid('url', error.message);
    throw error;
  }
}

/**
 * Refuses (403, naming the scope) an endpoint its maker could not read the events of: each type it names needs the
 * read scope of its data (leads:read for `lead.*`, runs:read for `run.*` and `draft.*`), and no `events`, which means
 * every type, needs both. `scopes` are those of the key making or changing it; an admin (the UI, the command line)
 * holds them all.
 */
export function assertMayReceive(events: readonly string[], scopes: readonly string[]): void {
  const every = events.length === 0;
  for (const type of every ? WEBHOOK_EVENT_TYPES : events) {
    const scope = eventReadScope(type as WebhookEventType);
    if (scopes.includes(scope)) continue;
    const detail = every
      ? 'An endpoint with no events receives every event type, which needs a key with the leads:read and runs:read '
        + 'scopes; name the event types this key may read instead (lead.* with leads:read; run.* and draft.* with '
        + 'runs:read).'
      : `Receiving ${type} events needs a key with the ${scope} scope: they carry what ${scope} reads.`;
    throw new AppError('insufficient_scope', detail, { extra: { requiredScope: scope } });
  }
}

async function lockEndpoint(db: Kysely<DB>, workspaceId: string, id: string) {
  const row = isUuid(id)
    ? await db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/**
 * Makes an endpoint for someone holding `scopes`: refused (403) when it would receive what they cannot read, and
 * stored with their read scopes, so that no event outside them is ever sent to it.
 */
export async function createEndpoint(
  trx: Kysely<DB>, workspaceId: string, input: { url: string; description?: string | null; events?: string[] }, deps: EndpointDeps,
  scopes: readonly string[],
): Promise<WebhookEndpoint & { secret: string }> {
  assertMayReceive(input.events ?? [], scopes);
  // Counted under the workspace's lock, so that endpoints made at once cannot pass the limit together.
  await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirst();
  const { count } = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  if (Number(count) >= ENDPOINTS_MAX) {
    throw new AppError('invalid_state', `A workspace has at most ${ENDPOINTS_MAX} webhook endpoints; remove one first.`);
  }
  const id = randomUUID();
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await trx.insertInto('webhook_endpoints').values({
    id, workspace_id: workspaceId, url: input.url, description: input.description?.trim() || null, events: [...new Set(input.events ?? [])],
    read_scopes: readScopesOf(scopes),
    secret: deps.secrets().seal(secret, secretContext(id, 'secret')), previous_secret: null, previous_secret_expires_at: null,
    enabled: true, disabled_reason: null, disabled_at: null, failing_since: null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return { ...toEndpoint(row), secret };
}

export async function listEndpoints(db: Kysely<DB>, workspaceId: string): Promise<WebhookEndpoint[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId)
    .orderBy('created_at').orderBy('id').execute();
  return rows.map(toEndpoint);
}

export async function getEndpoint(db: Kysely<DB>, workspaceId: string, id: string): Promise<WebhookEndpoint | null> {
  if (!isUuid(id)) return null;
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

/**
 * Changes what is sent; enabling a disabled endpoint clears why it was disabled and its run of failures. Setting its
 * url or events is making it anew, for someone holding `scopes`: refused (403) when the events it will receive need
 * a scope they lack (a key may not point an admin's endpoint elsewhere), and it then holds their read scopes. Its
 * pending deliveries outside those are not sent.
 */
export async function updateEndpoint(
  trx: Kysely<DB>, workspaceId: string, id: string,
  input: { url?: string; description?: string | null; events?: string[]; enabled?: boolean }, clock: Clock,
  scopes: readonly string[],
): Promise<WebhookEndpoint> {
  const resubscribing = input.url !== undefined || input.events !== undefined;
  const readScopes = readScopesOf(scopes);
  const unreadable = WEBHOOK_EVENT_TYPES.filter((type) => !readScopes.includes(eventReadScope(type)));
  // Locked before the endpoint, the order a delivery being recorded takes them in (see deleteEndpoint).
  const withheld = resubscribing && unreadable.length > 0 && isUuid(id)
    ? (await sql<{ id: string }>`SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
        WHERE d.endpoint_id = ${id} AND d.workspace_id = ${workspaceId} AND d.status = 'PENDING'
          AND e.type = ANY(${sql.val(unreadable)}::text[])
        ORDER BY d.id FOR UPDATE OF d`.execute(trx)).rows.map((r) => r.id)
    : [];
  const current = await lockEndpoint(trx, workspaceId, id);
  if (resubscribing) assertMayReceive(input.events ?? current.events, scopes);
  const now = clock.now();
  if (withheld.length > 0) {
    // A job that finds its delivery no longer PENDING stops without sending it.
    await trx.updateTable('webhook_deliveries').set({
      status: 'FAILED', next_attempt_at: null, updated_at: now,
      last_error: 'Not sent: the endpoint was changed by a key that may not read these events '
        + `(${readScopes.join(', ') || 'no read scope'}).`,
    }).where('id', 'in', withheld).where('status', '=', 'PENDING').execute();
  }
  const enabling = input.enabled === true && !current.enabled;
  const disabling = input.enabled === false && current.enabled;
  const row = await trx.updateTable('webhook_endpoints').set({
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.description !== undefined ? { description: input.description?.trim() || null } : {}),
    ...(input.events !== undefined ? { events: [...new Set(input.events)] } : {}),
    ...(resubscribing ? { read_scopes: readScopes } : {}),
    ...(enabling ? { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null } : {}),
    ...(disabling ? { enabled: false, disabled_reason: 'Disabled by an admin.', disabled_at: now } : {}),
    updated_at: now,
  }).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toEndpoint(row);
}

/** Removes the endpoint with its deliveries and their log; the events stay for the other endpoints. */
export async function deleteEndpoint(trx: Kysely<DB>, workspaceId: string, id: string): Promise<{ id: string }> {
  // Its deliveries first, then the endpoint, then their jobs: the order a delivery being recorded takes them in
  // (settle in deliver.ts), so that deleting an endpoint while its last delivery is recorded waits instead of
  // deadlocking with it.
  if (isUuid(id)) {
    await sql`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${id} AND workspace_id = ${workspaceId} ORDER BY id FOR UPDATE`.execute(trx);
  }
  const current = await lockEndpoint(trx, workspaceId, id);
  await sql`DELETE FROM jobs WHERE kind = 'webhook.deliver'
    AND key IN (SELECT id::text FROM webhook_deliveries WHERE endpoint_id = ${current.id})`.execute(trx);
  await trx.deleteFrom('webhook_endpoints').where('id', '=', current.id).execute();
  return { id: current.id };
}

/** A new secret, shown once; the one it replaces keeps signing for 24 hours, so receivers can switch in between. */
export async function rotateSecret(trx: Kysely<DB>, workspaceId: string, id: string, deps: EndpointDeps): Promise<WebhookEndpoint & { secret: string }> {
  const current = await lockEndpoint(trx, workspaceId, id);
  const box = deps.secrets();
  const previous = box.open(current.secret, secretContext(current.id, 'secret'));
  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const row = await trx.updateTable('webhook_endpoints').set({
    secret: box.seal(secret, secretContext(current.id, 'secret')),
    previous_secret: box.seal(previous, secretContext(current.id, 'previous_secret')),
    previous_secret_expires_at: new Date(now.getTime() + ROLL_OVER_MS),
    updated_at: now,
  }).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return { ...toEndpoint(row), secret };
}

/** A `webhook.test` event to this endpoint alone, whatever events it wants. 409 when it is disabled. */
export async function sendTestEvent(trx: Kysely<DB>, workspaceId: string, id: string, clock: Clock): Promise<WebhookDelivery> {
  const current = await lockEndpoint(trx, workspaceId, id);
  if (!current.enabled) throw new AppError('invalid_state', 'The endpoint is disabled: enable it before sending it a test event.');
  const now = clock.now();
  const eventId = await emitWebhookEvent(trx, workspaceId, WEBHOOK_TEST_EVENT, {
    endpointId: current.id, message: 'A test event from leadrun: this endpoint receives and verifies webhooks.',
  }, { at: now, endpointId: current.id });
  const delivery = await trx.selectFrom('webhook_deliveries').select('id')
    .where('event_id', '=', eventId!).where('endpoint_id', '=', current.id).executeTakeFirstOrThrow();
  return (await getDelivery(trx, workspaceId, current.id, delivery.id))!;
}

/**
 * Replays a delivery: the same event (same webhook-id) again, as a new delivery with its own log. 409 when the
 * endpoint no longer holds the event's read scope (its url or events were set since by a key without it).
 */
export async function replayDelivery(trx: Kysely<DB>, workspaceId: string, endpointId: string, deliveryId: string, clock: Clock): Promise<WebhookDelivery> {
  const endpoint = await lockEndpoint(trx, workspaceId, endpointId);
  if (!endpoint.enabled) throw new AppError('invalid_state', 'The endpoint is disabled: enable it before replaying a delivery.');
  const original = isUuid(deliveryId)
    ? await trx.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.event_id', 'e.run_id', 'e.type'])
      .where('d.workspace_id', '=', workspaceId).where('d.endpoint_id', '=', endpoint.id).where('d.id', '=', deliveryId)
      .executeTakeFirst()
    : undefined;
  if (!original) throw notFound('Delivery');
  if (original.type !== WEBHOOK_TEST_EVENT) {
    const scope = (WEBHOOK_EVENT_TYPES as readonly string[]).includes(original.type)
      ? eventReadScope(original.type as WebhookEventType) : null;
    if (scope === null || !endpoint.read_scopes.includes(scope)) {
      throw new AppError('invalid_state', `This endpoint no longer receives ${original.type} events: it was last set `
        + `up by a key without the ${scope ?? 'needed'} scope. Set its events again with a key that holds it to replay `
        + 'this delivery.');
    }
  }
  const id = await queueWebhookDelivery(trx, workspaceId, original.event_id, endpoint.id, original.run_id, clock.now());
  return (await getDelivery(trx, workspaceId, endpoint.id, id))!;
}

const DELIVERY_COLUMNS = [
  'd.id', 'd.event_id', 'e.type', 'd.status', 'd.attempts', 'd.next_attempt_at', 'd.last_status', 'd.last_error',
  'd.last_response_excerpt', 'd.last_duration_ms', 'd.created_at', 'd.updated_at',
] as const;

type DeliveryRow = {
  id: string; event_id: string; type: string; status: WebhookDeliveryStatus; attempts: number; next_attempt_at: Date | null;
  last_status: number | null; last_error: string | null; last_response_excerpt: string | null; last_duration_ms: number | null;
  created_at: Date; updated_at: Date;
};

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id, eventId: r.event_id, eventType: r.type, status: r.status, attempts: r.attempts, nextAttemptAt: iso(r.next_attempt_at),
    lastStatus: r.last_status, lastError: r.last_error, lastResponseExcerpt: r.last_response_excerpt, lastDurationMs: r.last_duration_ms,
    createdAt: iso(r.created_at)!, updatedAt: iso(r.updated_at)!,
  };
}

async function getDelivery(db: Kysely<DB>, workspaceId: string, endpointId: string, id: string): Promise<WebhookDelivery | null> {
  const row = await db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(DELIVERY_COLUMNS).where('d.workspace_id', '=', workspaceId).where('d.endpoint_id', '=', endpointId).where('d.id', '=', id)
    .executeTakeFirst();
  return row ? toDelivery(row as DeliveryRow) : null;
}

/** The delivery log of an endpoint, newest first, a page at a time; null when the workspace has no such endpoint. */
export async function listDeliveries(
  db: Kysely<DB>, workspaceId: string, endpointId: string, options: { limit: number; cursor?: Cursor | null },
): Promise<{ items: WebhookDelivery[]; next: Cursor | null } | null> {
  if (!(await getEndpoint(db, workspaceId, endpointId))) return null;
  const query = db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(DELIVERY_COLUMNS).where('d.workspace_id', '=', workspaceId).where('d.endpoint_id', '=', endpointId);
  return readPage(query, { at: 'd.created_at', id: 'd.id' }, options, (r) => toDelivery(r as DeliveryRow), (d) => ({ at: new Date(d.createdAt), id: d.id }));
}

export interface WebhookAttempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

/** Every attempt of one delivery, first first; null when there is no such delivery of the endpoint. */
export async function listAttempts(db: Kysely<DB>, workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookAttempt[] | null> {
  if (!isUuid(endpointId) || !isUuid(deliveryId) || !(await getDelivery(db, workspaceId, endpointId, deliveryId))) return null;
  const rows = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
  return rows.map((r) => ({
    attempt: r.attempt, at: iso(r.at)!, statusCode: r.status_code, durationMs: r.duration_ms, responseExcerpt: r.response_excerpt, error: r.error,
  }));
}

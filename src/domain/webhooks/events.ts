// The webhook outbox (DESIGN §9): an event is written in the same transaction as the change it reports, with one
// delivery per enabled endpoint of the workspace that wants its type and one `webhook.deliver` job per delivery
// (src/jobs/handlers/webhook-deliver.ts). A workspace without such an endpoint costs the change one indexed look-up and
// no row, and the event's data is not even rendered.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { enqueueJob, wakeRunners } from '../../jobs/sql/enqueueJob.ts';
import { WEBHOOK_EVENT_TYPES } from '../../schemas/webhooks.ts';

export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The read scopes an endpoint's data can come from: an endpoint holds some of them (`read_scopes`). */
export const EVENT_READ_SCOPES = ['leads:read', 'runs:read'] as const;
export type EventReadScope = (typeof EVENT_READ_SCOPES)[number];

/**
 * The scope that reads an event type's data: a `lead.*` event carries the lead, a `run.*` or `draft.*` one the run
 * with its steps' outputs and its draft. An endpoint is sent a type only when it holds the type's scope.
 */
export function eventReadScope(type: WebhookEventType): EventReadScope {
  return type.startsWith('lead.') || type.startsWith('recipient.') ? 'leads:read' : 'runs:read';
}

/** The read scopes among `scopes`, in their usual order. */
export function readScopesOf(scopes: readonly string[]): EventReadScope[] {
  return EVENT_READ_SCOPES.filter((s) => scopes.includes(s));
}
/** Sent to one endpoint on request ("Send test event"); never to an endpoint by its `events`. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const WEBHOOK_DELIVER = 'webhook.deliver';
/**
 * The attempts a delivery's job is queued with: as many as WEBHOOK_RETRY_SECONDS may ask for (20 retries and the
 * first). The runner gives a job the lesser of these and its kind's RetryPolicy's (webhookHandler: one attempt more
 * than its delays, 7 by default), and counts them; the delivery's `attempts` mirrors that count.
 */
export const WEBHOOK_JOB_MAX_ATTEMPTS = 21;

export interface WebhookDeliverPayload {
  deliveryId: string;
}

export interface EmitOptions {
  at: Date;
  /** The run the event is about: its deliveries to one endpoint go out in order. */
  runId?: string | null;
  /** The lead whose data the event carries: erasing the lead erases the event. */
  leadId?: string | null;
  /** Only this endpoint, whatever its `events` (the test event). */
  endpointId?: string;
}

/**
 * The enabled endpoints of the workspace that want `type` and hold its read scope: the one look-up every change
 * makes. An endpoint that wants every type (no `events`) is sent only those its scopes read.
 */
async function subscribedEndpoints(trx: Kysely<DB>, workspaceId: string, type: string, endpointId?: string): Promise<string[]> {
  let query = trx.selectFrom('webhook_endpoints').select('id')
    .where('workspace_id', '=', workspaceId).where('enabled', '=', true);
  if (endpointId) {
    query = query.where('id', '=', endpointId);
  } else {
    // A type of no known scope is sent to no one: a new type must be given its scope before it can be sent.
    const known = (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
    const scope = known ? eventReadScope(type as WebhookEventType) : null;
    if (scope === null) return [];
    query = query
      .where((eb) => eb.or([
        sql<boolean>`cardinality(${eb.ref('events')}) = 0`, sql<boolean>`${type} = ANY(${eb.ref('events')})`,
      ]))
      .where(sql<boolean>`${scope} = ANY(read_scopes)`);
  }
  return (await query.execute()).map((r) => r.id);
}

/** Whether the workspace has an enabled endpoint at all: lets a hot path skip the transaction an event would need. */
export async function hasWebhookEndpoints(db: Kysely<DB>, workspaceId: string): Promise<boolean> {
  const row = await db.selectFrom('webhook_endpoints').select('id')
    .where('workspace_id', '=', workspaceId).where('enabled', '=', true).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Writes the event, its deliveries and their jobs in `trx`. `data` is the object as the API returns it, or a
 * function that reads it (inside `trx`, so it sees the change), called only when an endpoint wants the event; a
 * function answering null (the object is gone) writes nothing. Answers the event's id, or null when nothing was written.
 */
export async function emitWebhookEvent(
  trx: Kysely<DB>, workspaceId: string, type: string, data: unknown | (() => Promise<unknown>), options: EmitOptions,
): Promise<string | null> {
  const endpoints = await subscribedEndpoints(trx, workspaceId, type, options.endpointId);
  if (endpoints.length === 0) return null;
  const value = typeof data === 'function' ? await (data as () => Promise<unknown>)() : data;
  if (value === null || value === undefined) return null;
  const id = randomUUID();
  const payload = { type, timestamp: options.at.toISOString(), data: value };
  await trx.insertInto('webhook_events').values({
    id, workspace_id: workspaceId, type, payload: sql`${JSON.stringify(payload)}::jsonb`, occurred_at: options.at,
    run_id: options.runId ?? null, lead_id: options.leadId ?? null,
  }).execute();
  for (const endpointId of endpoints) await queueWebhookDelivery(trx, workspaceId, id, endpointId, options.runId ?? null, options.at);
  return id;
}

/** One delivery of an event to an endpoint, and its job. Answers the delivery's id. */
export async function queueWebhookDelivery(
  trx: Kysely<DB>, workspaceId: string, eventId: string, endpointId: string, runId: string | null, now: Date,
): Promise<string> {
  const id = randomUUID();
  await trx.insertInto('webhook_deliveries').values({
    id, workspace_id: workspaceId, event_id: eventId, endpoint_id: endpointId, run_id: runId, status: 'PENDING', attempts: 0,
    next_attempt_at: now, last_status: null, last_error: null, last_response_excerpt: null, last_duration_ms: null,
    created_at: now, updated_at: now,
  }).execute();
  const payload: WebhookDeliverPayload = { deliveryId: id };
  await enqueueJob(trx, {
    kind: WEBHOOK_DELIVER, key: id, workspaceId, lane: endpointId, payload, maxAttempts: WEBHOOK_JOB_MAX_ATTEMPTS,
    availableAt: now, now,
  });
  return id;
}

/**
 * `lead.created` for every lead of the workspace that `where` picks (over `leads l`), set-based: an import of 50,000
 * rows writes its events, deliveries and jobs in one statement, each lead's data as PostgreSQL writes it for the API
 * (leads.api_json).
 */
export async function emitLeadsCreated(trx: Kysely<DB>, workspaceId: string, where: RawBuilder<unknown>, at: Date): Promise<void> {
  const endpoints = await subscribedEndpoints(trx, workspaceId, 'lead.created');
  if (endpoints.length === 0) return;
  const timestamp = at.toISOString();
  await sql`
    WITH events AS (
      INSERT INTO webhook_events (id, workspace_id, type, payload, occurred_at, run_id, lead_id)
      SELECT gen_random_uuid(), l.workspace_id, 'lead.created',
             jsonb_build_object('type', 'lead.created', 'timestamp', ${timestamp}::text, 'data', l.api_json::jsonb),
             ${at}::timestamptz, NULL, l.id
      FROM leads l WHERE l.workspace_id = ${workspaceId} AND ${where}
      RETURNING id),
    deliveries AS (
      INSERT INTO webhook_deliveries (id, workspace_id, event_id, endpoint_id, run_id, status, attempts, next_attempt_at, created_at, updated_at)
      SELECT gen_random_uuid(), ${workspaceId}, e.id, p.id, NULL, 'PENDING', 0, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      FROM events e CROSS JOIN unnest(${sql.val(endpoints)}::uuid[]) AS p(id)
      RETURNING id, endpoint_id)
    INSERT INTO jobs (id, workspace_id, kind, key, lane, payload, status, attempts, max_attempts, available_at,
                      created_at, updated_at)
    SELECT gen_random_uuid(), ${workspaceId}, ${WEBHOOK_DELIVER}, d.id::text, d.endpoint_id::text,
           jsonb_build_object('deliveryId', d.id), 'QUEUED', 0, ${WEBHOOK_JOB_MAX_ATTEMPTS}::int,
           ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
    FROM deliveries d`.execute(trx);
  await wakeRunners(trx, WEBHOOK_DELIVER);
}

/**
 * Erases the events `where` picks (those of erased runs, or of an erased lead) with their deliveries, attempts and
 * jobs: they carry the erased person's data. A job being run finds its delivery gone and stops.
 */
export async function forgetWebhookEvents(trx: Kysely<DB>, workspaceId: string, where: RawBuilder<unknown>): Promise<void> {
  const events = sql`SELECT id FROM webhook_events WHERE workspace_id = ${workspaceId} AND ${where}`;
  await sql`DELETE FROM jobs WHERE kind = ${WEBHOOK_DELIVER}
    AND key IN (SELECT id::text FROM webhook_deliveries WHERE event_id IN (${events}))`.execute(trx);
  await sql`DELETE FROM webhook_events WHERE id IN (${events})`.execute(trx);
}

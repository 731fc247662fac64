// The `webhook.deliver` job (DESIGN §9): one delivery of an event to an endpoint, signed with the endpoint's
// secret(s). A failed attempt is recorded and thrown as a RetryableError: the runner retries it on the kind's
// RetryPolicy (about 5 s, 1 min, 10 min, 1 h, 6 h, 24 h), and after the seventh failure, or a refusal to send it at
// all (a PermanentError), `onDead` marks it FAILED; the delivery's `attempts` mirrors the runner's count. Every
// attempt is logged with what the endpoint answered; an endpoint that has failed for three days is disabled with
// the reason. A run's deliveries to one endpoint go out in order: a delivery waits while an earlier one is pending.
// Deliveries are claimed fairly between workspaces and endpoints (claim.ts), and an endpoint that gives no answer in
// time is put off, longer after each such attempt in a row, so that it cannot hold the delivery slots every
// workspace shares; its failures still count towards the three days that disable it.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { traceUrlOf } from '../../http/run-render.ts';
import { wakeRunners } from '../sql/enqueueJob.ts';
import { LeaseLost, PermanentError, RetryableError } from '../errors.ts';
import { retrySchedule, type RetryPolicy } from '../retry.ts';
import type { ClaimedJob, JobContext, JobHandler } from '../types.ts';
import { claimWebhookDelivery, ENDPOINT_CONCURRENCY, type ClaimLimits } from '../../domain/webhooks/claim.ts';
import {
  eventReadScope, WEBHOOK_DELIVER, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookDeliverPayload,
  type WebhookEventType,
} from '../../domain/webhooks/events.ts';
import { postWebhook, type PostResult } from '../../domain/webhooks/post.ts';
import { secretContext, signatureHeader } from '../../domain/webhooks/signing.ts';

/** After the first attempt: about 5 s, 1 min, 10 min, 1 h, 6 h and 24 h; the seventh failure is the last. */
export const RETRY_DELAYS_MS = [5_000, 60_000, 600_000, 3_600_000, 21_600_000, 86_400_000];
/** An endpoint whose failures have gone on this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * How long an endpoint is put off after an attempt that got no answer in time: 5 s after the first, doubling with
 * each one in a row, at most an hour. An endpoint that never answers is then tried about once an hour, and holds a
 * slot for one timeout each time, until its three days of failures disable it.
 */
export const PUT_OFF_FIRST_MS = 5_000;
export const PUT_OFF_MAX_MS = 3_600_000;
export const WEBHOOK_USER_AGENT = 'leadrun-webhooks/1 (+https://www.standardwebhooks.com/)';

export interface WebhookHandlerOptions {
  leaseMs?: number;
  concurrency?: number;
  /** The waits before each retry, one attempt more than there are waits (WEBHOOK_RETRY_SECONDS; tests shorten them). */
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  /** Deliveries to one endpoint in flight at once, over every worker process. */
  endpointConcurrency?: number;
  /** How long an endpoint is put off after its first attempt in a row that got no answer in time. */
  putOffFirstMs?: number;
}

interface DeliveryRow {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  run_id: string | null;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  created_at: Date;
  type: string;
  payload: unknown;
  url: string;
  enabled: boolean;
  read_scopes: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Why a delivery may not be sent now, or null: its endpoint was disabled, or it may no longer read the event's data
 * (changed since the delivery was queued by a key without that read scope). Checked at every attempt, so that an
 * attempt already under way when the endpoint changed is not retried to its new address.
 */
function refusalOf(delivery: DeliveryRow): string | null {
  if (!delivery.enabled) return 'The endpoint is disabled.';
  if (delivery.type === WEBHOOK_TEST_EVENT) return null;
  const known = (WEBHOOK_EVENT_TYPES as readonly string[]).includes(delivery.type);
  const scope = known ? eventReadScope(delivery.type as WebhookEventType) : null;
  if (scope && delivery.read_scopes.includes(scope)) return null;
  return `Not sent: the endpoint may no longer receive ${delivery.type} events (they need ${scope ?? 'a read scope'}).`;
}

async function loadDelivery(db: Kysely<DB>, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select([
      'd.id', 'd.workspace_id', 'd.endpoint_id', 'd.event_id', 'd.run_id', 'd.status', 'd.created_at',
      'e.type', 'e.payload', 'p.url', 'p.enabled', 'p.read_scopes', 'p.secret', 'p.previous_secret', 'p.previous_secret_expires_at',
    ])
    .where('d.id', '=', id)
    .executeTakeFirst() as Promise<DeliveryRow | undefined>;
}

/** The earliest delivery of the same run to the same endpoint that is still pending and was made before this one. */
async function earlierPending(db: Kysely<DB>, delivery: DeliveryRow): Promise<{ next_attempt_at: Date | null } | undefined> {
  if (!delivery.run_id) return undefined;
  return db.selectFrom('webhook_deliveries').select('next_attempt_at')
    .where('endpoint_id', '=', delivery.endpoint_id).where('run_id', '=', delivery.run_id).where('status', '=', 'PENDING')
    .where(sql<boolean>`seq < (SELECT seq FROM webhook_deliveries WHERE id = ${delivery.id})`)
    .orderBy('seq').limit(1)
    .executeTakeFirst();
}

/** The body sent: the stored event, a Run in it shown as the API shows it (its traceUrl, not its traceId). */
function bodyOf(stored: unknown, config: Config): string {
  const payload = (typeof stored === 'string' ? JSON.parse(stored) : stored) as { data?: unknown };
  const data = payload.data as Record<string, unknown> | null | undefined;
  if (data && typeof data === 'object' && typeof data.traceId === 'string' && typeof data.id === 'string') {
    const { traceId, ...rest } = data;
    payload.data = { ...rest, traceUrl: traceUrlOf(config, data.id, traceId) };
  }
  return JSON.stringify(payload);
}

function payloadOf(job: ClaimedJob): WebhookDeliverPayload {
  const payload = job.payload as Partial<WebhookDeliverPayload> | null;
  if (!payload || typeof payload.deliveryId !== 'string') throw new PermanentError('the job names no delivery');
  return { deliveryId: payload.deliveryId };
}

/** The secrets that sign now: the current one, and the previous one until its overlap ends. */
function signingSecrets(ctx: JobContext, delivery: DeliveryRow, now: Date): string[] {
  const box = ctx.secrets();
  const secrets = [box.open(delivery.secret, secretContext(delivery.endpoint_id, 'secret'))];
  if (delivery.previous_secret && delivery.previous_secret_expires_at && delivery.previous_secret_expires_at > now) {
    secrets.push(box.open(delivery.previous_secret, secretContext(delivery.endpoint_id, 'previous_secret')));
  }
  return secrets;
}

export function webhookHandler(options: WebhookHandlerOptions = {}): JobHandler {
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  const retry = retrySchedule(delays.length + 1, delays);
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const leaseMs = Math.max(options.leaseMs ?? 30_000, timeoutMs * 2);
  const concurrency = options.concurrency ?? 4;
  // A workspace may take all of the runner's slots but one, which is left for the other workspaces' deliveries.
  const limits: ClaimLimits = {
    endpoint: options.endpointConcurrency ?? ENDPOINT_CONCURRENCY, workspacePerRunner: Math.max(1, concurrency - 1),
  };
  const putOff = { firstMs: options.putOffFirstMs ?? PUT_OFF_FIRST_MS, maxMs: PUT_OFF_MAX_MS };
  // The runner's slots claim one at a time, so that each claim sees the jobs the ones before it took and a
  // workspace's share of the runner is counted exactly. A claim takes milliseconds; a delivery up to the timeout.
  let claiming: Promise<unknown> = Promise.resolve();
  return {
    kind: WEBHOOK_DELIVER,
    retry,
    concurrency,
    leaseMs,
    claim: (db, _kind, owner, now, lease) => {
      const claimed = claiming.then(() => claimWebhookDelivery(db, owner, now, lease, limits));
      claiming = claimed.catch(() => {});
      return claimed;
    },

    async run(job, ctx) {
      const { deliveryId } = payloadOf(job);
      const delivery = await loadDelivery(ctx.db, deliveryId);
      // Erased with its lead or endpoint, or finished by an attempt whose runner died after committing.
      if (!delivery || delivery.status !== 'PENDING') return;
      const now = ctx.clock.now();
      // Not sent, and no attempt made: the delivery ends FAILED with the reason (onDead).
      const refusal = refusalOf(delivery);
      if (refusal) throw new PermanentError(refusal);
      const earlier = await earlierPending(ctx.db, delivery);
      if (earlier) {
        // In order per run: wait for the earlier delivery, which wakes this one when it ends (`settle`, `onDead`).
        // The wait is no attempt: the runner gives the claim's count back, so the schedule goes on where it was.
        const due = earlier.next_attempt_at && earlier.next_attempt_at > now ? earlier.next_attempt_at.getTime() + 1_000 : now.getTime() + 250;
        return { again: new Date(due), wait: true };
      }

      const body = bodyOf(delivery.payload, ctx.config);
      const timestamp = Math.floor(now.getTime() / 1000);
      const headers = {
        'content-type': 'application/json',
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signingSecrets(ctx, delivery, now), delivery.event_id, timestamp, body),
      };
      const result = await postWebhook(delivery.url, headers, body, {
        allowPrivateHosts: ctx.config.allowPrivateHosts, timeoutMs, userAgent: WEBHOOK_USER_AGENT, signal: ctx.signal,
      });
      if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('aborted');
      await settle(ctx, job, delivery, result, retry, putOff);
    },

    async onDead(trx, job, error, now) {
      const payload = job.payload as Partial<WebhookDeliverPayload> | null;
      if (typeof payload?.deliveryId !== 'string') return;
      const failed = await trx.updateTable('webhook_deliveries')
        .set({ status: 'FAILED', next_attempt_at: null, last_error: error.message.slice(0, 1000), updated_at: now })
        .where('id', '=', payload.deliveryId).where('status', '=', 'PENDING')
        .returning('run_id').executeTakeFirst();
      // The run's next delivery to the endpoint may be waiting for this one: it is looked at now.
      if (failed?.run_id) await wakeRunners(trx, WEBHOOK_DELIVER);
    },
  };
}

/**
 * Records the attempt as the runner counts it, with the endpoint's health. A success ends the job in the same
 * transaction; a failure is thrown after the record commits, for the runner to retry on the kind's policy (the record
 * shows when: `retry` is that policy) or, after the last attempt, to end it with `onDead`.
 */
async function settle(
  ctx: JobContext, job: ClaimedJob, delivery: DeliveryRow, result: PostResult, retry: RetryPolicy, putOff: PutOff,
): Promise<void> {
  const now = ctx.clock.now();
  const succeeded = result.error === null;
  const retryAt = !succeeded && job.attempt < job.maxAttempts ? new Date(now.getTime() + retry.delay(job.attempt, null)) : null;
  await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto('webhook_attempts').values({
      id: randomUUID(), delivery_id: delivery.id, attempt: job.attempt, at: now, status_code: result.status,
      duration_ms: result.durationMs, response_excerpt: result.excerpt, error: result.error,
    }).execute();
    await trx.updateTable('webhook_deliveries').set({
      status: succeeded ? 'SUCCEEDED' : 'PENDING',
      attempts: job.attempt, next_attempt_at: retryAt, last_status: result.status, last_error: result.error,
      last_response_excerpt: result.excerpt, last_duration_ms: result.durationMs, updated_at: now,
    }).where('id', '=', delivery.id).execute();
    if (succeeded) {
      await trx.updateTable('webhook_endpoints').set({ failing_since: null, timeouts: 0, put_off_until: null })
        .where('id', '=', delivery.endpoint_id)
        .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('timeouts', '>', 0)]))
        .execute();
      // Taken over (or erased) since the claim: the runner that holds it now records what happens.
      if (!(await ctx.finish(trx))) throw new LeaseLost(`webhook delivery ${delivery.id}`);
      // The run's next delivery to the endpoint may be waiting for this one: it is looked at now.
      if (delivery.run_id) await wakeRunners(trx, WEBHOOK_DELIVER);
    } else {
      if (result.timedOut) await putOffEndpoint(trx, delivery.endpoint_id, now, putOff);
      await markFailing(trx, delivery.endpoint_id, result.error ?? 'failed', now);
    }
  });
  if (!succeeded) throw new RetryableError(result.error ?? 'failed');
}

interface PutOff {
  firstMs: number;
  maxMs: number;
}

/**
 * The endpoint gave no answer in time once more: no delivery to it is claimed until the put-off ends, twice as long
 * as the last one. Its other deliveries wait (they are not failed), so whatever was accepted still goes out once it
 * answers again.
 */
async function putOffEndpoint(trx: Kysely<DB>, endpointId: string, now: Date, putOff: PutOff): Promise<void> {
  // The doubling's exponent is bounded, so that a count that runs for days cannot overflow the interval.
  const putOffMs = sql<number>`least(${putOff.firstMs}::float8 * power(2, least(timeouts, 30)),
    ${putOff.maxMs}::float8)`;
  await trx.updateTable('webhook_endpoints').set({
    timeouts: sql`timeouts + 1`,
    put_off_until: sql`${now}::timestamptz + ${putOffMs} * interval '1 millisecond'`,
  }).where('id', '=', endpointId).execute();
}

/** The endpoint has failed once more: it is failing since the first of these, and disabled after three days of it. */
async function markFailing(trx: Kysely<DB>, endpointId: string, error: string, now: Date): Promise<void> {
  await trx.updateTable('webhook_endpoints').set({ failing_since: now })
    .where('id', '=', endpointId).where('failing_since', 'is', null).execute();
  const reason = `Every delivery has failed for 3 days; the last: ${error}`.slice(0, 1000);
  await trx.updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_at: now, disabled_reason: reason, updated_at: now })
    .where('id', '=', endpointId).where('enabled', '=', true)
    .where('failing_since', '<=', new Date(now.getTime() - DISABLE_AFTER_MS))
    .execute();
}

// Verifying a webhook as the Standard Webhooks specification says, with WebCrypto only (Node ≥ 20 and browsers):
// `webhook-signature` holds space-separated `v1,<base64>` signatures, each an HMAC-SHA256 with the key after
// `whsec_` over `<webhook-id>.<webhook-timestamp>.<body>`; one that matches is enough (during a secret roll-over
// the sender signs with both). A timestamp more than the tolerance away from now is refused, against replays.
import { WebhookVerificationError } from './errors.ts';
import type { webhooks } from './schema.js';

type WebhookBody<E extends keyof webhooks> = NonNullable<webhooks[E]['post']> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/**
 * The body of a leadrun webhook, as the API document's `webhooks` section describes each event: its `type`, when it
 * happened (`timestamp`) and `data`, the object as the API returns it. Narrow on `type` to type `data`.
 */
export type WebhookEvent = { [E in keyof webhooks]: WebhookBody<E> }[keyof webhooks];
/** The type of every event a webhook endpoint can be sent. */
export type WebhookEventType = WebhookEvent['type'];

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The time to check against, for tests (default now). */
  now?: Date;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value ?? null;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/**
 * Checks a webhook's signature and timestamp and answers its parsed body. `body` must be the raw body as received
 * (the exact bytes: a re-serialised JSON object would not match). Throws WebhookVerificationError otherwise.
 */
export async function verifyWebhook(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing_headers', 'The webhook lacks webhook-id, webhook-timestamp or webhook-signature.');
  }
  const key = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!key || key.length === 0) throw new WebhookVerificationError('invalid_secret', 'The secret is not a whsec_… secret of base64.');

  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  const now = (options.now ?? new Date()).getTime() / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `The webhook's timestamp is more than ${tolerance} s from now: a replay, or a wrong clock.`);
  }

  const bodyBytes = typeof body === 'string' ? encoder.encode(body) : body;
  const signed = new Uint8Array([...encoder.encode(`${id}.${timestamp}.`), ...bodyBytes]);
  const cryptoKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  let valid = false;
  for (const part of signatures.split(' ')) {
    const [version, encoded] = part.split(',', 2);
    if (version !== 'v1' || !encoded) continue;
    const signature = base64Bytes(encoded);
    // crypto.subtle.verify compares in constant time; every signature is checked, so the time says nothing either.
    if (signature && (await crypto.subtle.verify('HMAC', cryptoKey, signature, signed))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('invalid_signature', 'No signature of the webhook matches this secret.');

  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The webhook is signed but its body is not JSON.');
  }
}

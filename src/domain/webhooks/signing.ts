// Standard Webhooks signatures (DESIGN §9): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret's
// bytes, the base64 after `whsec_`. During a roll-over both secrets sign, their signatures space-separated.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret in use. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signatureOf(secret, id, timestamp, body)).join(' ');
}

/** Where an endpoint's secrets are sealed: the endpoint and the field, so a ciphertext copied elsewhere does not open. */
export const secretContext = (endpointId: string, field: 'secret' | 'previous_secret') => `webhook_endpoints:${endpointId}:${field}`;

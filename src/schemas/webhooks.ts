// Webhooks (DESIGN §9): endpoints, what makes and changes one, and the log of deliveries.
import { Type } from 'typebox';
import { Nullable, MESSAGE_MAX, Int32, Timestamp, Id } from './common.ts';

export const WEBHOOK_EVENT_TYPES = [
  'lead.created', 'lead.updated', 'lead.deleted',
  'run.started', 'run.step_completed', 'run.awaiting_approval', 'run.failed', 'run.completed', 'run.rejected', 'run.cancelled',
  'draft.sent', 'draft.delivery_failed', 'draft.replied', 'draft.bounced',
  'recipient.unsubscribed',
  // Follow-up sequences (DESIGN §13): the Run, its `sequence` showing the change.
  'sequence.enrolled', 'sequence.stopped', 'sequence.paused', 'sequence.resumed',
  'touch.drafted', 'touch.awaiting_approval', 'touch.sent', 'touch.skipped',
] as const;
export const URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 500;

export const WebhookEventType = Type.Enum(WEBHOOK_EVENT_TYPES, { description: 'A kind of event an endpoint can be sent.' });

export const WebhookEndpoint = Type.Object({
  id: Id('Identifier of the endpoint.'),
  url: Type.String({ format: 'uri', maxLength: URL_MAX, description: 'Where events are POSTed.' }),
  description: Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX })),
  events: Type.Array(WebhookEventType, { maxItems: WEBHOOK_EVENT_TYPES.length, description: 'The event types it is sent; empty for every type.' }),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String({ maxLength: MESSAGE_MAX, description: 'Why it is disabled: by an admin, or after 3 days of failed deliveries.' })),
  disabledAt: Nullable(Timestamp()),
  failingSince: Nullable(Timestamp('Since when every delivery has failed; null while deliveries succeed.')),
  previousSecretExpiresAt: Nullable(Timestamp('After a secret roll-over: until when the previous secret signs too.')),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
}, { $id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecret = Type.Object({
  ...WebhookEndpoint.properties,
  secret: Type.String({ maxLength: 100, description: 'The signing secret, `whsec_` and base64: shown this once, never again.' }),
}, { $id: 'WebhookEndpointWithSecret' });

const WebhookUrl = Type.String({ minLength: 1, maxLength: URL_MAX, description: 'An http or https URL without user name or password, on a public address.' });
const WebhookEvents = Type.Array(WebhookEventType, {
  maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true,
  description: 'Empty or left out: every type. Each type needs the read scope of its data (`lead.*` and '
    + '`recipient.*`: leads:read; `run.*` and `draft.*`: runs:read), and every type both: a key without it is refused with 403.',
});

export const WebhookEndpointCreate = Type.Object({
  url: WebhookUrl,
  description: Type.Optional(Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX }))),
  events: Type.Optional(WebhookEvents),
}, { additionalProperties: false });

export const WebhookEndpointUpdate = Type.Object({
  url: Type.Optional(WebhookUrl),
  description: Type.Optional(Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX }))),
  events: Type.Optional(WebhookEvents),
  enabled: Type.Optional(Type.Boolean({ description: 'false disables it; true enables it again and clears its failures.' })),
}, { additionalProperties: false });

export const WebhookDelivery = Type.Object({
  id: Id('Identifier of the delivery.'),
  eventId: Id('The event, sent as `webhook-id`; a replay sends the same one.'),
  eventType: Type.String({ maxLength: 100 }),
  status: Type.Enum(['PENDING', 'SUCCEEDED', 'FAILED']),
  attempts: Int32({ minimum: 0 }),
  nextAttemptAt: Nullable(Timestamp()),
  lastStatus: Nullable(Int32({ minimum: 0, maximum: 999, description: 'The HTTP status of the last answer; null when none came.' })),
  lastError: Nullable(Type.String({ maxLength: MESSAGE_MAX })),
  lastResponseExcerpt: Nullable(Type.String({ maxLength: 1024, description: 'The first 1 KB of the last answer\'s body.' })),
  lastDurationMs: Nullable(Int32({ minimum: 0 })),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
}, { $id: 'WebhookDelivery' });

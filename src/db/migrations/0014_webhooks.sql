-- Webhooks (DESIGN §9): endpoints that admins register, an outbox of events written in the same transaction as the
-- change they report, one delivery of each event to each endpoint that wants it, and every attempt's record.

-- An endpoint: where events are POSTed, which types it wants (none named: all), and its signing secret sealed with
-- the installation's SecretBox (src/mail/secrets.ts). After a roll-over the previous secret signs too until it expires.
CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY,
  workspace_id                uuid NOT NULL REFERENCES workspaces (id),
  url                         text NOT NULL,
  description                 text,
  events                      text[] NOT NULL DEFAULT '{}',
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  disabled_at                 timestamptz,
  -- When the endpoint's current run of failed attempts began; cleared by a success. Three days of it disable it.
  failing_since               timestamptz,
  created_at                  timestamptz NOT NULL,
  updated_at                  timestamptz NOT NULL
);
-- What every change asks first ("does this workspace want webhooks?"): one index look-up, no row when it does not.
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id) WHERE enabled;

-- The outbox. `run_id` orders a run's events per endpoint; `lead_id` lets erasing a lead erase the events that
-- carry its data. Neither is a foreign key: an event outlives nothing it names but is erased with its lead.
CREATE TABLE webhook_events (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  type         text NOT NULL,
  payload      jsonb NOT NULL,
  occurred_at  timestamptz NOT NULL,
  run_id       uuid,
  lead_id      uuid
);
CREATE INDEX webhook_events_lead ON webhook_events (lead_id) WHERE lead_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
  id                    uuid PRIMARY KEY,
  -- The order deliveries were made in, also within one transaction: a run's go out to an endpoint in this order.
  seq                   bigint GENERATED ALWAYS AS IDENTITY,
  workspace_id          uuid NOT NULL REFERENCES workspaces (id),
  event_id              uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id           uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  -- Copied from the event: a run's deliveries to one endpoint go out in the order they were made.
  run_id                uuid,
  status                text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  attempts              integer NOT NULL DEFAULT 0,
  next_attempt_at       timestamptz,
  last_status           integer,
  last_error            text,
  last_response_excerpt text,
  last_duration_ms      integer,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_run_pending ON webhook_deliveries (endpoint_id, run_id, seq) WHERE status = 'PENDING' AND run_id IS NOT NULL;
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id               uuid PRIMARY KEY,
  delivery_id      uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt          integer NOT NULL,
  at               timestamptz NOT NULL,
  status_code      integer,
  duration_ms      integer NOT NULL,
  response_excerpt text,
  error            text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt);

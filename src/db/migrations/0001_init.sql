-- The first schema of leadrun. Every table that belongs to a workspace carries workspace_id, and every query
-- filters by it. Timestamps come from the application's clock, with millisecond precision.

CREATE TABLE workspaces (
  id            uuid PRIMARY KEY,
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  plan          text NOT NULL CHECK (plan IN ('FREE', 'PRO')),
  admin_user_id uuid,
  created_at    timestamptz NOT NULL
);

CREATE TABLE users (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  email         text,
  name          text,
  role          text NOT NULL CHECK (role IN ('ADMIN', 'MEMBER')),
  password_hash text,
  created_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE email IS NOT NULL;
CREATE INDEX users_workspace ON users (workspace_id);

ALTER TABLE workspaces ADD CONSTRAINT workspaces_admin_user_fk FOREIGN KEY (admin_user_id) REFERENCES users (id);

CREATE TABLE api_keys (
  id                 uuid PRIMARY KEY,
  workspace_id       uuid NOT NULL REFERENCES workspaces (id),
  name               text NOT NULL,
  prefix             text NOT NULL,
  -- SHA-256 of the whole key, hex. The plaintext is never stored.
  digest             text NOT NULL UNIQUE,
  scopes             text[] NOT NULL,
  created_by_user_id uuid REFERENCES users (id),
  created_at         timestamptz NOT NULL,
  last_used_at       timestamptz,
  revoked_at         timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at DESC);

CREATE TABLE leads (
  id                  uuid PRIMARY KEY,
  workspace_id        uuid NOT NULL REFERENCES workspaces (id),
  name                text NOT NULL,
  email               text,
  company_name        text,
  company_website     text,
  status              text NOT NULL CHECK (status IN ('DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST')),
  assigned_to_user_id uuid REFERENCES users (id),
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL
);
CREATE INDEX leads_page ON leads (workspace_id, created_at DESC, id DESC);
CREATE INDEX leads_page_by_status ON leads (workspace_id, status, created_at DESC, id DESC);

CREATE TABLE calls (
  id               uuid PRIMARY KEY,
  workspace_id     uuid NOT NULL REFERENCES workspaces (id),
  lead_id          uuid NOT NULL REFERENCES leads (id),
  title            text,
  occurred_at      timestamptz,
  duration_seconds integer,
  transcript       text NOT NULL,
  created_at       timestamptz NOT NULL
);
CREATE INDEX calls_by_lead ON calls (lead_id, created_at DESC, id DESC);

-- The run row is the job: workers claim it with FOR UPDATE SKIP LOCKED and hold it under a lease.
CREATE TABLE runs (
  id                 uuid PRIMARY KEY,
  workspace_id       uuid NOT NULL REFERENCES workspaces (id),
  lead_id            uuid NOT NULL REFERENCES leads (id),
  call_id            uuid NOT NULL REFERENCES calls (id),
  status             text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED')),
  created_by_user_id uuid REFERENCES users (id),
  key_id             uuid REFERENCES api_keys (id),
  trace_id           text NOT NULL,
  lease_owner        text,
  lease_expires_at   timestamptz,
  -- A worker may take the run when this time has come (it moves forward for a retry's backoff).
  available_at       timestamptz NOT NULL,
  error              text,
  started_at         timestamptz NOT NULL,
  completed_at       timestamptz,
  updated_at         timestamptz NOT NULL
);
CREATE INDEX runs_page ON runs (workspace_id, started_at DESC, id DESC);
CREATE INDEX runs_by_lead ON runs (lead_id, started_at DESC);
CREATE INDEX runs_claimable ON runs (available_at) WHERE status IN ('QUEUED', 'RUNNING');

CREATE TABLE run_steps (
  run_id       uuid NOT NULL REFERENCES runs (id),
  position     smallint NOT NULL CHECK (position BETWEEN 0 AND 3),
  node         text NOT NULL CHECK (node IN ('RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER')),
  status       text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'SKIPPED')),
  output       jsonb,
  attempts     integer NOT NULL DEFAULT 0,
  error        text,
  started_at   timestamptz,
  completed_at timestamptz,
  PRIMARY KEY (run_id, position),
  UNIQUE (run_id, node)
);

CREATE TABLE email_drafts (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  run_id       uuid NOT NULL REFERENCES runs (id),
  -- A run has one draft per WRITER result; a regenerated draft is the next version.
  version      integer NOT NULL,
  status       text NOT NULL CHECK (status IN ('DRAFT', 'APPROVED', 'REJECTED', 'SUPERSEDED')),
  to_address   text,
  subject      text NOT NULL,
  body         text NOT NULL,
  created_at   timestamptz NOT NULL,
  UNIQUE (run_id, version)
);

CREATE TABLE audit_log (
  id          uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  source      text NOT NULL CHECK (source IN ('api', 'ui', 'cli', 'system')),
  key_id      uuid,
  user_id     uuid,
  action      text NOT NULL,
  target_type text,
  target_id   text,
  -- replayed: an Idempotency-Key repeat, answered with the first response; it changed nothing.
  outcome     text NOT NULL CHECK (outcome IN ('success', 'failure', 'denied', 'replayed')),
  status      integer,
  request_id  text,
  ip          text,
  user_agent  text,
  occurred_at timestamptz NOT NULL
);
CREATE INDEX audit_log_page ON audit_log (workspace_id, occurred_at DESC, id DESC);

-- Runs started per workspace and calendar month (UTC). The Free-plan limit is enforced on this row, which
-- concurrent starts update one at a time.
CREATE TABLE run_usage (
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  month        date NOT NULL,
  runs         integer NOT NULL,
  PRIMARY KEY (workspace_id, month)
);

CREATE TABLE idempotency_keys (
  key_id          uuid NOT NULL REFERENCES api_keys (id),
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  -- While a first request is in flight, until this time; null once its response is stored.
  locked_until    timestamptz,
  response_status integer,
  response_body   jsonb,
  response_location text,
  -- What the first request created, so that the audit entry of a replay names it too.
  target_type     text,
  target_id       text,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

-- ISO 8601 in UTC with milliseconds, as every timestamp of the API is written; used where PostgreSQL renders JSON.
CREATE FUNCTION leadrun_iso(ts timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

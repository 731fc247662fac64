-- The suppression list (DESIGN §15): per workspace, the addresses and domains nothing may be delivered to, why
-- (reason) and where the entry came from (source). Stored lower-cased, once per address and once per domain. An
-- entry names no lead: erasing a lead keeps it, so that an opt-out outlives the erasure.
CREATE TABLE suppressions (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  email        text CHECK (email = lower(email)),
  domain       text CHECK (domain = lower(domain)),
  reason       text NOT NULL CHECK (reason IN ('unsubscribed', 'bounced', 'complained', 'manual', 'imported')),
  source       text NOT NULL,
  created_at   timestamptz NOT NULL,
  CHECK ((email IS NULL) <> (domain IS NULL))
);
CREATE UNIQUE INDEX suppressions_email ON suppressions (workspace_id, email) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX suppressions_domain ON suppressions (workspace_id, domain) WHERE domain IS NOT NULL;
-- GET /api/v1/suppressions: newest first.
CREATE INDEX suppressions_workspace ON suppressions (workspace_id, created_at DESC, id DESC);

-- The unsubscribe tokens (DESIGN §15): one per workspace and address, made by its first e-mail and reused by every
-- later one, never expiring. Looked up by the SHA-256 digest of the token; the token itself is kept sealed with the
-- installation's SecretBox, so that the next e-mail can carry the same link.
CREATE TABLE unsubscribe_tokens (
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  email        text NOT NULL CHECK (email = lower(email)),
  digest       text NOT NULL UNIQUE,
  sealed_token text NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, email)
);

-- Delivery (DESIGN §7): drafts edited and kept as versions, approved drafts sent over SMTP or saved to the sender's
-- mailbox over IMAP by a durable job, replies found in the mailbox, and the mail settings that make it possible.

-- Every version of a run's draft stays readable. WRITER's first draft is `generated`, each later WRITER result
-- `regenerated`; a person's edit makes the next version, `edited`, and the version it replaced becomes SUPERSEDED.
-- The grounding check's verdict on a version's own text is kept with it (a generated version's is on its WRITER step
-- too). SENT is the end of a draft that an SMTP server accepted.
ALTER TABLE email_drafts
  ADD COLUMN origin text NOT NULL DEFAULT 'generated' CHECK (origin IN ('generated', 'regenerated', 'edited')),
  ADD COLUMN edited_at timestamptz,
  ADD COLUMN edited_by_user_id uuid REFERENCES users (id),
  ADD COLUMN edited_by_key_id uuid REFERENCES api_keys (id),
  ADD COLUMN grounding jsonb;
UPDATE email_drafts SET origin = 'regenerated' WHERE version > 1;
ALTER TABLE email_drafts DROP CONSTRAINT email_drafts_status_check;
ALTER TABLE email_drafts ADD CONSTRAINT email_drafts_status_check
  CHECK (status IN ('DRAFT', 'APPROVED', 'SENT', 'REJECTED', 'SUPERSEDED'));

-- One durable job mechanism: a job is claimed with SKIP LOCKED, held by a lease, retried with backoff and, after its
-- last attempt, left DEAD with its error. `kind` picks the handler; `payload` is the handler's input. `key` makes a
-- job unique among the live ones of its kind (one delivery job per delivery, one reply check per workspace).
CREATE TABLE jobs (
  id               uuid PRIMARY KEY,
  workspace_id     uuid REFERENCES workspaces (id),
  kind             text NOT NULL,
  key              text,
  payload          jsonb NOT NULL DEFAULT '{}',
  status           text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'DONE', 'DEAD')),
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL,
  available_at     timestamptz NOT NULL,
  lease_owner      text,
  lease_expires_at timestamptz,
  last_error       text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  finished_at      timestamptz
);
CREATE INDEX jobs_due ON jobs (kind, available_at) WHERE status IN ('QUEUED', 'RUNNING');
CREATE UNIQUE INDEX jobs_live_key ON jobs (kind, key) WHERE key IS NOT NULL AND status IN ('QUEUED', 'RUNNING');
CREATE INDEX jobs_workspace ON jobs (workspace_id);

-- The delivery of an approved draft: at most one per draft, however many approvals race. Its Message-ID is fixed
-- when it is made, so a retry after a crash between the server's answer and the commit resends the same message.
CREATE TABLE email_deliveries (
  id              uuid PRIMARY KEY,
  workspace_id    uuid NOT NULL REFERENCES workspaces (id),
  run_id          uuid NOT NULL REFERENCES runs (id),
  draft_id        uuid NOT NULL UNIQUE REFERENCES email_drafts (id),
  -- Whose name, address and signature the message carries, and whose mailbox `mailbox` saves into.
  sender_user_id  uuid REFERENCES users (id),
  method          text NOT NULL CHECK (method IN ('send', 'mailbox')),
  status          text NOT NULL CHECK (status IN ('QUEUED', 'DELIVERING', 'DELIVERED', 'FAILED')),
  message_id      text NOT NULL UNIQUE,
  attempts        integer NOT NULL DEFAULT 0,
  queued_at       timestamptz NOT NULL,
  delivered_at    timestamptz,
  error           text,
  -- The mail server's last answer (an SMTP reply line, or the IMAP APPEND result), for the record.
  response        text
);
CREATE INDEX email_deliveries_run ON email_deliveries (run_id);

-- A reply found in the sender's mailbox: a message whose In-Reply-To or References names a sent Message-ID.
CREATE TABLE email_replies (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  delivery_id  uuid NOT NULL REFERENCES email_deliveries (id),
  run_id       uuid NOT NULL REFERENCES runs (id),
  message_id   text NOT NULL,
  from_address text,
  subject      text,
  snippet      text NOT NULL,
  received_at  timestamptz NOT NULL,
  found_at     timestamptz NOT NULL,
  UNIQUE (delivery_id, message_id)
);
CREATE INDEX email_replies_run ON email_replies (run_id, received_at DESC);

-- A workspace's mail transport, set by its admins in Settings / E-mail. Passwords are AES-256-GCM ciphertexts
-- (src/mail/secrets.ts), never returned by any answer. Without a row, or without SMTP in it, the installation's
-- SMTP_URL / MAIL_FROM apply.
CREATE TABLE mail_settings (
  workspace_id       uuid PRIMARY KEY REFERENCES workspaces (id),
  from_name          text,
  from_address       text,
  default_deliver    text CHECK (default_deliver IN ('send', 'mailbox', 'none')),
  smtp_host          text,
  smtp_port          integer CHECK (smtp_port BETWEEN 1 AND 65535),
  smtp_security      text CHECK (smtp_security IN ('tls', 'starttls', 'none')),
  smtp_user          text,
  smtp_password      text,
  imap_host          text,
  imap_port          integer CHECK (imap_port BETWEEN 1 AND 65535),
  imap_security      text CHECK (imap_security IN ('tls', 'starttls', 'none')),
  imap_user          text,
  imap_password      text,
  imap_drafts_folder text,
  updated_at         timestamptz NOT NULL,
  updated_by_user_id uuid REFERENCES users (id)
);

-- Where the reply check stands in a workspace's inbox: the mailbox's UIDVALIDITY and the highest UID read.
CREATE TABLE mailbox_cursors (
  workspace_id  uuid PRIMARY KEY REFERENCES workspaces (id),
  uid_validity  bigint NOT NULL,
  last_uid      bigint NOT NULL,
  checked_at    timestamptz NOT NULL,
  error         text
);

-- Each person's own name and signature on the e-mails sent in their name.
ALTER TABLE users ADD COLUMN sender_name text, ADD COLUMN signature text;

-- When a lead was last e-mailed and last replied; both are in the lead's JSON.
ALTER TABLE leads ADD COLUMN last_contacted_at timestamptz, ADD COLUMN last_reply_at timestamptz;
ALTER TABLE leads DROP COLUMN api_json;
DROP FUNCTION leadrun_lead_json(uuid, text, text, text, text, text, uuid, timestamptz, timestamptz);
CREATE FUNCTION leadrun_lead_json(
  id uuid, name text, email text, company_name text, company_website text, status text, assigned_to_user_id uuid,
  created_at timestamptz, updated_at timestamptz, last_contacted_at timestamptz, last_reply_at timestamptz
) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":"' || id || '","name":' || to_json(name) || ',"email":' || coalesce(to_json(email)::text, 'null')
    || ',"companyName":' || coalesce(to_json(company_name)::text, 'null')
    || ',"companyWebsite":' || coalesce(to_json(company_website)::text, 'null')
    || ',"status":"' || status || '","assignedToUserId":' || coalesce('"' || assigned_to_user_id || '"', 'null')
    || ',"createdAt":"' || leadrun_iso(created_at) || '","updatedAt":"' || leadrun_iso(updated_at) || '"'
    || ',"lastContactedAt":' || coalesce('"' || leadrun_iso(last_contacted_at) || '"', 'null')
    || ',"lastReplyAt":' || coalesce('"' || leadrun_iso(last_reply_at) || '"', 'null') || '}'
$$;
ALTER TABLE leads ADD COLUMN api_json text NOT NULL GENERATED ALWAYS AS (leadrun_lead_json(
  id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at,
  last_contacted_at, last_reply_at)) STORED;

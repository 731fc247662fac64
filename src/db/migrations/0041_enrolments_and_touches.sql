-- A lead's enrolment in a sequence and the touches of its thread (DESIGN §13). Touch 1 is the approved e-mail, touch
-- n+1 the sequence's step n; a touch's `steps` are copied into the enrolment when it is made, so that editing or
-- deleting the sequence later changes no thread already running.
CREATE TABLE enrolments (
  id             uuid PRIMARY KEY,
  workspace_id   uuid NOT NULL REFERENCES workspaces (id),
  lead_id        uuid NOT NULL REFERENCES leads (id),
  run_id         uuid NOT NULL UNIQUE REFERENCES runs (id),
  -- Null once the sequence is deleted; `sequence_name` and `steps` keep what the enrolment follows.
  sequence_id    uuid REFERENCES sequences (id) ON DELETE SET NULL,
  sequence_name  text NOT NULL,
  steps          jsonb NOT NULL,
  method         text NOT NULL CHECK (method IN ('send', 'mailbox')),
  sender_user_id uuid REFERENCES users (id),
  status         text NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED', 'FINISHED', 'STOPPED')),
  stop_reason    text CHECK (stop_reason IN ('replied', 'bounced', 'unsubscribed', 'suppressed', 'lead_closed', 'manual', 'superseded', 'erased')),
  pause_reason   text CHECK (pause_reason IN ('out_of_office', 'manual')),
  paused_until   timestamptz,
  next_touch_at  timestamptz,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
-- A lead has at most one enrolment that may still send.
CREATE UNIQUE INDEX enrolments_one_live ON enrolments (lead_id) WHERE status IN ('ACTIVE', 'PAUSED');
CREATE INDEX enrolments_next_touch ON enrolments (next_touch_at) WHERE status = 'ACTIVE';
-- A pause with an end resumes by itself: the scheduler finds those by this index.
CREATE INDEX enrolments_paused_until ON enrolments (paused_until) WHERE status = 'PAUSED' AND paused_until IS NOT NULL;
CREATE INDEX enrolments_workspace ON enrolments (workspace_id, created_at DESC);

CREATE TABLE touches (
  id            uuid PRIMARY KEY,
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  enrolment_id  uuid NOT NULL REFERENCES enrolments (id),
  run_id        uuid NOT NULL REFERENCES runs (id),
  number        smallint NOT NULL CHECK (number BETWEEN 1 AND 11),
  status        text NOT NULL CHECK (status IN ('SCHEDULED', 'DRAFTED', 'AWAITING_APPROVAL', 'APPROVED', 'SENT', 'SKIPPED')),
  review        text NOT NULL CHECK (review IN ('required', 'auto')),
  due_at        timestamptz,
  -- When the scheduler has something to do with the touch: write it (SCHEDULED), or make its delivery (an auto touch
  -- DRAFTED). Null while there is nothing to do (waiting for the previous touch, for a person, or a pause), so that
  -- the scheduler's one index holds only the work that is due or soon due, however many enrolments wait.
  ready_at      timestamptz,
  draft_id      uuid REFERENCES email_drafts (id),
  delivery_id   uuid REFERENCES email_deliveries (id),
  skip_reason   text,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  UNIQUE (enrolment_id, number)
);
CREATE INDEX touches_ready ON touches (ready_at) WHERE ready_at IS NOT NULL;
CREATE INDEX touches_run ON touches (run_id, number);
CREATE INDEX touches_delivery ON touches (delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX touches_review ON touches (workspace_id, due_at) WHERE status = 'AWAITING_APPROVAL';

-- Follow-up drafts are versions of the run's draft for their touch: the same rows, review, edits and delivery as
-- touch 1's (email_deliveries.draft_id points here). Every query of the run's first draft reads touch 1.
ALTER TABLE email_drafts ADD COLUMN touch smallint NOT NULL DEFAULT 1;
ALTER TABLE email_drafts DROP CONSTRAINT email_drafts_run_id_version_key;
ALTER TABLE email_drafts ADD CONSTRAINT email_drafts_run_touch_version UNIQUE (run_id, touch, version);
-- A delivery's touch, so that the run's own delivery (touch 1) is told from its follow-ups' without a join.
ALTER TABLE email_deliveries ADD COLUMN touch smallint NOT NULL DEFAULT 1;

-- Sending like a person (DESIGN §14): the workspace's send window, time zone and per-sender limits; when a
-- delivery is to leave and what it waits for; and each sending address's count of the day, the row that makes the
-- limits exact across worker processes (it is locked in the transaction that takes a slot, src/domain/sending/limits.ts).

-- Without a row, the defaults: Monday to Friday, 08:00-18:00, UTC, 50 a day, 90 s apart.
CREATE TABLE sending_settings (
  workspace_id       uuid PRIMARY KEY REFERENCES workspaces (id),
  -- ISO weekdays, 1 = Monday ... 7 = Sunday.
  window_days        smallint[] NOT NULL,
  -- Minutes after local midnight; the window is [start, end).
  window_start       smallint NOT NULL CHECK (window_start BETWEEN 0 AND 1439),
  window_end         smallint NOT NULL CHECK (window_end BETWEEN 1 AND 1440),
  time_zone          text NOT NULL CHECK (length(time_zone) <= 64),
  daily_limit        integer NOT NULL CHECK (daily_limit BETWEEN 1 AND 2000),
  min_gap_seconds    integer NOT NULL CHECK (min_gap_seconds BETWEEN 0 AND 86400),
  updated_at         timestamptz NOT NULL,
  updated_by_user_id uuid REFERENCES users (id),
  CHECK (window_start < window_end)
);

-- A delivery waits SCHEDULED until scheduled_for, for what waiting_for names. respect_window: it leaves only inside
-- the send window (a follow-up). slot_taken_at: when it took its sender's slot, so that a retry takes none again.
ALTER TABLE email_deliveries
  ADD COLUMN scheduled_for timestamptz,
  ADD COLUMN waiting_for text CHECK (waiting_for IN ('window', 'daily_limit', 'gap', 'sendAt')),
  ADD COLUMN respect_window boolean NOT NULL DEFAULT false,
  ADD COLUMN slot_taken_at timestamptz;
-- The outbox: a workspace's waiting deliveries in the order they leave.
CREATE INDEX email_deliveries_outbox ON email_deliveries (workspace_id, scheduled_for, id) WHERE status = 'SCHEDULED';

-- One row per sending address: how many it sent on `day` (the workspace's local date) and when it last sent.
CREATE TABLE sender_counters (
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  address      text NOT NULL,
  day          date NOT NULL,
  sent         integer NOT NULL,
  last_sent_at timestamptz,
  PRIMARY KEY (workspace_id, address)
);

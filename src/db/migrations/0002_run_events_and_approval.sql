-- What each step took (engine, model, prompt version, tokens, time), the run's token spend, the reviewer's
-- decisions on drafts, and the run's event log that progress streams and traces are read from.

ALTER TABLE run_steps
  ADD COLUMN engine         text,
  ADD COLUMN model          text,
  ADD COLUMN prompt_version text,
  ADD COLUMN input_tokens   integer,
  ADD COLUMN output_tokens  integer,
  ADD COLUMN duration_ms    integer;

ALTER TABLE runs
  ADD COLUMN tokens_used integer NOT NULL DEFAULT 0,
  -- The reviewer's feedback that the next WRITER attempt must take into account (a regeneration).
  ADD COLUMN feedback    text;

ALTER TABLE email_drafts
  ADD COLUMN feedback           text,
  ADD COLUMN decided_at         timestamptz,
  ADD COLUMN decided_by_key_id  uuid REFERENCES api_keys (id),
  ADD COLUMN decided_by_user_id uuid REFERENCES users (id);

CREATE TABLE run_events (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id        uuid NOT NULL REFERENCES runs (id),
  workspace_id  uuid NOT NULL REFERENCES workspaces (id),
  type          text NOT NULL,
  node          text,
  attempt       integer,
  duration_ms   integer,
  engine        text,
  model         text,
  input_tokens  integer,
  output_tokens integer,
  error         text,
  occurred_at   timestamptz NOT NULL
);
CREATE INDEX run_events_by_run ON run_events (run_id, id);

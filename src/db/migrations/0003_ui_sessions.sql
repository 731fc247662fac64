-- People in the web UI: their sessions, and the sign-in attempts that rate-limit guessing passwords.

CREATE TABLE sessions (
  -- SHA-256 of the session token, hex. The token itself is only ever in the user's cookie.
  id           text PRIMARY KEY,
  user_id      uuid NOT NULL REFERENCES users (id),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  -- Sent back by the UI in X-CSRF-Token on every change it asks for.
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  ip           text,
  user_agent   text
);
CREATE INDEX sessions_by_user ON sessions (user_id);

CREATE TABLE sign_in_attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email        text NOT NULL,
  ip           text NOT NULL,
  succeeded    boolean NOT NULL,
  attempted_at timestamptz NOT NULL
);
CREATE INDEX sign_in_attempts_by_email ON sign_in_attempts (email, attempted_at DESC);
CREATE INDEX sign_in_attempts_by_ip ON sign_in_attempts (ip, attempted_at DESC);

-- One-time setup tokens. A `serve` that listens on a non-loopback address while no workspace exists issues one at
-- start and prints it; the first-run setup then needs one of them, and deletes them all when it succeeds. Kept in
-- the database so that a token printed by one of several API processes works on any of them. Digests only.
CREATE TABLE setup_tokens (
  digest     text PRIMARY KEY,
  created_at timestamptz NOT NULL
);

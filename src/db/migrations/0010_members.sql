-- People who leave a workspace, and one-time links to set a new password.
--
-- A removed member's row stays, so that the audit log, runs and drafts still name who acted. Their address moves
-- to removed_email and email is cleared: that frees it for a new member (users_email_key covers email only), and
-- every look-up by address (sign-in, `leadrun user password`) stops finding them without knowing of removals.
ALTER TABLE users ADD COLUMN removed_at timestamptz;
ALTER TABLE users ADD COLUMN removed_email text;
ALTER TABLE users ADD CONSTRAINT users_removed_have_no_email CHECK (removed_at IS NULL OR (email IS NULL AND password_hash IS NULL));

CREATE TABLE password_reset_links (
  -- SHA-256 of the link's token, hex. The token itself is only ever in the link.
  digest             text PRIMARY KEY,
  workspace_id       uuid NOT NULL REFERENCES workspaces (id),
  user_id            uuid NOT NULL REFERENCES users (id),
  created_by_user_id uuid REFERENCES users (id),
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  used_at            timestamptz,
  -- Set when a newer link is made for the same person, their password changes, or they are removed.
  revoked_at         timestamptz
);
CREATE INDEX password_reset_links_by_user ON password_reset_links (user_id);

-- A session's CSRF token is kept as its SHA-256 digest (hex), like the session token. The sessions made before
-- held it in plain text: they end here, and their people sign in again.
DELETE FROM sessions;
ALTER TABLE sessions RENAME COLUMN csrf_token TO csrf_digest;

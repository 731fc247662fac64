-- An e-mail address names at most one present person in each workspace, no longer in the whole installation
-- (docs/decisions/0008-addresses-are-unique-per-workspace.md). With one address per installation, an admin who
-- added a member learned whether the address had an account in another workspace: it was refused only then.
-- Sign-in looks the address up in every workspace and takes the account whose password it is (users_by_email).
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_email_key ON users (workspace_id, lower(email)) WHERE email IS NOT NULL;
CREATE INDEX users_by_email ON users (lower(email)) WHERE email IS NOT NULL;

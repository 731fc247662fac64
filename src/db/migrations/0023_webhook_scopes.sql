-- What an endpoint may receive: the read scopes (leads:read, runs:read) of whoever set its url or events. An
-- event's data is the lead or run itself, so a key that may manage webhooks but not read leads must not be able to
-- read them through an endpoint of its own (issue 38). Fan-out sends an event only to endpoints holding its scope.
ALTER TABLE webhook_endpoints ADD COLUMN read_scopes text[] NOT NULL DEFAULT '{leads:read,runs:read}';

-- Endpoints made before this column: the UI's and the command line's are an admin's and keep both scopes. One that
-- a key made or changed keeps only the read scopes that every such key held, as the audit log records them; an
-- endpoint whose entries are gone keeps both, as nothing says otherwise.
UPDATE webhook_endpoints w SET read_scopes = ARRAY(
  SELECT s FROM unnest(w.read_scopes) AS s
  WHERE NOT EXISTS (
    SELECT 1 FROM audit_log a JOIN api_keys k ON k.id = a.key_id
    WHERE a.workspace_id = w.workspace_id AND a.source = 'api' AND a.outcome = 'success'
      AND a.action IN ('webhook.created', 'webhook.updated') AND a.target_type = 'webhook' AND a.target_id = w.id::text
      AND NOT s = ANY (k.scopes)));

-- From now on every endpoint is written with the scopes of whoever wrote it; a forgotten value is an error, not both.
ALTER TABLE webhook_endpoints ALTER COLUMN read_scopes DROP DEFAULT;

-- Lead import (POST /api/v1/leads/import, `leadrun leads import`).
--
-- An import's audit entry records what it did: counts, never a lead's data. Other entries leave it null.
ALTER TABLE audit_log ADD COLUMN details jsonb;

-- `?dedupe=email` finds a workspace's lead by its e-mail, compared case-insensitively, for every row of a file.
CREATE INDEX leads_by_email ON leads (workspace_id, lower(email));

-- A batch is the runs one POST /api/v1/runs/batch started: each of them carries the batch's id, by which the batch
-- is read back (GET /api/v1/runs?batchId=…, the web UI's batch view) and named in the audit log. A run started on
-- its own has none. No table of batches: a batch is nothing but its runs, and an erased lead's runs leave it with
-- the rest.
ALTER TABLE runs ADD COLUMN batch_id uuid;
CREATE INDEX runs_by_batch ON runs (workspace_id, batch_id) WHERE batch_id IS NOT NULL;

-- Finished jobs are pruned after their retention (src/jobs/prune.ts): found by when they finished.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE status IN ('DONE', 'DEAD');
-- /metrics counts FAILED runs, a run's dead letter, on every scrape: from this index, not the whole runs table.
CREATE INDEX runs_failed ON runs (status) WHERE status = 'FAILED';

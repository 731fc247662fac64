-- How many processes follow a run's events (src/http/run-event-hub.ts: one per process with an event stream of the
-- run open). The worker's step transitions notify leadrun_run_events only while it is above zero: PostgreSQL lets one
-- notifying transaction commit at a time, and most runs are followed by nobody (docs/PERFORMANCE.md). A process that
-- dies leaves its count behind, which only costs that run the notices every run had before.
ALTER TABLE runs ADD COLUMN followers integer NOT NULL DEFAULT 0;

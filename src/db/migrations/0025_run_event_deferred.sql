-- Whether a step.retrying event is a step put off because the model provider asked to wait (not counted as an
-- attempt), rather than a failed attempt: the run page shows the two differently, and reads it here, not from the
-- event's text. Events written before this column are marked from that text, which the worker wrote then.
ALTER TABLE run_events ADD COLUMN deferred boolean NOT NULL DEFAULT false;
UPDATE run_events SET deferred = true WHERE type = 'step.retrying' AND error LIKE '%waiting on the model provider%';

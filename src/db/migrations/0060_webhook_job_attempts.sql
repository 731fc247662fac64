-- A webhook delivery is retried by the job runner on its kind's RetryPolicy (issue 40): the job's attempts are the
-- delivery's. A live delivery job queued before counted its attempts afresh after each retry, and was given 5: it
-- takes the delivery's count (and the one its running claim adds) and the new bound (WEBHOOK_JOB_MAX_ATTEMPTS), so
-- that its schedule goes on where it was and it still ends after its seventh failure.
UPDATE jobs j
SET attempts = d.attempts + CASE WHEN j.status = 'RUNNING' THEN 1 ELSE 0 END, max_attempts = 21
FROM webhook_deliveries d
WHERE j.kind = 'webhook.deliver' AND j.status IN ('QUEUED', 'RUNNING') AND j.key = d.id::text;

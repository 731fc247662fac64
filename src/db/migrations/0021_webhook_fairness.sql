-- Fair webhook deliveries (issue 38): one workspace's endpoint that never answers must not hold up every other
-- workspace's deliveries. A job may name a lane (a webhook delivery's lane is its endpoint); the webhook claim
-- (src/domain/webhooks/claim.ts) takes lanes in turn, least recently served workspace and endpoint first, never more
-- than a few of one lane's jobs at once, and skips an endpoint put off for timing out.
ALTER TABLE jobs ADD COLUMN lane text;
UPDATE jobs j SET lane = d.endpoint_id::text
FROM webhook_deliveries d
WHERE j.kind = 'webhook.deliver' AND j.status IN ('QUEUED', 'RUNNING') AND j.key = d.id::text;
-- The lanes with live jobs are found by skipping from one lane to the next in this index, and a lane's due jobs read
-- from it in order: a claim reads a few entries per lane, not every pending delivery.
CREATE INDEX jobs_lane_due ON jobs (kind, lane, available_at, created_at)
  WHERE status IN ('QUEUED', 'RUNNING') AND lane IS NOT NULL;
-- A lane's jobs in flight, counted against its cap on every claim.
CREATE INDEX jobs_lane_running ON jobs (kind, lane) WHERE status = 'RUNNING' AND lane IS NOT NULL;
-- A delivery job written without a lane (by a process of the previous version while a new one migrates) is still
-- taken, first in first out, from this index, which is empty otherwise.
CREATE INDEX jobs_webhook_laneless ON jobs (available_at, created_at)
  WHERE kind = 'webhook.deliver' AND lane IS NULL AND status IN ('QUEUED', 'RUNNING');

-- `served_at`: when a delivery to the endpoint was last claimed, for taking endpoints in turn. `timeouts`: the
-- endpoint's attempts in a row that got no answer in time; after each, it is put off until `put_off_until`, longer
-- each time, so that it cannot hold the shared delivery slots. A success clears both.
ALTER TABLE webhook_endpoints
  ADD COLUMN served_at timestamptz,
  ADD COLUMN timeouts integer NOT NULL DEFAULT 0,
  ADD COLUMN put_off_until timestamptz;

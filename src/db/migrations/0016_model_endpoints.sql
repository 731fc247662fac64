-- Model endpoints as every worker process sees them (src/agent/engines/limiter.ts): how many calls the installation
-- may have in flight to each (halved by a 429, raised by answers, at most LLM_MAX_CONCURRENCY), until when a 429's
-- Retry-After paused it, and which worker processes call it, so that each takes its share of the limit.
CREATE TABLE model_endpoints (
  endpoint text PRIMARY KEY,
  limit_now integer NOT NULL CHECK (limit_now >= 1),
  paused_until timestamptz,
  halved_at timestamptz,
  updated_at timestamptz NOT NULL
);

CREATE TABLE model_endpoint_workers (
  endpoint text NOT NULL,
  worker text NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (endpoint, worker)
);

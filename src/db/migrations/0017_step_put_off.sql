-- When a step was first put off because the model endpoint refused its calls (a 429 with Retry-After, or the
-- limiter's pause after one), since its last counted attempt: a step put off for longer than
-- LLM_RATE_LIMIT_GIVE_UP_MINUTES fails its run (src/worker/run-handler.ts), so that an endpoint that refuses for
-- ever (a revoked quota, a billing problem) does not keep runs waiting for ever, silently.
ALTER TABLE run_steps ADD COLUMN put_off_since timestamptz;

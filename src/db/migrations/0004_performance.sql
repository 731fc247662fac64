-- leadrun_iso is what PostgreSQL renders every timestamp of a JSON answer with. Declared IMMUTABLE, it could not be
-- inlined (its body calls to_char, which is STABLE), so every call was a full SQL-function call: about 2.5 times
-- the cost of the to_char it wraps (docs/PERFORMANCE.md). Declared STABLE, as its body is, the planner inlines it.
-- Nothing indexes it, so nothing needs it IMMUTABLE.
CREATE OR REPLACE FUNCTION leadrun_iso(ts timestamptz) RETURNS text
  LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- Workers claim the oldest claimable run (ORDER BY available_at, started_at ... LIMIT 1 FOR UPDATE SKIP LOCKED).
-- With both columns in the index the claim reads the first entries instead of sorting every queued run.
CREATE INDEX runs_claimable_in_order ON runs (available_at, started_at) WHERE status IN ('QUEUED', 'RUNNING');
DROP INDEX runs_claimable;

-- The trigger that numbers a run's events (0006) planned its two queries at every event, to keep a generic plan made
-- while run_events was young from scanning the whole table. That planning was 0.16 ms of PostgreSQL's time for each
-- event, ten events a run (pg_stat_statements during `npm run bench -- --only runs`). Its plans are now made once per
-- connection, and with sequential scans set aside they are the look-ups by primary key and by (run_id, seq) at any
-- size of the tables.
CREATE OR REPLACE FUNCTION leadrun_number_run_event() RETURNS trigger LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
  PERFORM 1 FROM runs WHERE id = NEW.run_id FOR NO KEY UPDATE;
  -- A query of this function sees the rows that earlier rows of the same INSERT added.
  NEW.seq := coalesce((SELECT max(seq) FROM run_events WHERE run_id = NEW.run_id), 0) + 1;
  RETURN NEW;
END
$$;

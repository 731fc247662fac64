-- A run's events are numbered 1, 2, 3… within the run: that number is the event id the API shows (the SSE `id`,
-- `Last-Event-ID`, `?after=`). The table's own id comes from one sequence shared by every workspace, so showing it
-- told each workspace how busy the others were.
--
-- The number is given by a trigger, so that every writer (one event or several in one statement, today's and
-- tomorrow's) gets it right without saying so. It takes the run row's lock first: two transactions adding events
-- to one run take turns, and the second counts the first one's events. The lock is FOR NO KEY UPDATE, which the
-- foreign-key checks of rows that reference the run do not wait for. (A counter on the run row would not do: a
-- statement that updates the run and adds its events, as the worker's do, may change that row only once.)
--
-- The function plans its query at each call: leadrun's connections force generic plans, and the one made when
-- run_events was young scanned the whole table, which cost a third of the runs a second in
-- `npm run bench -- --only runs`.
ALTER TABLE run_events ADD COLUMN seq integer;

UPDATE run_events e SET seq = n.seq
FROM (SELECT id, row_number() OVER (PARTITION BY run_id ORDER BY id) AS seq FROM run_events) n
WHERE e.id = n.id;

ALTER TABLE run_events ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX run_events_by_run_seq ON run_events (run_id, seq);
DROP INDEX run_events_by_run;

CREATE FUNCTION leadrun_number_run_event() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  PERFORM 1 FROM runs WHERE id = NEW.run_id FOR NO KEY UPDATE;
  -- A query of this function sees the rows that earlier rows of the same INSERT added.
  NEW.seq := coalesce((SELECT max(seq) FROM run_events WHERE run_id = NEW.run_id), 0) + 1;
  RETURN NEW;
END
$$;

CREATE TRIGGER run_events_numbered BEFORE INSERT ON run_events
  FOR EACH ROW EXECUTE FUNCTION leadrun_number_run_event();

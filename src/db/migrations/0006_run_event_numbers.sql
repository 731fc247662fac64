-- A run's events are numbered 1, 2, 3… within the run: that number is the event id the API shows (the SSE `id`,
-- `Last-Event-ID`, `?after=`). The table's own id comes from one sequence shared by every workspace, so showing it
-- told each workspace how busy the others were.
--
-- The number is given by a trigger, so that every writer (one event or several in one statement, today's and
-- tomorrow's) gets it right without saying so. It counts on the run's row: the update takes the row's lock, so two
-- transactions adding events to one run take turns and the second continues the first one's count. (Reading the
-- highest number so far from run_events instead cost a third of the runs a second (`npm run bench -- --only runs`): on a
-- young table the generic plan leadrun's connections force may scan it, while the run is found by its primary key.)
ALTER TABLE run_events ADD COLUMN seq integer;

UPDATE run_events e SET seq = n.seq
FROM (SELECT id, row_number() OVER (PARTITION BY run_id ORDER BY id) AS seq FROM run_events) n
WHERE e.id = n.id;

ALTER TABLE run_events ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX run_events_by_run_seq ON run_events (run_id, seq);
DROP INDEX run_events_by_run;

ALTER TABLE runs ADD COLUMN last_event_seq integer NOT NULL DEFAULT 0;
UPDATE runs r SET last_event_seq = n.last
FROM (SELECT run_id, max(seq) AS last FROM run_events GROUP BY run_id) n
WHERE r.id = n.run_id;

CREATE FUNCTION leadrun_number_run_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE runs SET last_event_seq = last_event_seq + 1 WHERE id = NEW.run_id RETURNING last_event_seq INTO NEW.seq;
  RETURN NEW;
END
$$;

CREATE TRIGGER run_events_numbered BEFORE INSERT ON run_events
  FOR EACH ROW EXECUTE FUNCTION leadrun_number_run_event();

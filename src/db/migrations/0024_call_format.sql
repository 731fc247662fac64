-- A call's transcript format (issue 39, DESIGN §12): how its transcript is laid out, as src/agent/transcript/detect.ts
-- names it ('webvtt', 'srt', 'otter', …). It is detected from the transcript's first 8 KB when the call is created.
-- Calls made before this column keep null, which means "not detected yet": the service detects their format when it
-- reads them (the detection reads a bounded prefix, so it costs the same for any call), and SQL need not know how.
-- No check of the values: the list of formats may grow, and a reader that knows fewer shows the format as it is.
ALTER TABLE calls ADD COLUMN format text;

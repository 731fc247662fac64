-- "Draft a response" (DESIGN §16): the answer to a buyer's reply is a touch of the reply's thread, written by WRITER
-- from the reply, reviewed and approved as a follow-up is, and sent in the same thread. It is no step of the
-- sequence: `kind` tells it from the sequence's touches, `reply_id` names the reply it answers (null once an erasure
-- removed the reply), and it goes whatever the enrolment's state, since the reply itself stopped the sequence.
ALTER TABLE touches ADD COLUMN kind text NOT NULL DEFAULT 'sequence' CHECK (kind IN ('sequence', 'response'));
ALTER TABLE touches ADD COLUMN reply_id uuid REFERENCES email_replies (id) ON DELETE SET NULL;
-- Touch 1, at most 10 follow-ups (SEQUENCE_STEPS_MAX), then at most 20 responses in one thread.
ALTER TABLE touches DROP CONSTRAINT touches_number_check;
ALTER TABLE touches ADD CONSTRAINT touches_number_check CHECK (number BETWEEN 1 AND 31);
-- One live response per reply: asking again answers the one there; a skipped one may be asked for anew.
CREATE UNIQUE INDEX touches_one_response ON touches (reply_id) WHERE reply_id IS NOT NULL AND status <> 'SKIPPED';

-- A run approved with no sequence has no enrolment; its first response makes one that holds only the thread
-- (touch 1 and the responses): FINISHED from the start, never shown as the run's `sequence`.
ALTER TABLE enrolments ADD COLUMN thread_only boolean NOT NULL DEFAULT false;

-- The reply's own words as the classifier read them (src/mail/reply-reading.ts, at most 8 KiB): what a
-- response answers. Replies found before this keep only their snippet, which then stands in for it.
ALTER TABLE email_replies ADD COLUMN text text;

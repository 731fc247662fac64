-- The states a delivery can end in or wait in beyond DESIGN §7's, for §13–§15: SCHEDULED (waiting for a send
-- window, a per-sender limit or the approval's `sendAt`), CANCELLED (taken off the outbox, or a follow-up whose
-- sequence stopped), SUPPRESSED (its address or domain asked to stop before it left) and BOUNCED (the recipient's
-- server refused it, at once or by a delivery status notification). One migration for all of them, so that the
-- check is written once.
ALTER TABLE email_deliveries DROP CONSTRAINT email_deliveries_status_check;
ALTER TABLE email_deliveries ADD CONSTRAINT email_deliveries_status_check
  CHECK (status IN ('SCHEDULED', 'QUEUED', 'DELIVERING', 'DELIVERED', 'FAILED', 'CANCELLED', 'SUPPRESSED', 'BOUNCED'));

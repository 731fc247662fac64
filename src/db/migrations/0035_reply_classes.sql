-- What each reply says (DESIGN §16): its class, the day an absence names for the return, the day a "not now" names to
-- come back from, the person a referral points to, and whether the class is the engine's reading or a person's
-- correction. A reply found before classes existed reads as `other`, by the engine.
ALTER TABLE email_replies
  ADD COLUMN classification text NOT NULL DEFAULT 'other' CHECK (classification IN (
    'interested', 'not_now', 'not_interested', 'out_of_office', 'unsubscribe', 'bounce', 'auto_reply', 'referral', 'other')),
  ADD COLUMN returns_on date,
  ADD COLUMN follow_up_after date,
  ADD COLUMN referral_name text,
  ADD COLUMN referral_email text,
  ADD COLUMN classified_by text NOT NULL DEFAULT 'engine' CHECK (classified_by IN ('engine', 'person'));

-- GET /api/v1/replies: a workspace's replies, newest first, of one class or all.
CREATE INDEX email_replies_workspace ON email_replies (workspace_id, received_at DESC, id DESC);
CREATE INDEX email_replies_workspace_class ON email_replies (workspace_id, classification, received_at DESC, id DESC);

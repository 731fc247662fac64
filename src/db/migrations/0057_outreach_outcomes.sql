-- Outcomes (DESIGN §16, src/domain/analytics/outreach.ts, docs/decisions/0013-outcomes-table.md): one narrow row per
-- e-mail sent over SMTP, with what it led to, so that the figures of a range are one scan of the workspace's rows in
-- it, where counting them from the deliveries joined to their replies, their run's STRATEGY step and the senders took
-- a second at 100,000 e-mails.
--
-- A row is the e-mail as its delivery, its replies and its run's STRATEGY step say now: `first_reply_at` is the first
-- reply of a person (any class but out_of_office, auto_reply and bounce); `bounced` is the delivery BOUNCED or a reply
-- classed as a bounce; `interested` and `unsubscribed` a reply of that class. The lead (for `won`, which moves on its
-- own and is joined when counted) and the sender (whose address is read when counted) are named by id.
CREATE TABLE outreach_outcomes (
  delivery_id    uuid PRIMARY KEY REFERENCES email_deliveries (id) ON DELETE CASCADE,
  workspace_id   uuid NOT NULL,
  lead_id        uuid NOT NULL,
  sent_at        timestamptz NOT NULL,
  sender_user_id uuid,
  angle          text,
  step           smallint NOT NULL,
  first_reply_at timestamptz,
  bounced        boolean NOT NULL,
  interested     boolean NOT NULL,
  unsubscribed   boolean NOT NULL
);
CREATE INDEX outreach_outcomes_sent ON outreach_outcomes (workspace_id, sent_at);

-- Counts the e-mails of `deliveries` again from their rows: an e-mail that is not (yet) one sent over SMTP is left
-- out. Recounting from the rows, rather than adding to a count, leaves nothing to drift however often it runs.
CREATE FUNCTION leadrun_count_outcomes(deliveries uuid[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO outreach_outcomes AS o (delivery_id, workspace_id, lead_id, sent_at, sender_user_id, angle, step, first_reply_at,
                                      bounced, interested, unsubscribed)
  SELECT e.id, e.workspace_id, r.lead_id, e.delivered_at, e.sender_user_id, nullif(btrim(st.output->>'angle'), ''), e.touch,
    p.first_reply_at, e.status = 'BOUNCED' OR coalesce(p.bounced, false), coalesce(p.interested, false), coalesce(p.unsubscribed, false)
  FROM (SELECT DISTINCT id FROM unnest(deliveries) AS x(id)) x
  JOIN email_deliveries e ON e.id = x.id
  JOIN runs r ON r.id = e.run_id
  LEFT JOIN run_steps st ON st.run_id = e.run_id AND st.node = 'STRATEGY'
  LEFT JOIN LATERAL (
    SELECT min(received_at) FILTER (WHERE classification NOT IN ('out_of_office', 'auto_reply', 'bounce')) AS first_reply_at,
      bool_or(classification = 'interested') AS interested, bool_or(classification = 'unsubscribe') AS unsubscribed,
      bool_or(classification = 'bounce') AS bounced
    FROM email_replies WHERE delivery_id = e.id
  ) p ON true
  WHERE e.method = 'send' AND e.status IN ('DELIVERED', 'BOUNCED') AND e.delivered_at IS NOT NULL
  ON CONFLICT (delivery_id) DO UPDATE SET sent_at = excluded.sent_at, sender_user_id = excluded.sender_user_id, angle = excluded.angle,
    step = excluded.step, first_reply_at = excluded.first_reply_at, bounced = excluded.bounced, interested = excluded.interested,
    unsubscribed = excluded.unsubscribed
  WHERE (o.sent_at, o.sender_user_id, o.angle, o.step, o.first_reply_at, o.bounced, o.interested, o.unsubscribed)
    IS DISTINCT FROM (excluded.sent_at, excluded.sender_user_id, excluded.angle, excluded.step, excluded.first_reply_at,
                      excluded.bounced, excluded.interested, excluded.unsubscribed)
$$;

-- Kept in the transaction of every change of a delivery or a reply by triggers, as run_events' numbers are (0006): a
-- delivery sent (src/jobs/handlers/email-deliver.ts), bounced (src/domain/suppressions/bounces.ts), a reply recorded
-- (src/mail/replies.ts) or classed again by a person (src/domain/replies/mark.ts), today's writers and tomorrow's,
-- one row or a bulk statement, without any of them saying so. An erased lead's rows go with its deliveries (CASCADE).
-- Statement triggers with transition tables: a statement that changes many rows recounts them in one query.
CREATE FUNCTION leadrun_count_changed_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'email_deliveries' THEN
    PERFORM leadrun_count_outcomes(ARRAY(SELECT id FROM changed WHERE method = 'send' AND status IN ('DELIVERED', 'BOUNCED')));
  ELSE
    PERFORM leadrun_count_outcomes(ARRAY(SELECT delivery_id FROM changed));
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER email_deliveries_outcomes_inserted AFTER INSERT ON email_deliveries
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION leadrun_count_changed_outcomes();
CREATE TRIGGER email_deliveries_outcomes_updated AFTER UPDATE ON email_deliveries
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION leadrun_count_changed_outcomes();
CREATE TRIGGER email_replies_outcomes_inserted AFTER INSERT ON email_replies
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION leadrun_count_changed_outcomes();
CREATE TRIGGER email_replies_outcomes_updated AFTER UPDATE ON email_replies
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION leadrun_count_changed_outcomes();
CREATE TRIGGER email_replies_outcomes_deleted AFTER DELETE ON email_replies
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION leadrun_count_changed_outcomes();

-- The e-mails sent before this migration.
SELECT leadrun_count_outcomes(ARRAY(SELECT id FROM email_deliveries WHERE method = 'send' AND status IN ('DELIVERED', 'BOUNCED')));

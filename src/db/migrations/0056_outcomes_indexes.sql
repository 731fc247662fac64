-- Outcomes (DESIGN §16, src/domain/analytics/outreach.ts): a workspace's e-mails sent in a range of days, the replies
-- received since, and the runs of WON leads (leads_page_by_status finds those leads), each read from an index alone,
-- no table row visited: 100,000 e-mails are counted in three index scans and two hash joins (bench/analytics.ts).
CREATE INDEX email_deliveries_outcomes ON email_deliveries (workspace_id, delivered_at)
  INCLUDE (id, run_id, sender_user_id, status, method);
CREATE INDEX email_replies_outcomes ON email_replies (workspace_id, received_at) INCLUDE (delivery_id, classification);
CREATE INDEX runs_outcomes ON runs (workspace_id, id) INCLUDE (lead_id);

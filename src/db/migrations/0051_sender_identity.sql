-- The sender's identity (DESIGN §15): the company name (null: the workspace's name) and postal address the footer
-- carries, whether the footer is on (default on), and an address that takes unsubscribe requests by mail.
ALTER TABLE mail_settings
  ADD COLUMN company_name text,
  ADD COLUMN postal_address text,
  ADD COLUMN footer_enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN unsubscribe_address text;

-- A lead's own time zone (DESIGN §14): an IANA name (`Europe/Berlin`), checked by the API against the zones the
-- server knows, or null for the workspace's. Follow-ups are sent inside the send window in this zone. It is part of
-- the lead's JSON, so the stored JSON is written anew (0013_delivery.sql's function, with timeZone last).
ALTER TABLE leads ADD COLUMN time_zone text CHECK (length(time_zone) <= 64);
ALTER TABLE leads DROP COLUMN api_json;
DROP FUNCTION leadrun_lead_json(uuid, text, text, text, text, text, uuid, timestamptz, timestamptz, timestamptz, timestamptz);
CREATE FUNCTION leadrun_lead_json(
  id uuid, name text, email text, company_name text, company_website text, status text, assigned_to_user_id uuid,
  created_at timestamptz, updated_at timestamptz, last_contacted_at timestamptz, last_reply_at timestamptz, time_zone text
) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":"' || id || '","name":' || to_json(name) || ',"email":' || coalesce(to_json(email)::text, 'null')
    || ',"companyName":' || coalesce(to_json(company_name)::text, 'null')
    || ',"companyWebsite":' || coalesce(to_json(company_website)::text, 'null')
    || ',"status":"' || status || '","assignedToUserId":' || coalesce('"' || assigned_to_user_id || '"', 'null')
    || ',"createdAt":"' || leadrun_iso(created_at) || '","updatedAt":"' || leadrun_iso(updated_at) || '"'
    || ',"lastContactedAt":' || coalesce('"' || leadrun_iso(last_contacted_at) || '"', 'null')
    || ',"lastReplyAt":' || coalesce('"' || leadrun_iso(last_reply_at) || '"', 'null')
    || ',"timeZone":' || coalesce(to_json(time_zone)::text, 'null') || '}'
$$;
ALTER TABLE leads ADD COLUMN api_json text NOT NULL GENERATED ALWAYS AS (leadrun_lead_json(
  id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at,
  last_contacted_at, last_reply_at, time_zone)) STORED;

-- What a reply does (DESIGN §16). An interested reply moves a CONTACTED lead to QUALIFIED unless the workspace turned
-- that off; a "not now" that names a time sets when the lead is next to be acted on, which is in the lead's JSON
-- (after 0045's timeZone).
ALTER TABLE workspaces ADD COLUMN qualify_on_interest boolean NOT NULL DEFAULT true;

ALTER TABLE leads ADD COLUMN next_action_at timestamptz;
ALTER TABLE leads DROP COLUMN api_json;
DROP FUNCTION leadrun_lead_json(uuid, text, text, text, text, text, uuid, timestamptz, timestamptz, timestamptz, timestamptz, text);
CREATE FUNCTION leadrun_lead_json(
  id uuid, name text, email text, company_name text, company_website text, status text, assigned_to_user_id uuid,
  created_at timestamptz, updated_at timestamptz, last_contacted_at timestamptz, last_reply_at timestamptz,
  time_zone text, next_action_at timestamptz
) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{"id":"' || id || '","name":' || to_json(name) || ',"email":' || coalesce(to_json(email)::text, 'null')
    || ',"companyName":' || coalesce(to_json(company_name)::text, 'null')
    || ',"companyWebsite":' || coalesce(to_json(company_website)::text, 'null')
    || ',"status":"' || status || '","assignedToUserId":' || coalesce('"' || assigned_to_user_id || '"', 'null')
    || ',"createdAt":"' || leadrun_iso(created_at) || '","updatedAt":"' || leadrun_iso(updated_at) || '"'
    || ',"lastContactedAt":' || coalesce('"' || leadrun_iso(last_contacted_at) || '"', 'null')
    || ',"lastReplyAt":' || coalesce('"' || leadrun_iso(last_reply_at) || '"', 'null')
    || ',"timeZone":' || coalesce(to_json(time_zone)::text, 'null')
    || ',"nextActionAt":' || coalesce('"' || leadrun_iso(next_action_at) || '"', 'null') || '}'
$$;
ALTER TABLE leads ADD COLUMN api_json text NOT NULL GENERATED ALWAYS AS (leadrun_lead_json(
  id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at,
  last_contacted_at, last_reply_at, time_zone, next_action_at)) STORED;

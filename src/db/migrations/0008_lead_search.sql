-- Lead search (GET /api/v1/leads?q=…): every word of q must appear inside the name, e-mail or company, whatever its
-- case and accents. Each lead keeps that text folded (leads.search_text, a generated column recomputed with every
-- write of the row, whatever writes it), indexed by trigrams, so that `search_text LIKE '%word%'` reads the index
-- instead of the table. pg_trgm and unaccent are trusted extensions: the database owner may create them. Adding the
-- column rewrites the table once, holding its lock meanwhile.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- Accents off first, then lower case: unaccent turns Å, Ö, ß, Æ into plain Latin letters (A, O, ss, AE), which lower()
-- folds under any locale, the C locale included. A body in the SQL-standard form is bound when the function is made,
-- so the extension's function and dictionary are found whatever the search_path of a later session (or a restore).
-- unaccent is declared STABLE because its dictionary could be changed; leadrun never changes it, so the fold of a
-- text never changes, which is what IMMUTABLE (required of a generated column and of an index) promises.
CREATE FUNCTION leadrun_search_text(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN lower(unaccent('unaccent'::regdictionary, t));

-- The fields are joined by a space: a word of q holds no whitespace, so it never matches across two fields.
ALTER TABLE leads ADD COLUMN search_text text NOT NULL GENERATED ALWAYS AS (
  leadrun_search_text(name || ' ' || coalesce(email, '') || ' ' || coalesce(company_name, ''))) STORED;

CREATE INDEX leads_search ON leads USING gin (search_text gin_trgm_ops);

-- The owner filter (GET /api/v1/leads?assignedToUserId=…), newest first, like leads_page and leads_page_by_status.
CREATE INDEX leads_page_by_owner ON leads (workspace_id, assigned_to_user_id, created_at DESC, id DESC);

// Migration 0040 gives every workspace that exists when it runs the default sequence, "Two follow-ups" (+3 and +5
// business days, review required), the same as a workspace made later gets (src/domain/sequences/sequences.ts), on
// both backends. The database is taken back to before 0040–0041 and a workspace made there; migrating again gives
// it its default.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_SEQUENCE } from '../../src/domain/sequences/sequences.ts';
import { BACKENDS, createTestDatabase } from '../helpers.ts';

for (const kind of BACKENDS) {
  describe(`migration 0040 (${kind})`, () => {
    it('gives every existing workspace the default sequence', async () => {
      const test = await createTestDatabase(kind);
      try {
        const db = test.database.db;
        for (const table of ['touches', 'enrolments', 'sequences']) await sql.raw(`DROP TABLE ${table}`).execute(db);
        await sql`ALTER TABLE email_drafts DROP CONSTRAINT email_drafts_run_touch_version`.execute(db);
        await sql`ALTER TABLE email_drafts DROP COLUMN touch`.execute(db);
        await sql`ALTER TABLE email_drafts ADD CONSTRAINT email_drafts_run_id_version_key UNIQUE (run_id, version)`.execute(db);
        await sql`ALTER TABLE email_deliveries DROP COLUMN touch`.execute(db);
        await sql`DELETE FROM schema_migrations WHERE version IN (40, 41)`.execute(db);
        const ids = [randomUUID(), randomUUID()];
        for (const id of ids) await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (${id}, ${`Old ${id.slice(0, 4)}`}, 'PRO', now())`.execute(db);

        await test.database.migrate();
        const rows = await db.selectFrom('sequences').select(['workspace_id', 'name', 'steps', 'is_default']).where('workspace_id', 'in', ids).execute();
        assert.equal(rows.length, 2);
        for (const row of rows) {
          assert.equal(row.name, DEFAULT_SEQUENCE.name);
          assert.equal(row.is_default, true);
          assert.deepEqual(row.steps, DEFAULT_SEQUENCE.steps, 'the migration\'s steps are the code\'s');
        }
      } finally {
        await test.drop();
      }
    });
  });
}

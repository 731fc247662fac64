// The test databases given back for the next test (./recycling.ts) come back as the template: a test never sees what an
// earlier test of its process left. On both backends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { BACKENDS, createTestDatabase } from '../helpers.ts';
import type { Database } from '../../src/db/database.ts';

async function state(database: Database): Promise<{ workspaces: number; migrations: number; nextEvent: number; name: string }> {
  const { rows: [row] } = await sql<{ workspaces: number; migrations: number; name: string }>`
    SELECT (SELECT count(*)::int FROM workspaces) AS workspaces, (SELECT count(*)::int FROM schema_migrations) AS migrations,
      current_database() AS name`.execute(database.db);
  const { rows: [seq] } = await sql<{ next: string }>`SELECT nextval('run_events_id_seq') AS next`.execute(database.db);
  return { ...row!, nextEvent: Number(seq!.next) };
}

for (const kind of BACKENDS) {
  describe(`test databases given back (${kind})`, () => {
    it('come back with the rows a test added deleted, its sequences restarted and the template rows kept', async () => {
      const first = await createTestDatabase(kind);
      let fresh: Awaited<ReturnType<typeof state>>;
      try {
        fresh = await state(first.database);
        assert.equal(fresh.workspaces, 0);
        assert.ok(fresh.migrations > 0);
        await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (gen_random_uuid(), 'Left behind', 'PRO', now())`.execute(first.database.db);
        for (let i = 0; i < 3; i++) await sql`SELECT nextval('run_events_id_seq')`.execute(first.database.db);
      } finally {
        await first.drop();
      }

      const second = await createTestDatabase(kind);
      try {
        const now = await state(second.database);
        // The same database on PostgreSQL (on PGlite every database is named postgres), emptied.
        assert.equal(now.name, fresh.name);
        assert.deepEqual(now, fresh);
      } finally {
        await second.drop();
      }
    });

    it('are not given back when a test changed their schema', async () => {
      const first = await createTestDatabase(kind);
      try {
        await sql`CREATE TABLE left_behind (id int)`.execute(first.database.db);
      } finally {
        await first.drop();
      }
      const second = await createTestDatabase(kind);
      try {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'left_behind'`.execute(second.database.db);
        assert.equal(rows[0]!.n, 0);
      } finally {
        await second.drop();
      }
    });

    it('are let go by the test first: its transaction still running ends, and a query it starts later is refused', async () => {
      const first = await createTestDatabase(kind);
      let finish!: () => void;
      const held = new Promise<void>((resolve) => { finish = resolve; });
      let inside!: () => void;
      const started = new Promise<void>((resolve) => { inside = resolve; });
      const transaction = first.database.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (gen_random_uuid(), 'Still writing', 'PRO', now())`.execute(trx);
        inside();
        await held;
        await sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (gen_random_uuid(), 'Written last', 'PRO', now())`.execute(trx);
      });
      await started;
      let dropped = false;
      const drop = first.drop().then(() => { dropped = true; });
      for (let turn = 0; turn < 5; turn++) await new Promise(setImmediate);
      assert.equal(dropped, false, 'not given back while its transaction runs');
      finish();
      await transaction;
      await drop;

      const second = await createTestDatabase(kind);
      try {
        // A late write of the test's app, as a key's last use recorded after the app closed.
        await assert.rejects(sql`INSERT INTO workspaces (id, name, plan, created_at) VALUES (gen_random_uuid(), 'Late', 'PRO', now())`.execute(first.database.db));
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`.execute(second.database.db);
        assert.equal(rows[0]!.n, 0, 'the next test sees none of it');
      } finally {
        await second.drop();
      }
    });
  });
}

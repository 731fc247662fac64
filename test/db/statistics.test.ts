// The planner's statistics (src/db/statistics.ts): PGlite has no autovacuum, so leadrun analyzes the tables whose rows
// changed enough, as autovacuum would; on PostgreSQL its autovacuum does, and leadrun leaves it to it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { refreshStatisticsEvery } from '../../src/db/statistics.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

for (const kind of BACKENDS) {
  describe(`the planner's statistics (${kind})`, () => {
    let testDb: TestDatabase;

    before(async () => { testDb = await createTestDatabase(kind); });
    after(() => testDb?.drop());

    it(kind === 'pglite' ? 'analyzes a table once enough of its rows changed, and then not again' : 'leaves them to autovacuum', async () => {
      const { database } = testDb;
      await database.refreshStatistics(); // whatever the template left
      await sql`INSERT INTO workspaces (id, name, plan, created_at)
        SELECT gen_random_uuid(), 'Workspace ' || g, 'PRO', now() FROM generate_series(1, 500) g`.execute(database.db);
      // Flushed to the statistics PostgreSQL keeps of each table when the transaction ends.
      const analyzed = await database.refreshStatistics();
      if (kind === 'postgres') {
        assert.deepEqual(analyzed, []);
        return;
      }
      assert.deepEqual(analyzed, ['workspaces']);
      const { rows } = await sql<{ reltuples: number }>`SELECT reltuples FROM pg_class WHERE relname = 'workspaces'`.execute(database.db);
      assert.ok(rows[0]!.reltuples >= 500, `the planner knows of ${rows[0]!.reltuples} workspaces`);
      assert.deepEqual(await database.refreshStatistics(), [], 'nothing changed since');
      // Under a tenth of the table (and over 50 rows) is not enough.
      await sql`UPDATE workspaces SET name = name || '.' WHERE name LIKE 'Workspace 1_'`.execute(database.db);
      assert.deepEqual(await database.refreshStatistics(), []);
    });

    it('refreshes now and then every interval, never two at once, and stops after the one under way', async () => {
      let calls = 0;
      let running = 0;
      let most = 0;
      const release: Array<() => void> = [];
      const refresh = async () => {
        calls += 1;
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => release.push(resolve));
        running -= 1;
        return [];
      };
      const timer = refreshStatisticsEvery(refresh, 5, () => assert.fail('no error'));
      assert.equal(calls, 1, 'at once');
      // Ticks while the first is under way start nothing.
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(calls, 1);
      const stopped = timer.stop();
      let done = false;
      void stopped.then(() => { done = true; });
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(done, false, 'stop waits for the refresh under way');
      release.shift()!();
      await stopped;
      assert.equal(most, 1);
      assert.equal(calls, 1, 'none after stop');
    });
  });
}

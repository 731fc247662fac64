// inTransaction (and so every API mutation, which runs in it) tries a transaction again when PostgreSQL ends it with
// a deadlock or a serialization failure: a real deadlock between two connections ends with both committed, not a
// 500. Other errors, a conflict that keeps coming, and a transaction owned by the caller are not retried.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { CONFLICT_ATTEMPTS, inTransaction } from '../../src/db/transaction.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

const codeOf = (error: unknown) => (error as { code?: string }).code;

for (const kind of BACKENDS) {
  describe(`a transaction tried again after a conflict (${kind})`, () => {
    let testDb: TestDatabase;
    const counters = async () => (await sql<{ id: number; n: number }>`SELECT id, n FROM counters ORDER BY id`.execute(testDb.database.db)).rows;

    before(async () => {
      testDb = await createTestDatabase(kind);
      await sql`CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)`.execute(testDb.database.db);
    });
    after(() => testDb?.drop());

    it('a deadlock with another connection: this side is ended by PostgreSQL, runs again and commits', { skip: kind !== 'postgres' && 'PGlite runs one transaction at a time' }, async () => {
      const db = testDb.database.db;
      await sql`INSERT INTO counters VALUES (1, 0), (2, 0)`.execute(db);
      const other = new pg.Client({ connectionString: testDb.url! });
      await other.connect();
      try {
        // The other side looks for a deadlock only after 10 s, this side after 50 ms: this side is the one ended.
        await other.query(`SET deadlock_timeout = '10s'`);
        const oneHeldHere = Promise.withResolvers<void>();
        const twoHeldThere = Promise.withResolvers<void>();
        const seen: Array<string | undefined> = [];
        let tries = 0;

        const here = inTransaction(db, async (trx) => {
          tries += 1;
          await sql`SET LOCAL deadlock_timeout = '50ms'`.execute(trx);
          await sql`UPDATE counters SET n = n + 1 WHERE id = 1`.execute(trx);
          if (tries === 1) {
            oneHeldHere.resolve();
            await twoHeldThere.promise;
          }
          try {
            await sql`UPDATE counters SET n = n + 1 WHERE id = 2`.execute(trx);
          } catch (error) {
            seen.push(codeOf(error));
            throw error;
          }
          return tries;
        });
        const there = (async () => {
          await other.query('BEGIN');
          await oneHeldHere.promise;
          await other.query('UPDATE counters SET n = n + 100 WHERE id = 2');
          twoHeldThere.resolve();
          // Waits for row 1, which this side holds while it waits for row 2: a deadlock.
          await other.query('UPDATE counters SET n = n + 100 WHERE id = 1');
          await other.query('COMMIT');
        })();

        const [triesTaken] = await Promise.all([here, there]);
        assert.deepEqual(seen, ['40P01'], 'the first try was ended as a deadlock');
        assert.equal(triesTaken, 2);
        assert.deepEqual(await counters(), [{ id: 1, n: 101 }, { id: 2, n: 101 }], 'both transactions committed, each once');
      } finally {
        await other.end();
        await sql`DELETE FROM counters`.execute(db);
      }
    });

    it('a serialization failure every time: tried CONFLICT_ATTEMPTS times, then the error', async () => {
      let tries = 0;
      const error = await inTransaction(testDb.database.db, async (trx) => {
        tries += 1;
        await sql`INSERT INTO counters VALUES (${tries}, 0)`.execute(trx);
        await sql`DO $$ BEGIN RAISE EXCEPTION 'could not serialize' USING ERRCODE = 'serialization_failure'; END $$`.execute(trx);
      }).catch((e: unknown) => e);
      assert.equal(codeOf(error), '40001', String(error));
      assert.equal(tries, CONFLICT_ATTEMPTS);
      assert.deepEqual(await counters(), [], 'every try was rolled back');
    });

    it('any other error is thrown at once, after one try', async () => {
      let tries = 0;
      const error = await inTransaction(testDb.database.db, async (trx) => {
        tries += 1;
        await sql`INSERT INTO counters VALUES (1, 0), (1, 0)`.execute(trx);
      }).catch((e: unknown) => e);
      assert.equal(codeOf(error), '23505', String(error));
      assert.equal(tries, 1);
    });

    it('inside the caller\'s transaction it runs once: only the caller can try its transaction again', async () => {
      let tries = 0;
      const error = await testDb.database.db.transaction().execute((outer) => inTransaction(outer, async (trx) => {
        tries += 1;
        await sql`DO $$ BEGIN RAISE EXCEPTION 'deadlock' USING ERRCODE = 'deadlock_detected'; END $$`.execute(trx);
      })).catch((e: unknown) => e);
      assert.equal(codeOf(error), '40P01', String(error));
      assert.equal(tries, 1);
    });
  });
}

// DATABASE_POOL_WAIT_SECONDS: on PostgreSQL, a query waits that long for one of the pool's connections when all are
// busy, then fails as the database being unavailable (answered 503). Judged by what happens, not by the clock: with
// the pool's one connection held for 3 s, a query allowed 0.2 s fails and one allowed a minute is answered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { isDatabaseUnavailable } from '../../src/http/problem.ts';
import { BACKENDS, createMigratedPostgresDatabase } from '../helpers.ts';

describe('waiting for a pool connection on PostgreSQL', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let created: { url: string; drop(): Promise<void> };
  before(async () => { created = await createMigratedPostgresDatabase(); });
  after(() => created?.drop());

  /** Holds the pool's one connection for `ms`, in a transaction of its own; resolves once it holds it. */
  async function holdOnlyConnection(database: Database, ms: number): Promise<{ released: Promise<void> }> {
    const held = Promise.withResolvers<void>();
    const released = database.db.transaction().execute(async (trx) => {
      held.resolve();
      await sql`SELECT pg_sleep(${ms / 1000})`.execute(trx);
    });
    await held.promise;
    return { released };
  }

  for (const [waitMs, outcome] of [[200, 'fails as unavailable'], [60_000, 'is answered']] as const) {
    it(`a query allowed ${waitMs / 1000} s while the only connection is busy for 3 s ${outcome}`, async () => {
      const database = await openDatabase({ databaseUrl: created.url, poolSize: 1, poolWaitMs: waitMs });
      try {
        const { released } = await holdOnlyConnection(database, 3_000);
        await sql`SELECT 1`.execute(database.db).then(
          () => assert.equal(outcome, 'is answered'),
          (error: Error) => {
            assert.equal(outcome, 'fails as unavailable', error.message);
            assert.ok(isDatabaseUnavailable(error), error.message);
          },
        );
        await released;
      } finally {
        await database.close();
      }
    });
  }
});

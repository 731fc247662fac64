// The embedded database's connection (src/db/pglite-dialect.ts): a statement is prepared the first time it is seen and
// run in one call to PGlite afterwards. What it answers must be what PGlite's own `query` answers, for every kind of
// value, error and transaction, and the statements it keeps must stay few, fit the schema and survive a session that
// let go of them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { sql, type Kysely } from 'kysely';
import { openPGliteInstance, pgliteDatabase, planEachTime, type Database } from '../../src/db/database.ts';
import { pgliteTemplate } from '../support/templates.ts';

describe('the embedded database connection', () => {
  let pglite: PGlite;
  let database: Database;
  let db: Kysely<any>;
  /** Calls into PGlite's WebAssembly, counted. */
  let calls = 0;

  before(async () => {
    pglite = await openPGliteInstance({ databaseUrl: null, inMemory: true, loadDataDir: await pgliteTemplate() });
    const execProtocol = pglite.execProtocol.bind(pglite);
    pglite.execProtocol = (...args) => {
      calls += 1;
      return execProtocol(...args);
    };
    database = pgliteDatabase(pglite);
    db = database.db as unknown as Kysely<any>;
    await pglite.exec(`CREATE TABLE kinds (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(), label text UNIQUE, n integer, big bigint, ok boolean, at timestamptz,
      day date, doc jsonb, tags text[], bytes bytea, ratio double precision
    )`);
  });
  after(() => database?.close());

  const prepared = async () => (await pglite.query<{ name: string; statement: string }>(
    `SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'leadrun\\_%'`,
  )).rows;

  it('stores and reads back every kind of value as PGlite itself does', async () => {
    const row = {
      label: 'every kind', n: 42, big: '9007199254740993', ok: true, at: new Date('2026-11-27T10:11:12.345Z'), day: '2026-11-27',
      doc: { nested: { list: [1, 'two', null], quote: 'it\'s "quoted"' } }, tags: ['a', 'b,c', 'd"e', ''], bytes: Uint8Array.from([0, 1, 254, 255]),
      ratio: 0.125,
    };
    const inserted = await db.insertInto('kinds').values({ ...row, doc: JSON.stringify(row.doc) }).returningAll().executeTakeFirstOrThrow();
    const own = (await pglite.query<Record<string, unknown>>('SELECT * FROM kinds WHERE id = $1', [inserted.id])).rows[0];
    assert.deepEqual(inserted, own);
    assert.equal(inserted.label, row.label);
    assert.equal(inserted.n, 42);
    assert.equal(inserted.ok, true);
    assert.deepEqual(inserted.at, row.at);
    assert.deepEqual(inserted.doc, row.doc);
    assert.deepEqual(inserted.tags, row.tags);
    assert.deepEqual([...(inserted.bytes as Uint8Array)], [0, 1, 254, 255]);
    assert.equal(inserted.ratio, 0.125);

    const nulls = await db.insertInto('kinds').values({ label: null, n: null, at: null, tags: null }).returning(['label', 'n', 'at', 'tags']).executeTakeFirstOrThrow();
    assert.deepEqual(nulls, { label: null, n: null, at: null, tags: null });
    const found = await db.selectFrom('kinds').select(['label']).where('at', '=', row.at).where('tags', '@>', sql<string[]>`${['b,c']}`).execute();
    assert.deepEqual(found, [{ label: 'every kind' }]);
  });

  it('prepares a statement once and runs it in one call afterwards, with a plan for any values', async () => {
    const lookup = (n: number) => db.selectFrom('kinds').select(['n']).where('n', '=', n).execute();
    await lookup(1);
    const before = calls;
    for (let n = 0; n < 20; n++) await lookup(n);
    assert.equal(calls - before, 20, 'one call into PGlite for each execution');
    const mine = (await prepared()).filter((s) => s.statement.includes('select "n" from "kinds"'));
    assert.equal(mine.length, 1, 'one prepared statement for the one text');
    const plan = await pglite.query<{ generic_plans: number; custom_plans: number }>(
      `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'select "n" from "kinds"%'`,
    );
    assert.equal(plan.rows[0]!.custom_plans, 0, 'planned for any values, as on PostgreSQL');
  });

  it('keeps no statement marked to be planned at each execution', async () => {
    await pglite.exec('CREATE TABLE growing (id int PRIMARY KEY, k int NOT NULL)');
    const lookup = (k: number, marked: boolean) =>
      sql<{ id: number }>`${marked ? planEachTime : sql``}SELECT id FROM growing WHERE k = ${k} AND id > 0`.execute(db);
    await lookup(1, true);
    await lookup(1, false);
    await lookup(2, true);
    const mine = (await prepared()).filter((s) => s.statement.includes('FROM growing'));
    assert.equal(mine.length, 1, 'only the unmarked statement is kept');
    assert.ok(!mine[0]!.statement.includes('plan-each-time'));
  });

  it('keeps at most 200 statements, the least recently used let go', async () => {
    const hot = () => db.selectFrom('kinds').select(['label']).where('label', '=', 'hot').execute();
    await hot();
    for (let i = 0; i < 300; i++) {
      await sql`SELECT ${sql.lit(i)}::int AS i, ${'x'}::text AS x`.execute(db);
      if (i % 50 === 0) await hot();
    }
    const kept = await prepared();
    assert.ok(kept.length <= 200, `${kept.length} statements kept`);
    assert.ok(kept.some((s) => s.statement.includes(`where "label" = $1`)), 'the statement in use is kept');
  });

  it('answers an error as PGlite does, and a failed transaction is rolled back, with the connection whole after', async () => {
    await db.insertInto('kinds').values({ label: 'unique' }).execute();
    await assert.rejects(db.insertInto('kinds').values({ label: 'unique' }).execute(), (error: any) => {
      assert.equal(error.code, '23505');
      assert.equal(error.constraint, 'kinds_label_key');
      return true;
    });
    await assert.rejects(db.selectFrom('kinds').select('id').where('id', '=', 'not a uuid').execute(), { code: '22P02' });
    await assert.rejects(db.transaction().execute(async (trx) => {
      await trx.insertInto('kinds').values({ label: 'in a transaction' }).execute();
      await trx.insertInto('kinds').values({ label: 'unique' }).execute();
    }), { code: '23505' });
    assert.deepEqual(await db.selectFrom('kinds').select('label').where('label', '=', 'in a transaction').execute(), []);
    await assert.rejects(sql`SELECT 1; SELECT 2`.execute(db), /multiple commands/);
    assert.equal((await sql<{ one: number }>`SELECT ${1}::int AS one`.execute(db)).rows[0]!.one, 1);
  });

  it('prepares again a statement the schema no longer fits, or that the session let go of', async () => {
    const all = () => db.selectFrom('kinds').selectAll().where('label', '=', 'unique').executeTakeFirstOrThrow();
    assert.equal('added' in (await all()), false);
    await pglite.exec('ALTER TABLE kinds ADD COLUMN added text DEFAULT \'new\'');
    assert.equal((await all()).added, 'new', 'read with the new column');
    await pglite.exec('DEALLOCATE ALL');
    assert.equal((await all()).label, 'unique', 'prepared again after DEALLOCATE ALL');
    await sql`DISCARD ALL`.execute(db);
    assert.equal((await all()).label, 'unique', 'prepared again after DISCARD ALL');
  });

  it('shares PGlite with its own queries and notifications, in any order', async () => {
    const heard: string[] = [];
    const unlisten = await database.listen('kinds_test', (payload) => heard.push(payload));
    const work = Array.from({ length: 40 }, (_, i) => i % 2
      ? db.selectFrom('kinds').select(sql<number>`${i}::int`.as('i')).limit(1).executeTakeFirstOrThrow().then((r) => r.i)
      : pglite.query<{ i: number }>('SELECT $1::int AS i', [i]).then((r) => r.rows[0]!.i));
    assert.deepEqual(await Promise.all(work), Array.from({ length: 40 }, (_, i) => i));
    await sql`SELECT pg_notify('kinds_test', ${'hello'})`.execute(db);
    await unlisten();
    assert.deepEqual(heard, ['hello']);
  });
});

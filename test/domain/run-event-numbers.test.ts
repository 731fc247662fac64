// A run's events are numbered 1, 2, 3… within the run (migration 0006): the events written before it get their
// numbers from the order they were written in, and writers that add events to one run at the same time take turns.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openPGliteInstance } from '../../src/db/database.ts';
import { migrationFiles } from '../../src/db/migrate.ts';
import { recordEvent } from '../../src/domain/runs/lifecycle.ts';
import { BACKENDS, createPostgresDatabase, createTestDatabase } from '../helpers.ts';
import { pgliteTemplate } from '../support/templates.ts';

const NUMBERING = 6;

/** A workspace, a lead, a call and `runs` runs, in plain SQL that every schema version since 0001 accepts. */
function seed(workspaceId: string, runIds: string[]): string {
  const leadId = randomUUID();
  const callId = randomUUID();
  return `
    INSERT INTO workspaces (id, name, plan, created_at) VALUES ('${workspaceId}', 'Numbers', 'PRO', now());
    INSERT INTO leads (id, workspace_id, name, status, created_at, updated_at) VALUES ('${leadId}', '${workspaceId}', 'Ada', 'DISCOVERY', now(), now());
    INSERT INTO calls (id, workspace_id, lead_id, transcript, created_at) VALUES ('${callId}', '${workspaceId}', '${leadId}', 'Hello.', now());
    ${runIds.map((id) => `INSERT INTO runs (id, workspace_id, lead_id, call_id, status, trace_id, available_at, started_at, updated_at)
      VALUES ('${id}', '${workspaceId}', '${leadId}', '${callId}', 'QUEUED', 'trace', now(), now(), now());`).join('\n')}`;
}

/** A database session of either backend that runs scripts and returns rows. */
async function rawSession(kind: 'postgres' | 'pglite') {
  if (kind === 'pglite') {
    // The migrated template with its schema dropped is an empty database, without the 3 s of CPU of a new initdb.
    const pglite = await openPGliteInstance({ databaseUrl: null, inMemory: true, loadDataDir: await pgliteTemplate() });
    await pglite.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    return {
      exec: async (script: string) => { await pglite.exec(script); },
      rows: async <T>(text: string) => (await pglite.query<T>(text)).rows,
      close: () => pglite.close(),
    };
  }
  const created = await createPostgresDatabase();
  const client = new pg.Client({ connectionString: created.url });
  await client.connect();
  return {
    exec: async (script: string) => { await client.query(script); },
    rows: async <T>(text: string) => (await client.query(text)).rows as T[],
    close: async () => { await client.end(); await created.drop(); },
  };
}

for (const kind of BACKENDS) {
  describe(`run event numbers (${kind})`, () => {
    it('numbers the events written before the migration within each run, in the order they were written', async () => {
      const session = await rawSession(kind);
      try {
        const files = await migrationFiles();
        for (const f of files.filter((m) => m.version < NUMBERING)) await session.exec(await readFile(f.file, 'utf8'));
        const [one, two] = [randomUUID(), randomUUID()];
        await session.exec(seed(randomUUID(), [one, two]));
        // Two runs' events, interleaved as two runs at once write them.
        const order = [one, two, two, one, one, two, one];
        for (const runId of order) {
          await session.exec(`INSERT INTO run_events (run_id, workspace_id, type, occurred_at)
            SELECT id, workspace_id, 'step.started', now() FROM runs WHERE id = '${runId}'`);
        }
        for (const f of files.filter((m) => m.version === NUMBERING)) await session.exec(await readFile(f.file, 'utf8'));

        const numbered = await session.rows<{ run_id: string; seq: number }>('SELECT run_id, seq FROM run_events ORDER BY id');
        assert.deepEqual(numbered.map((r) => [r.run_id, r.seq]), [[one, 1], [two, 1], [two, 2], [one, 2], [one, 3], [two, 3], [one, 4]]);
        // The next event of a run follows on; two events written by one statement get two numbers.
        await session.exec(`INSERT INTO run_events (run_id, workspace_id, type, occurred_at)
          SELECT id, workspace_id, t, now() FROM runs, unnest(ARRAY['step.completed', 'run.awaiting_approval']) AS t WHERE id = '${two}'`);
        const next = await session.rows<{ type: string; seq: number }>(`SELECT type, seq FROM run_events WHERE run_id = '${two}' AND seq > 3 ORDER BY seq`);
        assert.deepEqual(next.map((r) => [r.type, r.seq]), [['step.completed', 4], ['run.awaiting_approval', 5]]);
      } finally {
        await session.close();
      }
    });
  });
}

describe('run event numbers under concurrent writers (postgres)', { skip: !BACKENDS.includes('postgres') }, () => {
  it('gives 1…n, each once, to events that many transactions add to one run at the same time', async () => {
    const testDb = await createTestDatabase('postgres');
    try {
      const { db } = testDb.database;
      const workspaceId = randomUUID();
      const runId = randomUUID();
      await sql.raw(seed(workspaceId, [runId])).execute(db);
      const writers = 24;
      await Promise.all(Array.from({ length: writers }, (_, i) => db.transaction().execute(async (trx) => {
        await recordEvent(trx, { runId, workspaceId, type: 'step.started', attempt: i, at: new Date() });
        // Keeps the transaction open a moment after its insert: a writer that numbered without taking turns would
        // count the same events as another one still open, and the unique index would refuse the second.
        await sql`SELECT pg_sleep(0.005)`.execute(trx);
      })));
      const rows = await db.selectFrom('run_events').select('seq').where('run_id', '=', runId).orderBy('seq').execute();
      assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: writers }, (_, i) => i + 1));
    } finally {
      await testDb.drop();
    }
  });
});

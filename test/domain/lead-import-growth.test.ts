// A dedupe import's work grows with its file, not with the workspace it writes into (issue 38: on a long-used
// embedded installation, a 50,000-row `dedupe=email` import took 26 minutes). Counted in the rows the database read
// for it, as PostgreSQL's statistics functions count them within the import's own transaction: work, not time, so
// that the check means the same on a quiet machine and a loaded one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { systemClock } from '../../src/clock.ts';
import type { DB } from '../../src/db/schema.ts';
import { readImportFile, type ReadImport } from '../../src/domain/leads/import-file.ts';
import { writeLeadImport, type LeadImportResult } from '../../src/domain/leads/import.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

/** A CSV file of `count` leads from `first` on; `name` tells one version of a lead from another. */
function file(first: number, count: number, name = 'Person'): ReadImport {
  const rows = Array.from({ length: count }, (_, i) => `${name} ${first + i},p${first + i}@example.com,Company ${(first + i) % 300}`);
  const read = readImportFile({ format: 'csv', bytes: Buffer.from(`name,email,company\n${rows.join('\n')}\n`), map: {}, dedupe: true, userIds: [] });
  if (!read.ok) throw new Error(read.message);
  return read;
}

/** Imports `read`, and counts the leads' rows the database read for it (by scans and through indexes). */
async function importCounted(db: Kysely<DB>, workspaceId: string, read: ReadImport, dedupe: boolean): Promise<{ result: LeadImportResult; rowsRead: number }> {
  return db.transaction().execute(async (trx) => {
    // Rows read by sequential scans, and fetched by bitmap scans (counted on the table) and index scans (on the index).
    const readSoFar = async () => Number((await sql<{ n: string }>`
      SELECT pg_stat_get_xact_tuples_returned('leads'::regclass) + pg_stat_get_xact_tuples_fetched('leads'::regclass)
             + (SELECT sum(pg_stat_get_xact_tuples_fetched(indexrelid)) FROM pg_index WHERE indrelid = 'leads'::regclass) AS n`.execute(trx)).rows[0]!.n);
    const before = await readSoFar();
    const result = await writeLeadImport(trx, workspaceId, read, { dedupe: dedupe ? 'email' : null, dryRun: false }, systemClock);
    return { result, rowsRead: await readSoFar() - before };
  });
}

for (const kind of BACKENDS) {
  describe(`a dedupe import's work, against a workspace that grew (${kind})`, () => {
    let testDb: TestDatabase;
    let db: Kysely<DB>;
    let workspaceId: string;

    before(async () => {
      testDb = await createTestDatabase(kind);
      db = testDb.database.db;
      const workspace = sql<{ id: string }>`
        INSERT INTO workspaces (id, name, plan, created_at) VALUES (gen_random_uuid(), 'Growth', 'PRO', now()) RETURNING id`;
      workspaceId = (await workspace.execute(db)).rows[0]!.id;
      const other = (await workspace.execute(db)).rows[0]!.id;
      // As an installation is used: its first dedupe imports run while the workspace is small, and their statements
      // are planned then (PGlite keeps them prepared); then the workspace grows, as does another.
      await importCounted(db, workspaceId, file(0, 200), false);
      await importCounted(db, workspaceId, file(0, 200, 'Early'), true);
      await importCounted(db, workspaceId, file(200, 20_000), false);
      await importCounted(db, other, file(0, 5_000), false);
    });
    after(() => testDb?.drop());

    it('reads a few rows for each row of the file, and twice as many for twice the rows', async (t) => {
      const small = await importCounted(db, workspaceId, file(1_000, 1_000, 'Renamed'), true);
      const large = await importCounted(db, workspaceId, file(5_000, 2_000, 'Renamed'), true);
      t.diagnostic(`rows read: ${small.rowsRead} for 1,000 rows, ${large.rowsRead} for 2,000`);
      assert.deepEqual([small.result.created, small.result.updated], [0, 1_000]);
      assert.deepEqual([large.result.created, large.result.updated], [0, 2_000]);
      // Each row finds its lead through leads_by_email and updates it through its primary key: a reading of every
      // lead of the workspace for each batch of 250 rows, as before, was 80 rows read for each row of the file here.
      assert.ok(small.rowsRead <= 4 * 1_000, `${small.rowsRead} rows read for 1,000 rows imported`);
      const growth = large.rowsRead / small.rowsRead;
      assert.ok(growth > 1.6 && growth < 2.4, `twice the rows read ${growth.toFixed(2)} times as many (${small.rowsRead}, then ${large.rowsRead})`);
    });

    it('writes nothing for rows that change nothing, and still counts them as updated', async () => {
      const [before] = await db.selectFrom('leads').select(['updated_at']).where('workspace_id', '=', workspaceId)
        .where('email', '=', 'p5000@example.com').execute();
      const again = await importCounted(db, workspaceId, file(5_000, 2_000, 'Renamed'), true);
      assert.deepEqual([again.result.created, again.result.updated], [0, 2_000]);
      const [after] = await db.selectFrom('leads').select(['name', 'updated_at']).where('workspace_id', '=', workspaceId)
        .where('email', '=', 'p5000@example.com').execute();
      assert.equal(after!.name, 'Renamed 5000');
      assert.equal(after!.updated_at.getTime(), before!.updated_at.getTime(), 'a lead left as it was keeps its updated_at');
    });
  });
}

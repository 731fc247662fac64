// A dedupe import cannot freeze the server (issue 38): a real `leadrun serve`, on each backend, imports 50,000 leads,
// then the same e-mails again with `dedupe=email` (every lead renamed), while /healthz is probed every 50 ms. Before,
// a long-used embedded installation took 26 minutes over such an import, its event loop held for seconds at a time.
// How many rows the database reads for a dedupe import, whatever the workspace, is counted exactly in
// test/domain/lead-import-growth.test.ts; this is the whole server, its event loop and its answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, createMigratedPostgresDatabase } from '../helpers.ts';
import { freePort, leadrunJson, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess } from '../cli/support.ts';
import { importWhileProbing } from './probing.ts';

const ROWS = 50_000;

/** A CSV file of leads `first`…`first + count - 1`, named `name`. */
function csv(count: number, name: string): string {
  const rows = Array.from({ length: count }, (_, i) => `${name} ${i},person${i}@example${i % 97}.com,Company ${i % 500},https://c${i % 500}.example.com`);
  return `name,email,company,website\n${rows.join('\n')}\n`;
}

for (const kind of BACKENDS) {
  describe(`a real serve importing 50,000 leads, then again with dedupe=email (${kind})`, () => {
    let server: LeadrunProcess;
    let cleanUp: () => Promise<void>;
    let baseUrl: string;
    let env: Record<string, string>;

    before(async () => {
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const common = { PORT: String(port), PUBLIC_URL: baseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000' };
      if (kind === 'postgres') {
        const database = await createMigratedPostgresDatabase();
        env = { ...common, DATABASE_URL: database.url };
        cleanUp = database.drop;
      } else {
        const dataDir = await tempDir('leadrun-import-dedupe-', { migrated: true });
        env = { ...common, DATA_DIR: dataDir.path };
        cleanUp = dataDir.remove;
      }
      server = spawnLeadrun(['serve', '--no-worker'], env);
      await waitForReady(server, `${baseUrl}/readyz`);
    });

    after(async () => {
      await server?.kill();
      await cleanUp?.();
    });

    /** Imports `body` while probing /healthz; it must be taken. */
    async function importProbed(key: string, body: string, query: string) {
      const run = await importWhileProbing(baseUrl, key, body, query);
      assert.equal(run.status, 200, run.text.slice(0, 300));
      return { ...run, json: JSON.parse(run.text) };
    }

    it('takes about as long as the first import, its event loop answering between batches', async (t) => {
      const workspace = await leadrunJson(['workspace', 'create', '--name', 'Import dedupe', '--plan', 'pro', '--json'], env);
      const { key } = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'import', '--scopes', 'leads:read,leads:write', '--json'], env);
      // As an installation is used: its first imports, with and without dedupe, are small; the statements they
      // prepare, and the statistics of the tables, are those of a small workspace.
      for (const query of ['', '?dedupe=email']) {
        const first = await importProbed(key, csv(300, 'Early'), query);
        assert.equal(first.json.rows, 300);
      }

      const plain = await importProbed(key, csv(ROWS, 'Person'), '');
      assert.deepEqual([plain.json.created, plain.json.updated], [ROWS, 0]);
      const dedupe = await importProbed(key, csv(ROWS, 'Renamed'), '?dedupe=email');
      // Every e-mail is a lead's already (the first 300 twice: the oldest is updated).
      assert.deepEqual([dedupe.json.created, dedupe.json.updated], [0, ROWS]);
      server.assertAlive();
      for (const [name, run] of [['plain', plain], ['dedupe', dedupe]] as const) {
        t.diagnostic(`${kind}, ${name}: ${Math.round(run.ms)} ms; slowest of ${run.probes} /healthz probes ${Math.round(run.slowestProbe)} ms; `
          + `event loop held up at most ${Math.round(run.loopMax)} ms`);
      }

      // The event loop is held up for one batch's statement at a time (tens of milliseconds on PGlite, whose
      // statements run on it; nothing on PostgreSQL), never for the import. The bounds leave room for a loaded machine.
      for (const run of [plain, dedupe]) {
        assert.ok(run.loopMax < Math.max(500, run.ms / 10), `the event loop was held up for ${Math.round(run.loopMax)} ms of ${Math.round(run.ms)}`);
      }
      // The same rows, found and updated rather than inserted: of the same order of time, where it took 40 times as
      // long (and ever longer as the workspace grew). Both imports ran in the same process on the same machine.
      assert.ok(dedupe.ms < 4 * plain.ms, `the dedupe import took ${Math.round(dedupe.ms)} ms, the first ${Math.round(plain.ms)} ms`);
    });
  });
}

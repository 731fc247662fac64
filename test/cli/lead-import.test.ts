// `leadrun leads import FILE --workspace ID [--dedupe email] [--dry-run] [--map FIELD:COLUMN] [--json]` (DESIGN §8):
// the real program against PostgreSQL, and against the embedded database with and without a running server.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createMigratedPostgresDatabase } from '../helpers.ts';
import { assertCleanFailure, freePort, leadrunJson, runLeadrun, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess } from './support.ts';

const MISSING = '00000000-0000-4000-8000-000000000000';

/** A spreadsheet's export: semicolons, a byte order mark, CRLF, a quoted cell over two lines, a broken row. */
const SPREADSHEET = [
  '\uFEFFFull Name;E-mail;Company;Notes',
  'Ada Lovelace;ADA@analytical.example;"Analytical; Engines";first',
  '"Grace\r\nHopper";grace@navy.example;Navy;',
  'Broken;not-an-email;;',
].join('\r\n');

describe('leadrun leads import on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  let env: Record<string, string>;
  let files: Awaited<ReturnType<typeof tempDir>>;
  let workspaceId: string;

  const file = (name: string, content: string | Buffer): string => {
    const where = path.join(files.path, name);
    writeFileSync(where, content);
    return where;
  };
  const leads = async () => (await client.query('SELECT name, email, company_name FROM leads WHERE workspace_id = $1 ORDER BY name', [workspaceId])).rows;

  before(async () => {
    database = await createMigratedPostgresDatabase();
    env = { DATABASE_URL: database.url };
    files = await tempDir('leadrun-import-');
    workspaceId = (await leadrunJson(['workspace', 'create', '--name', 'Importers', '--json'], env)).id;
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await database?.drop();
    await files?.remove();
  });

  it('--json prints the same answer as the API, and the rows are written with one audit entry of counts', async () => {
    const result = await leadrunJson(['leads', 'import', file('leads.csv', SPREADSHEET), '--workspace', workspaceId, '--json'], env);
    assert.deepEqual(result, {
      created: 2, updated: 0, skipped: 1,
      errors: [{ row: 4, field: 'email', message: 'must be an e-mail address: no @' }], errorCount: 1, warnings: [],
      rows: 3, dryRun: false,
      columns: [{ header: 'Full Name', field: 'name' }, { header: 'E-mail', field: 'email' }, { header: 'Company', field: 'companyName' }, { header: 'Notes', field: null }],
    });
    assert.deepEqual(await leads(), [
      { name: 'Ada Lovelace', email: 'ADA@analytical.example', company_name: 'Analytical; Engines' },
      { name: 'Grace\r\nHopper', email: 'grace@navy.example', company_name: 'Navy' },
    ]);
    const audit = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--limit', '1', '--json'], env);
    assert.equal(audit[0].action, 'lead.imported');
    assert.equal(audit[0].source, 'cli');
    assert.equal(audit[0].outcome, 'success');
    assert.deepEqual(audit[0].details, { format: 'csv', rows: 3, created: 2, updated: 0, skipped: 1, dedupe: null, dryRun: false });
    assert.ok(!JSON.stringify(audit[0]).includes('Lovelace'), 'no lead data in the audit entry');
  });

  it('without --json prints a short summary with the rows that were skipped', async () => {
    const result = await runLeadrun(['leads', 'import', file('again.csv', SPREADSHEET), '--workspace', workspaceId, '--dedupe', 'email', '--dry-run'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, [
      'Dry run (nothing written): would create 0, update 2, skipped 1 of 3 rows.',
      'Ignored columns: Notes',
      '  row 4: email must be an e-mail address: no @',
      '',
    ].join('\n'));
    assert.equal((await leads()).length, 2, 'a dry run writes nothing');
  });

  it('--dedupe email updates the leads with the same e-mail; a .json file is read as {"leads": […]}', async () => {
    const json = file('leads.json', JSON.stringify({ leads: [{ name: 'Ada King', email: 'ada@ANALYTICAL.example' }, { name: 'Linus', email: 'linus@x.example' }] }));
    const result = await leadrunJson(['leads', 'import', json, '--workspace', workspaceId, '--dedupe', 'email', '--json'], env);
    assert.deepEqual([result.created, result.updated, result.skipped, result.columns], [1, 1, 0, null]);
    assert.deepEqual((await leads()).map((l) => [l.name, l.company_name]), [['Ada King', 'Analytical; Engines'], ['Grace\r\nHopper', 'Navy'], ['Linus', null]]);
  });

  it('--status-map reads another CRM\'s status as a lead status; the others get the default and a warning', async () => {
    const csv = file('statuses.csv', 'Name,Lead Status\nCold One,Cold\nFuture One,Contact in Future\n');
    const result = await leadrunJson(
      ['leads', 'import', csv, '--workspace', workspaceId, '--status-map', 'Cold:CONTACTED', '--json'], env);
    assert.deepEqual(result.warnings.map((w: { value: string; rows: number }) => [w.value, w.rows]), [['Contact in Future', 1]]);
    const { rows } = await client.query(
      "SELECT name, status FROM leads WHERE workspace_id = $1 AND name LIKE '% One' ORDER BY name", [workspaceId]);
    assert.deepEqual(rows.map((l) => [l.name, l.status]), [['Cold One', 'CONTACTED'], ['Future One', 'DISCOVERY']]);
  });

  it('--map reads a field from the column of your choice', async () => {
    const csv = file('mapped.csv', 'Contact,Work E-mail\nMapped Person,mapped@x.example\n');
    const result = await leadrunJson(['leads', 'import', csv, '--workspace', workspaceId, '--map', 'name:Contact', '--map', 'email:Work E-mail', '--json'], env);
    assert.equal(result.created, 1);
    assert.ok((await leads()).some((l) => l.name === 'Mapped Person' && l.email === 'mapped@x.example'));
  });

  describe('refuses with one readable line and no stack trace', { concurrency: 2 }, () => {
    it('a file that is not there, a directory, and one over 10 MiB', async () => {
      assertCleanFailure(await runLeadrun(['leads', 'import', path.join(files.path, 'nope.csv'), '--workspace', workspaceId], env), /cannot read .*nope\.csv: there is no such file/);
      assertCleanFailure(await runLeadrun(['leads', 'import', files.path, '--workspace', workspaceId], env), /cannot read .*: it is a directory/);
      const big = file('big.csv', Buffer.alloc(10 * 1024 * 1024 + 1, 'x'));
      assertCleanFailure(await runLeadrun(['leads', 'import', big, '--workspace', workspaceId], env), /big\.csv is larger than 10 MiB/);
    });

    it('a file with no column of names, one not in UTF-8, an unknown workspace, and a mapping for a JSON file', async () => {
      assertCleanFailure(await runLeadrun(['leads', 'import', file('nameless.csv', 'email\na@x.example\n'), '--workspace', workspaceId], env), /No column of the file holds the leads' names/);
      assertCleanFailure(await runLeadrun(['leads', 'import', file('latin1.csv', Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0xe9])), '--workspace', workspaceId], env), /not UTF-8 text \(line 2/);
      assertCleanFailure(await runLeadrun(['leads', 'import', file('ok.csv', 'name\nAda\n'), '--workspace', MISSING], env), /There is no workspace/);
      assertCleanFailure(await runLeadrun(['leads', 'import', file('x.json', '{"leads":[]}'), '--workspace', workspaceId, '--map', 'name:Contact'], env), /map applies to CSV files only/);
    });

    it('usage mistakes: no FILE, no --workspace, a --dedupe other than email: one line, exit 1', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['leads', 'import', '--workspace', workspaceId], /FILE is required/],
        [['leads', 'import', 'x.csv'], /--workspace is required/],
        [['leads', 'import', 'x.csv', '--workspace', workspaceId, '--dedupe', 'name'], /--dedupe takes one value: email/],
      ];
      for (const [args, pattern] of cases) {
        const result = await runLeadrun(args, env);
        assert.equal(result.code, 1, args.join(' '));
        assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
        assert.match(result.stderr, pattern);
      }
    });
  });

  it('leads import --help prints the command and its options', async () => {
    const result = await runLeadrun(['leads', 'import', '--help'], {});
    assert.equal(result.code, 0, result.stderr);
    for (const pattern of [/^Usage: leadrun leads import FILE --workspace ID/, /^  --dedupe email  /m, /^  --dry-run  /m, /^  --map FIELD:COLUMN  /m, /^  --json  /m]) {
      assert.match(result.stdout, pattern);
    }
  });
});

describe('leadrun leads import on the embedded database', () => {
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  let server: LeadrunProcess | null = null;

  before(async () => {
    dataDir = await tempDir('leadrun-import-embedded-', { migrated: true });
    env = { DATA_DIR: dataDir.path };
  });
  after(async () => {
    await server?.kill();
    await dataDir?.remove();
  });

  it('imports with no server running, and through the running server that holds DATA_DIR', async () => {
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Embedded', '--json'], env);
    const csv = path.join(dataDir.path, 'leads.csv');
    writeFileSync(csv, `name,email\n${Array.from({ length: 2_000 }, (_, i) => `Person ${i},p${i}@x.example`).join('\n')}\n`);
    const direct = await leadrunJson(['leads', 'import', csv, '--workspace', workspace.id, '--dedupe', 'email', '--json'], env);
    assert.deepEqual([direct.created, direct.updated, direct.skipped], [2_000, 0, 0]);

    const port = await freePort();
    server = spawnLeadrun(['serve', '--no-worker'], { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    await waitForReady(server, `http://127.0.0.1:${port}/readyz`);
    // The same file again, sent to the server over its control socket and read in its CPU pool: every row finds its lead.
    const through = await leadrunJson(['leads', 'import', csv, '--workspace', workspace.id, '--dedupe', 'email', '--json'], env);
    assert.deepEqual([through.created, through.updated, through.skipped], [0, 2_000, 0]);
    const { key } = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'reader', '--scopes', 'leads:read', '--json'], env);
    const page = await fetch(`http://127.0.0.1:${port}/api/v1/leads?limit=100`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(page.status, 200);
    assert.equal(((await page.json()) as { data: unknown[] }).data.length, 100);
    const audit = await leadrunJson(['audit', 'list', '--workspace', workspace.id, '--json'], env);
    assert.deepEqual(audit.filter((e: any) => e.action === 'lead.imported').map((e: any) => [e.source, e.details.created, e.details.updated]), [['cli', 0, 2_000], ['cli', 2_000, 0]]);
  });
});

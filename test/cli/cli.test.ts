// The `leadrun` program (DESIGN §1, §2): admin commands against PostgreSQL and against the embedded database,
// with and without a running server holding it, and how `serve` takes, shares and gives back its DATA_DIR.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { controlSocketPath } from '../../src/admin/control.ts';
import { createPostgresDatabase } from '../helpers.ts';
import {
  assertCleanFailure, cleanEnv, freePort, LEADRUN_BIN, PROJECT_ROOT, leadrunJson, runLeadrun, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess,
} from './support.ts';

const KEY_PATTERN = /^sk_[0-9A-Za-z]{38}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('leadrun on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  let env: Record<string, string>;
  let workspaceId: string;
  let created: { id: string; key: string; prefix: string; scopes: string[] };

  before(async () => {
    database = await createPostgresDatabase();
    env = { DATABASE_URL: database.url };
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  after(async () => {
    await client?.end();
    await database?.drop();
  });

  it('migrate applies the migrations once, then finds the database up to date', async () => {
    const first = await runLeadrun(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^Applied \S+/);
    const tables = await client.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name IN ('runs', 'api_keys', 'audit_log')`);
    assert.equal(tables.rows[0].n, 3);
    assert.deepEqual(await leadrunJson(['migrate', '--json'], env), { applied: [] });
  });

  it('workspace create --json prints exactly id, name, plan and adminUserId', async () => {
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Acme Sales', '--plan', 'pro', '--admin-email', 'Grace@Example.com', '--json'], env);
    assert.deepEqual(Object.keys(workspace).sort(), ['adminUserId', 'id', 'name', 'plan']);
    assert.equal(workspace.name, 'Acme Sales');
    assert.equal(workspace.plan, 'pro');
    workspaceId = workspace.id;
    const row = await client.query('SELECT w.plan, u.email, u.role FROM workspaces w JOIN users u ON u.id = w.admin_user_id WHERE w.id = $1', [workspace.id]);
    assert.deepEqual(row.rows, [{ plan: 'PRO', email: 'grace@example.com', role: 'ADMIN' }]);
    assert.equal((await client.query('SELECT admin_user_id FROM workspaces WHERE id = $1', [workspace.id])).rows[0].admin_user_id, workspace.adminUserId);

    const free = await leadrunJson(['workspace', 'create', '--name', 'Default plan', '--json'], env);
    assert.equal(free.plan, 'free');
  });

  it('workspace create without --json prints a readable line', async () => {
    const result = await runLeadrun(['workspace', 'create', '--name', 'Readable'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Created workspace [0-9a-f-]{36} \(Readable, plan free\)/);
  });

  it('key create --json prints the key once; only its SHA-256 digest is stored', async () => {
    created = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'CI', '--scopes', 'runs:write,leads:read', '--json'], env);
    for (const field of ['id', 'key', 'prefix', 'scopes']) assert.ok(field in created, `prints ${field}`);
    assert.match(created.key, KEY_PATTERN);
    assert.ok(created.key.startsWith(created.prefix));
    assert.ok(created.prefix.length < created.key.length / 2, 'the prefix is a short part of the key');
    assert.deepEqual([...created.scopes].sort(), ['leads:read', 'runs:write']);

    const row = (await client.query('SELECT * FROM api_keys WHERE id = $1', [created.id])).rows[0];
    assert.ok(row);
    assert.equal(row.workspace_id, workspaceId);
    assert.equal(row.digest, createHash('sha256').update(created.key).digest('hex'));
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(created.key), 'the plaintext key is not stored');
    assert.ok(!stored.includes(created.key.slice(10)), 'no secret part of the key is stored');
    assert.equal(row.revoked_at, null);
  });

  it('key create without --json shows the key with a warning that it is shown once', async () => {
    const result = await runLeadrun(['key', 'create', '--workspace', workspaceId, '--name', 'human', '--scopes', 'leads:read'], env);
    assert.equal(result.code, 0, result.stderr);
    const key = result.stdout.match(/sk_[0-9A-Za-z]+/)?.[0];
    assert.ok(key && KEY_PATTERN.test(key), result.stdout);
    assert.match(result.stdout, /only time/);
  });

  it('key revoke revokes the key, and revoking it again keeps the first time', async () => {
    const result = await runLeadrun(['key', 'revoke', created.id], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Revoked key ${created.id}`));
    const first = (await client.query('SELECT revoked_at FROM api_keys WHERE id = $1', [created.id])).rows[0].revoked_at;
    assert.ok(first instanceof Date);
    const again = await leadrunJson(['key', 'revoke', created.id, '--json'], env);
    assert.equal(again.revokedAt, first.toISOString());
  });

  it('audit list --json shows the CLI entries, newest first, limited by --limit', async () => {
    const entries = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--json'], env);
    assert.ok(Array.isArray(entries));
    const mine = entries.filter((e: any) => e.target?.id === created.id);
    assert.deepEqual(mine.map((e: any) => e.action), ['key.revoked', 'key.revoked', 'key.created']);
    for (const entry of mine) {
      assert.equal(entry.source, 'cli');
      assert.equal(entry.outcome, 'success');
      assert.equal(entry.workspaceId, workspaceId);
      assert.equal(entry.target.type, 'key');
    }
    const times = entries.map((e: any) => Date.parse(e.occurredAt));
    assert.deepEqual(times, [...times].sort((a: number, b: number) => b - a), 'newest first');

    const one = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--limit', '1', '--json'], env);
    assert.equal(one.length, 1);
    assert.deepEqual(one[0], entries[0]);
  });

  it('audit list gives 50 entries by default and at most --limit 1000', async () => {
    await client.query(`
      INSERT INTO audit_log (id, workspace_id, source, action, outcome, occurred_at)
      SELECT gen_random_uuid(), $1, 'system', 'test.filler', 'success', now() - make_interval(secs => g)
      FROM generate_series(1, 1100) AS g`, [workspaceId]);
    assert.equal((await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--json'], env)).length, 50);
    assert.equal((await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--limit', '1000', '--json'], env)).length, 1000);
  });

  it('audit list without --json prints one readable line per entry', async () => {
    const result = await runLeadrun(['audit', 'list', '--workspace', workspaceId, '--limit', '3'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim().split('\n').length, 3);
  });

  // Each of these changes nothing, so they run side by side.
  describe('refuses bad input with one readable line and no stack trace', { concurrency: 2 }, () => {
    it('an unknown scope', async () => {
      const result = await runLeadrun(['key', 'create', '--workspace', workspaceId, '--name', 'x', '--scopes', 'leads:read,admin:all', '--json'], env);
      const line = assertCleanFailure(result, /admin:all/);
      assert.equal(result.stderr, `${line}\n`, 'exactly one line');
      const keys = await client.query(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'x'`);
      assert.equal(keys.rows[0].n, 0, 'no key was created');
    });

    it('an unknown or malformed workspace', async () => {
      for (const id of [MISSING, 'not-a-uuid']) {
        for (const args of [
          ['key', 'create', '--workspace', id, '--name', 'x', '--scopes', 'leads:read'],
          ['audit', 'list', '--workspace', id, '--json'],
        ]) {
          const result = await runLeadrun(args, env);
          const line = assertCleanFailure(result, /workspace/i);
          assert.equal(result.stderr, `${line}\n`, 'exactly one line');
        }
      }
    });

    it('an unknown key to revoke', async () => {
      for (const id of [MISSING, 'nope']) {
        const result = await runLeadrun(['key', 'revoke', id], env);
        const line = assertCleanFailure(result, /no key/i);
        assert.equal(result.stderr, `${line}\n`);
      }
    });

    it('an unknown plan and a bad admin e-mail', async () => {
      for (const [args, pattern] of [
        [['workspace', 'create', '--name', 'x', '--plan', 'gold'], /plan/i],
        [['workspace', 'create', '--name', 'x', '--admin-email', 'not-an-address'], /e-mail/i],
      ] as const) {
        const result = await runLeadrun([...args], env);
        const line = assertCleanFailure(result, pattern);
        assert.equal(result.stderr, `${line}\n`);
      }
    });

    // A usage mistake is one line naming it; the usage text may follow it, and nothing else.
    const usageMistakes: Array<[string[], RegExp]> = [
      [['key', 'create', '--name', 'x', '--scopes', 'leads:read'], /--workspace is required/],
      [['key', 'create', '--workspace', MISSING, '--scopes', 'leads:read'], /--name is required/],
      [['key', 'create', '--workspace', MISSING, '--name', 'x'], /--scopes is required/],
      [['workspace', 'create', '--plan', 'pro'], /--name is required/],
      [['key', 'revoke'], /KEY_ID is required/],
      [['audit', 'list'], /--workspace is required/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '1001'], /--limit must be a whole number from 1 to 1000/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '2.5'], /--limit/],
      [['audit', 'list', '--workspace', MISSING, '--limit', 'ten'], /--limit/],
      [['workspace', 'create', '--name', 'x', '--bogus'], /bogus/],
      [['workspace', 'delete'], /unknown command/],
    ];
    for (const [args, pattern] of usageMistakes) {
      it(`leadrun ${args.join(' ')}`, async () => {
        const result = await runLeadrun(args, env);
        const line = assertCleanFailure(result, pattern);
        const rest = result.stderr.slice(line.length + 1);
        if (rest.trim() !== '') assert.match(rest, /^\n(.*\n)*Usage:\n(  leadrun .*\n)+/, `only usage text follows: ${rest}`);
      });
    }

    it('a database that does not answer', async () => {
      const result = await runLeadrun(['workspace', 'create', '--name', 'x', '--json'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
      const line = assertCleanFailure(result, /127\.0\.0\.1:1|database/i);
      assert.equal(result.stderr, `${line}\n`, `exactly one line: ${result.stderr}`);
    });
  });
});

describe('leadrun on the embedded database', () => {
  let dataDir: { path: string; remove(): Promise<void> };
  const servers: LeadrunProcess[] = [];
  let port: number;
  let env: Record<string, string>;
  let workspaceId: string;

  async function serve(extra: Record<string, string> = {}): Promise<LeadrunProcess> {
    const server = spawnLeadrun(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extra });
    servers.push(server);
    return server;
  }

  async function get(path: string, key: string): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    return res.status;
  }

  before(async () => {
    dataDir = await tempDir();
    port = await freePort();
    env = { DATA_DIR: dataDir.path };
  });
  after(async () => {
    for (const server of servers) await server.kill('SIGKILL');
    await dataDir?.remove();
  });

  it('migrate on a fresh DATA_DIR with no server applies the migrations directly', async () => {
    const result = await runLeadrun(['migrate'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Applied \S+/);
    assert.ok(!existsSync(controlSocketPath(dataDir.path)), 'the command let go of DATA_DIR');
  });

  let rival: LeadrunProcess;
  let rivalStarted: number;

  it('while serve runs, admin commands go through it and the API sees their effect at once', async () => {
    const server = await serve();
    await waitForReady(server, `http://127.0.0.1:${port}/readyz`);
    assert.ok(existsSync(controlSocketPath(dataDir.path)), 'serve listens on the control socket');

    // A second serve on the same DATA_DIR is started now, while this test runs, and judged in the next one.
    rivalStarted = Date.now();
    rival = spawnLeadrun(['serve'], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    servers.push(rival);

    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Embedded', '--plan', 'free', '--admin-email', 'emb@example.com', '--json'], env);
    assert.deepEqual(Object.keys(workspace).sort(), ['adminUserId', 'id', 'name', 'plan']);
    workspaceId = workspace.id;
    const created = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'live', '--scopes', 'leads:read,leads:write', '--json'], env);
    assert.match(created.key, KEY_PATTERN);

    assert.equal(await get('/api/v1/leads', created.key), 200, 'the new key works at once');
    const revoked = await runLeadrun(['key', 'revoke', created.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await get('/api/v1/leads', created.key), 401, 'the revoked key is refused at once');

    const entries = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--json'], env);
    assert.deepEqual(entries.filter((e: any) => e.source === 'cli').map((e: any) => e.action), ['key.revoked', 'key.created']);

    // An error raised in the server comes back as one line, as it would without a server.
    const bad = await runLeadrun(['key', 'create', '--workspace', MISSING, '--name', 'x', '--scopes', 'leads:read'], env);
    const line = assertCleanFailure(bad, /workspace/i);
    assert.equal(bad.stderr, `${line}\n`);
    server.assertAlive();
  });

  it('a second serve on the same DATA_DIR refuses at once with one line naming the running one', { timeout: 60_000 }, async () => {
    await rival.exited;
    assert.equal(rival.code, 1);
    assert.equal(rival.stdout(), '');
    const lines = rival.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 1, rival.stderr());
    assert.match(lines[0]!, /^leadrun: DATA_DIR .* is in use by another leadrun process/);
    assert.match(lines[0]!, new RegExp(`\\(leadrun serve, pid ${servers[0]!.pid}\\)`));
    // Today's bound is the start of Node.js and a look at the socket, far from the 15 s it waited before.
    assert.ok(Date.now() - rivalStarted < 10_000, `refused after ${Date.now() - rivalStarted} ms`);
    servers[0]!.assertAlive();
  });

  it('SIGTERM stops serve promptly with exit 0 and frees DATA_DIR', async () => {
    const server = servers[0]!;
    const started = Date.now();
    await server.kill('SIGTERM');
    assert.equal(server.code, 0, server.output());
    assert.ok(Date.now() - started < 10_000, `stopped in ${Date.now() - started} ms`);
  });

  it('with no server running, the commands work on the data directory directly', async () => {
    const created = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'offline', '--scopes', 'runs:read', '--json'], env);
    assert.match(created.key, KEY_PATTERN);
    const entries = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--limit', '2', '--json'], env);
    assert.deepEqual(entries.map((e: any) => e.action), ['key.created', 'key.revoked'], 'the entries written through the server are kept');
    assert.equal(entries[0].target.id, created.id);
  });

  it('a socket file left by a killed server does not block the next start', async () => {
    const killed = await serve();
    await waitForReady(killed, `http://127.0.0.1:${port}/readyz`);
    await killed.kill('SIGKILL');
    assert.ok(existsSync(controlSocketPath(dataDir.path)), 'the killed server left its socket file');

    // An admin command finds nobody behind the stale socket and works directly.
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'After the crash', '--json'], env);
    assert.equal(workspace.name, 'After the crash');

    await killed.exited;
    const kept = spawnLeadrun(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    servers.push(kept);
    await waitForReady(kept, `http://127.0.0.1:${port}/readyz`);
    const created = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'after', '--scopes', 'leads:read', '--json'], env);
    assert.equal(await get('/api/v1/leads', created.key), 200);
    await kept.kill('SIGTERM');
    assert.equal(kept.code, 0, kept.output());
  });
});

describe('leadrun tells people what it is and how to use it', { concurrency: 2 }, () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
    const result = await runLeadrun(['--version'], {});
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `leadrun ${version}\n`);
    assert.equal(result.stderr, '');
  });

  it('--help and help print the usage and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await runLeadrun(args, {});
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^leadrun: .*\n\nUsage:\n(  leadrun .*\n)+/);
      assert.equal(result.stderr, '');
    }
  });

  const commands: Array<[string[], RegExp[]]> = [
    [['serve'], [/^Usage: leadrun serve/, /^  --no-worker  /m]],
    [['worker'], [/^Usage: leadrun worker/]],
    [['migrate'], [/^Usage: leadrun migrate/, /^  --json  /m]],
    [['workspace'], [/^Usage: leadrun workspace create/, /^  --name N  /m, /^  --plan free\|pro  /m, /^  --admin-email E  /m]],
    [['workspace', 'create'], [/^Usage: leadrun workspace create/, /^  --admin-email E  /m]],
    [['key'], [/^Usage: leadrun key create/, /^Usage: leadrun key revoke/m, /^  --scopes a,b  /m]],
    [['key', 'revoke'], [/^Usage: leadrun key revoke KEY_ID/]],
    [['audit'], [/^Usage: leadrun audit list/, /^  --limit N  /m, /^  --workspace ID  /m]],
    [['user'], [/^Usage: leadrun user password/, /^  --email E  /m]],
  ];
  for (const [words, patterns] of commands) {
    it(`leadrun ${words.join(' ')} --help prints that command's usage, one line per option`, async () => {
      for (const args of [[...words, '--help'], ['help', ...words]]) {
        const result = await runLeadrun(args, {});
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stderr, '');
        for (const pattern of patterns) assert.match(result.stdout, pattern);
        assert.doesNotMatch(result.stdout, /Unknown option|ERR_PARSE_ARGS/);
      }
    });
  }

  it('an unknown command with --help is a usage mistake', async () => {
    const result = await runLeadrun(['frobnicate', '--help'], {});
    assert.equal(result.code, 2);
    assertCleanFailure(result, /unknown command "frobnicate/);
  });
});

describe('a DATA_DIR that cannot be used fails at once with one line', { concurrency: 2 }, () => {
  let scratch: { path: string; remove(): Promise<void> };
  before(async () => {
    scratch = await tempDir();
    writeFileSync(path.join(scratch.path, 'a-file'), '');
  });
  after(() => scratch?.remove());

  for (const args of [['serve'], ['workspace', 'create', '--name', 'x']]) {
    it(`leadrun ${args.join(' ')}`, async () => {
      for (const dataDir of ['/proc/nope', '/proc/nope/deeper', path.join(scratch.path, 'a-file'), path.join(scratch.path, 'a-file', 'below')]) {
        const result = await runLeadrun(args, { DATA_DIR: dataDir, PORT: String(await freePort()) }, { timeoutMs: 20_000 });
        assert.equal(result.code, 1, `${dataDir}: ${result.stderr}`);
        const line = assertCleanFailure(result, new RegExp(`^leadrun: DATA_DIR ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be used: \\S`));
        assert.equal(result.stderr, `${line}\n`, 'exactly one line');
      }
    });
  }
});

describe('serve says when it is ready', () => {
  let dataDir: { path: string; remove(): Promise<void> };
  before(async () => { dataDir = await tempDir(); });
  after(() => dataDir?.remove());

  // script(1) runs serve on a pseudo-terminal, as when a person starts it.
  it('on a terminal: one human line with the PUBLIC_URL, and the hint to set up an empty installation', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const child = spawn('script', ['-qec', `'${LEADRUN_BIN}' serve`, '/dev/null'], {
      env: cleanEnv({ DATA_DIR: dataDir.path, PORT: String(port), HOST: '127.0.0.1' }), cwd: PROJECT_ROOT, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const line = output.split(/\r?\n/).find((l) => l.startsWith('leadrun is ready'));
        if (line) resolve(line);
      });
      void exited.then(() => reject(new Error(`serve exited:\n${output}`)));
    });
    try {
      assert.equal(await ready, `leadrun is ready at http://localhost:${port} — open it to set up`);
    } finally {
      const holder = readFileSync(path.join(dataDir.path, 'leadrun.holder'), 'utf8');
      process.kill(Number(holder.split(' ')[0]), 'SIGTERM');
      await exited;
    }
  });

  it('not on a terminal: JSON log lines only, as before', async () => {
    const port = await freePort();
    const server = spawnLeadrun(['serve'], { DATA_DIR: dataDir.path, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    try {
      await waitForReady(server, `http://127.0.0.1:${port}/readyz`);
      if (!server.stdout().includes('leadrun is serving')) {
        await new Promise<void>((resolve) => server.child.stdout!.on('data', () => { if (server.stdout().includes('leadrun is serving')) resolve(); }));
      }
      const messages = server.stdout().trimEnd().split('\n').map((line) => JSON.parse(line).msg);
      assert.ok(messages.includes('leadrun is serving'), server.stdout());
      assert.doesNotMatch(server.output(), /leadrun is ready/);
    } finally {
      await server.kill('SIGTERM');
    }
    assert.equal(server.code, 0, server.output());
  });
});

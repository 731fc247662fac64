// The `leadrun` program (DESIGN §1, §2): admin commands against PostgreSQL and against the embedded database,
// with and without a running server holding it, and how `serve` takes, shares and gives back its DATA_DIR.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { controlSocketPath } from '../../src/admin/control.ts';
import { systemClock } from '../../src/clock.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { verifyPassword } from '../../src/domain/members/passwords.ts';
import { createSession, findSession } from '../../src/domain/members/sessions.ts';
import { createMigratedPostgresDatabase, createPostgresDatabase } from '../helpers.ts';
import {
  assertCleanFailure, cleanEnv, freePort, LEADRUN_BIN, PROJECT_ROOT, leadrunJson, runCommand, runLeadrun, spawnLeadrun, tempDir, waitForLine, waitForReady, workingDir, type LeadrunProcess,
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

  it('key create --replace revokes the earlier keys of its name in its workspace, and only those', async () => {
    const other = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'nightly', '--scopes', 'leads:read', '--json'], env);
    const keep = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'nightly sync', '--scopes', 'leads:read', '--json'], env);
    assert.deepEqual(other.revoked, []);
    const replaced = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'nightly', '--scopes', 'leads:read', '--replace', '--json'], env);
    assert.deepEqual(replaced.revoked, [other.id]);
    const rows = (await client.query('SELECT id, revoked_at FROM api_keys WHERE id = ANY($1)', [[other.id, keep.id, replaced.id]])).rows;
    const revoked = new Map(rows.map((r: any) => [r.id, r.revoked_at !== null]));
    assert.deepEqual([revoked.get(other.id), revoked.get(keep.id), revoked.get(replaced.id)], [true, false, false]);
    const human = await runLeadrun(['key', 'create', '--workspace', workspaceId, '--name', 'nightly', '--scopes', 'leads:read', '--replace'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^Revoked the earlier key of this name: ${replaced.id}\\.$`, 'm'));
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

  it('workspace list shows every workspace, oldest first, with its admin e-mail', async () => {
    const listed = await leadrunJson(['workspace', 'list', '--json'], env);
    const rows = (await client.query(`SELECT w.id, w.name, lower(w.plan) AS plan, w.admin_user_id, u.email, w.created_at
      FROM workspaces w LEFT JOIN users u ON u.id = w.admin_user_id ORDER BY w.created_at, w.id`)).rows;
    assert.deepEqual(listed, rows.map((r) => ({
      id: r.id, name: r.name, plan: r.plan, adminUserId: r.admin_user_id, adminEmail: r.email, createdAt: r.created_at.toISOString(),
    })));
    assert.equal(listed.find((w: any) => w.id === workspaceId)?.adminEmail, 'grace@example.com');
    assert.ok(listed.some((w: any) => w.adminEmail === null), 'a workspace made without --admin-email lists none');

    const human = await runLeadrun(['workspace', 'list'], env);
    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID +NAME +PLAN +ADMIN +CREATED$/);
    assert.equal(lines.length, listed.length + 1);
    assert.match(lines.find((line) => line.startsWith(workspaceId))!, /^\S+ +Acme Sales +pro +grace@example\.com +\d{4}-\d\d-\d\dT/);
  });

  it('--workspace takes an exact workspace name as well as an id', async () => {
    const byName = await leadrunJson(['key', 'create', '--workspace', 'Acme Sales', '--name', 'by name', '--scopes', 'leads:read', '--json'], env);
    assert.equal((await client.query('SELECT workspace_id FROM api_keys WHERE id = $1', [byName.id])).rows[0].workspace_id, workspaceId);
    const entries = await leadrunJson(['audit', 'list', '--workspace', 'Acme Sales', '--limit', '1', '--json'], env);
    assert.equal(entries[0].target.id, byName.id);
    assert.equal(entries[0].workspaceId, workspaceId);

    // Exact: another case, or a part of the name, is no name.
    for (const name of ['acme sales', 'Acme']) {
      const result = await runLeadrun(['key', 'create', '--workspace', name, '--name', 'x', '--scopes', 'leads:read'], env);
      const line = assertCleanFailure(result, new RegExp(`^leadrun: There is no workspace with the id or name "${name}" \\(leadrun workspace list shows them\\)\\.$`));
      assert.equal(result.stderr, `${line}\n`);
    }
  });

  it('a name two workspaces share is refused, and the id tells them apart', async () => {
    const first = await leadrunJson(['workspace', 'create', '--name', 'Twins', '--json'], env);
    await leadrunJson(['workspace', 'create', '--name', 'Twins', '--json'], env);
    const keysBefore = (await client.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    for (const args of [['key', 'create', '--workspace', 'Twins', '--name', 'x', '--scopes', 'leads:read'], ['audit', 'list', '--workspace', 'Twins']]) {
      const result = await runLeadrun(args, env);
      const line = assertCleanFailure(result, /^leadrun: More than one workspace is named "Twins"; give its id instead \(leadrun workspace list shows them\)\.$/);
      assert.equal(result.stderr, `${line}\n`);
    }
    assert.equal((await client.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n, keysBefore, 'no key was made');
    const byId = await leadrunJson(['key', 'create', '--workspace', first.id, '--name', 'twin', '--scopes', 'leads:read', '--json'], env);
    assert.equal((await client.query('SELECT workspace_id FROM api_keys WHERE id = $1', [byId.id])).rows[0].workspace_id, first.id);
  });

  it('workspace create with an admin e-mail that is taken says whose it is and what to do, and makes nothing', async () => {
    const count = async () => (await client.query('SELECT (SELECT count(*) FROM workspaces)::int AS w, (SELECT count(*) FROM users)::int AS u')).rows[0];
    const before = await count();
    for (const args of [['--json'], []]) {
      const result = await runLeadrun(['workspace', 'create', '--name', 'Again', '--admin-email', 'GRACE@example.com', ...args], env);
      const line = assertCleanFailure(result, new RegExp(`^leadrun: grace@example\\.com is already an admin of workspace ${workspaceId} \\("Acme Sales"\\): `
        + `use that workspace \\(leadrun key create --workspace ${workspaceId} \\.\\.\\.\\), or give another --admin-email\\.$`));
      assert.equal(result.stderr, `${line}\n`, 'one line, no JSON');
    }
    assert.deepEqual(await count(), before);
  });

  it('workspace create says how its admin gets a password: with the result, or on stderr beside --json', async () => {
    const human = await runLeadrun(['workspace', 'create', '--name', 'Hinted', '--admin-email', 'hint@example.com'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Created workspace \S+ \(Hinted, plan free\); admin user \S+\nTo sign in to the web UI, hint@example\.com needs a password: leadrun user password --email hint@example\.com\n$/);
    assert.equal(human.stderr, '');

    const json = await runLeadrun(['workspace', 'create', '--name', 'Hinted too', '--admin-email', 'hint2@example.com', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout)).sort(), ['adminUserId', 'id', 'name', 'plan'], 'stdout is the JSON alone');
    assert.equal(json.stderr, 'To sign in to the web UI, hint2@example.com needs a password: leadrun user password --email hint2@example.com\n');

    const none = await runLeadrun(['workspace', 'create', '--name', 'No admin e-mail'], env);
    assert.doesNotMatch(none.stdout + none.stderr, /password/, 'no hint without an e-mail to sign in with');
  });

  it('control characters in a name or a message never reach the terminal as such, and an error stays one line', async () => {
    // Such a name is refused now (it goes into mail headers: one line), but one made before is still listed.
    const refused = await runLeadrun(['workspace', 'create', '--name', 'Red\u001b[31m\nSecond line', '--json'], env);
    assert.equal(refused.stderr, "leadrun: A workspace's name must be one line of text, without control characters "
      + 'or encoded words (=?...?=).\n');
    const sneaky = { id: randomUUID() };
    await client.query(`INSERT INTO workspaces (id, name, plan, created_at) VALUES ($1, $2, 'FREE', now())`,
      [sneaky.id, 'Red\u001b[31m\nSecond line']);
    const human = await runLeadrun(['workspace', 'list'], env);
    const line = human.stdout.split('\n').find((l) => l.startsWith(sneaky.id))!;
    assert.match(line, /Red\uFFFD\[31m\uFFFDSecond line/);
    assert.doesNotMatch(human.stdout, /\u001b/);

    const result = await runLeadrun(['key', 'create', '--workspace', 'two\nlines', '--name', 'x', '--scopes', 'leads:read'], env);
    const error = assertCleanFailure(result, /^leadrun: There is no workspace with the id or name "two\uFFFDlines"/);
    assert.equal(result.stderr, `${error}\n`);
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

    // A usage mistake is one line that names it and points at the command's help; exit code 1, as every error.
    const usageMistakes: Array<[string[], RegExp]> = [
      [['key', 'create', '--name', 'x', '--scopes', 'leads:read'], /--workspace is required \(see leadrun key create --help\)$/],
      [['key', 'create', '--workspace', MISSING, '--scopes', 'leads:read'], /--name is required/],
      [['key', 'create', '--workspace', MISSING, '--name', 'x'], /--scopes is required/],
      [['key', 'create', '--workspace', '--name', 'x', '--scopes', 'leads:read'], /^leadrun: --workspace needs a value \(see leadrun key create --help\)$/],
      [['key', 'create', '--workspace'], /^leadrun: --workspace needs a value/],
      [['workspace', 'create', '--plan', 'pro'], /--name is required/],
      [['workspace', 'create', '--name', 'x', '--plan', 'gold'], /^leadrun: --plan must be free or pro \(got "gold"\)/],
      [['workspace', 'create', '--name', 'x', '--admin-email', 'not-an-address'], /^leadrun: --admin-email must be an e-mail address/],
      [['setup', '--name', 'x'], /^leadrun: --admin-email is required \(see leadrun setup --help\)$/],
      [['setup', '--admin-email', 'a@example.com'], /^leadrun: --name is required/],
      [['key', 'revoke'], /KEY_ID is required/],
      [['key', 'revoke', MISSING, 'extra'], /^leadrun: unexpected argument "extra" \(see leadrun key revoke --help\)$/],
      [['audit', 'list'], /--workspace is required/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '1001'], /--limit must be a whole number from 1 to 1000/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '2.5'], /--limit/],
      [['audit', 'list', '--workspace', MISSING, '--limit', 'ten'], /--limit/],
      [['audit', 'list', '--workspace', MISSING, '--limit', '1e2'], /--limit/],
      [['workspace', 'create', '--name', 'x', '--bogus'], /^leadrun: unknown option --bogus for leadrun workspace create \(see leadrun workspace create --help\)$/],
      [['serve', '--bogus'], /^leadrun: unknown option --bogus for leadrun serve \(see leadrun serve --help\)$/],
      [['serve', '-x'], /^leadrun: unknown option -x for leadrun serve/],
      // Options belong to their command: --name means nothing to serve, --scopes nothing to workspace list.
      [['serve', '--name', 'x'], /^leadrun: unknown option --name for leadrun serve/],
      [['workspace', 'list', '--scopes', 'leads:read'], /^leadrun: unknown option --scopes for leadrun workspace list/],
      [['serve', 'now'], /^leadrun: unexpected argument "now" \(see leadrun serve --help\)$/],
      [['migrate', '--json=yes'], /^leadrun: --json takes no value \(see leadrun migrate --help\)$/],
      [['workspace', 'delete'], /^leadrun: unknown command "workspace delete" \(see leadrun --help\)$/],
      [['workspace'], /^leadrun: "workspace" needs one of: create, list \(see leadrun workspace --help\)$/],
      [['frobnicate'], /^leadrun: unknown command "frobnicate" \(see leadrun --help\)$/],
      [['user', 'password', '--email', 'a@example.com', '--password', 'hunter2hunter2'], /^leadrun: --password is not taken: a password on the command line can be read by others/],
      [['user', 'password', '--email', 'a@example.com', 'hunter2hunter2'], /^leadrun: a password is never taken on the command line/],
      [['user', 'password', '--email', 'nope'], /^leadrun: --email must be an e-mail address/],
    ];
    for (const [args, pattern] of usageMistakes) {
      it(`leadrun ${args.join(' ')}`, async () => {
        const result = await runLeadrun(args, env);
        assert.equal(result.code, 1, result.stderr);
        const line = assertCleanFailure(result, pattern);
        assert.equal(result.stderr, `${line}\n`, 'exactly one line');
        assert.doesNotMatch(line, /ERR_PARSE_ARGS|To specify a positional argument/, 'no raw parser message');
      });
    }

    it('a database that does not answer', async () => {
      const result = await runLeadrun(['workspace', 'create', '--name', 'x', '--json'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
      const line = assertCleanFailure(result, /127\.0\.0\.1:1|database/i);
      assert.equal(result.stderr, `${line}\n`, `exactly one line: ${result.stderr}`);
    });
  });
});

describe('leadrun setup, and user password', () => {
  let database: { url: string; drop(): Promise<void> };
  let opened: Database;
  let env: Record<string, string>;
  let first: any;

  before(async () => {
    database = await createMigratedPostgresDatabase();
    env = { DATABASE_URL: database.url };
    opened = await openDatabase({ databaseUrl: database.url });
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  const counts = async () => ({
    workspaces: (await opened.db.selectFrom('workspaces').select('id').execute()).length,
    users: (await opened.db.selectFrom('users').select('id').execute()).length,
  });

  it('on an empty installation, setup makes its first workspace and admin, and says how to give them a password', async () => {
    assert.deepEqual(await leadrunJson(['workspace', 'list', '--json'], env), []);
    assert.equal((await runLeadrun(['workspace', 'list'], env)).stdout, '(no workspaces: leadrun setup, or the web UI, makes the first)\n');
    // Two at once: one makes the workspace, and both answer with it.
    const [a, b] = await Promise.all([
      runLeadrun(['setup', '--name', 'Acme Sales', '--admin-email', 'You@Example.com', '--json'], env),
      runLeadrun(['setup', '--name', 'Rival', '--admin-email', 'rival@example.com', '--json'], env),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const [made, found] = [JSON.parse(a.stdout), JSON.parse(b.stdout)].sort((x, y) => Number(y.created) - Number(x.created));
    assert.equal(made.created, true);
    assert.equal(found.created, false, 'only one of two setups at once makes a workspace');
    assert.equal(found.id, made.id);
    assert.deepEqual(await counts(), { workspaces: 1, users: 1 });
    first = made;
    const mine = made.name === 'Acme Sales';
    assert.deepEqual(Object.keys(made).sort(), ['adminEmail', 'adminUserId', 'created', 'createdAt', 'id', 'name', 'plan']);
    assert.equal(made.adminEmail, mine ? 'you@example.com' : 'rival@example.com');
    assert.equal(made.plan, 'free');
    const maker = mine ? a : b;
    assert.equal(maker.stderr, `To sign in to the web UI, ${made.adminEmail} needs a password: leadrun user password --email ${made.adminEmail}\n`);
    assert.equal((mine ? b : a).stderr, '', 'the setup that made nothing has nothing to say on stderr');
    const audit = await opened.db.selectFrom('audit_log').select(['action', 'source', 'target_id']).where('workspace_id', '=', made.id).execute();
    assert.deepEqual(audit, [{ action: 'workspace.created', source: 'cli', target_id: made.id }]);
  });

  it('on an installation set up already, setup changes nothing and answers the first workspace', async () => {
    await leadrunJson(['workspace', 'create', '--name', 'Later', '--admin-email', 'later@example.com', '--json'], env);
    const again = await leadrunJson(['setup', '--name', 'Something else', '--admin-email', 'other@example.com', '--plan', 'pro', '--json'], env);
    assert.deepEqual(again, { ...first, created: false });
    assert.deepEqual(await counts(), { workspaces: 2, users: 2 });

    const human = await runLeadrun(['setup', '--name', 'x', '--admin-email', 'x@example.com'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stdout, `leadrun is set up already: workspace ${first.id} (${first.name}, plan free), admin ${first.adminEmail}. Nothing was changed.\n`);
  });

  const signIn = async (email: string) => (await createSession(opened.db, (await opened.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id, systemClock, { ip: null, userAgent: null })).token;
  const hashOf = async (email: string) => (await opened.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow()).password_hash;

  it('user password reads the first line of standard input, sets it, and signs the person out everywhere', async () => {
    const email = first.adminEmail;
    const token = await signIn(email);
    assert.ok(await findSession(opened.db, token, systemClock), 'signed in before');
    const result = await runLeadrun(['user', 'password', '--email', email.toUpperCase(), '--json'], env, { input: 'a new passphrase\r\nthe second line is not read\n' });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { id: first.adminUserId, email, passwordSet: true });
    assert.equal(result.stderr, '', 'no question is asked when standard input is not a terminal');
    assert.ok(await verifyPassword('a new passphrase', await hashOf(email)), 'the first line, without its line end, is the password');
    assert.equal(await findSession(opened.db, token, systemClock), null, 'their session ended');
    const audit = await opened.db.selectFrom('audit_log').select(['action', 'source', 'target_type', 'target_id', 'user_id'])
      .where('action', '=', 'user.password_set').execute();
    assert.deepEqual(audit, [{ action: 'user.password_set', source: 'cli', target_type: 'user', target_id: first.adminUserId, user_id: null }]);

    const human = await runLeadrun(['user', 'password', '--email', email], env, { input: 'without a line end' });
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stdout, `Set the password of ${email}; they can sign in to the web UI now.\n`);
    assert.ok(await verifyPassword('without a line end', await hashOf(email)));
  });

  it('user password refuses, in one line and changing nothing, a password that breaks the rules, none, or an unknown user', async () => {
    const email = first.adminEmail;
    const before = await hashOf(email);
    const token = await signIn(email);
    const cases: Array<[string, RegExp, string?]> = [
      ['short\n', /^leadrun: the password must be at least 10 characters; nothing was changed$/],
      [`${'x'.repeat(201)}\n`, /^leadrun: the password must be at most 200 characters; nothing was changed$/],
      ['x'.repeat(1_000_000), /^leadrun: the password must be at most 200 characters; nothing was changed$/],
      ['', /^leadrun: no password on standard input: give it as the first line there, or run this on a terminal to be asked for it; nothing was changed$/],
      ['\nlong enough password\n', /^leadrun: no password on standard input/],
      ['long enough password\n', /^leadrun: There is no user with the e-mail nobody@example\.com\.$/, 'nobody@example.com'],
    ];
    for (const [input, pattern, who = email] of cases) {
      const result = await runLeadrun(['user', 'password', '--email', who, '--json'], env, { input });
      const line = assertCleanFailure(result, pattern);
      assert.equal(result.stderr, `${line}\n`);
    }
    assert.equal(await hashOf(email), before, 'the password is the same');
    assert.ok(await findSession(opened.db, token, systemClock), 'and the person is still signed in');
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
  /** How long an admin command started beside the rival took: what a start of Node.js and leadrun costs right now. */
  let besideMs: number;
  /** How long the running serve took to be ready: a start of serve that went further than the rival's. */
  let readyMs: number;

  it('while serve runs, admin commands go through it and the API sees their effect at once', async () => {
    const serveStarted = Date.now();
    const server = await serve();
    await waitForReady(server, `http://127.0.0.1:${port}/readyz`);
    readyMs = Date.now() - serveStarted;
    assert.ok(existsSync(controlSocketPath(dataDir.path)), 'serve listens on the control socket');

    // A second serve on the same DATA_DIR is started now, while this test runs, and judged in the next one.
    rivalStarted = Date.now();
    rival = spawnLeadrun(['serve'], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    servers.push(rival);

    const besideStarted = Date.now();
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Embedded', '--plan', 'free', '--admin-email', 'emb@example.com', '--json'], env);
    besideMs = Date.now() - besideStarted;
    assert.deepEqual(Object.keys(workspace).sort(), ['adminUserId', 'id', 'name', 'plan']);
    workspaceId = workspace.id;
    const created = await leadrunJson(['key', 'create', '--workspace', workspaceId, '--name', 'live', '--scopes', 'leads:read,leads:write', '--json'], env);
    assert.match(created.key, KEY_PATTERN);

    assert.equal(await get('/api/v1/leads', created.key), 200, 'the new key works at once');
    const revoked = await runLeadrun(['key', 'revoke', created.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await get('/api/v1/leads', created.key), 401, 'the revoked key is refused at once');

    const entries = await leadrunJson(['audit', 'list', '--workspace', workspaceId, '--json'], env);
    assert.deepEqual(entries.filter((e: any) => e.source === 'cli').map((e: any) => e.action), ['key.revoked', 'key.created', 'workspace.created']);

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
    // Its bound is a start of serve and a look at the socket, far from the 15 s it waited before (with a line a
    // quarter second, which the one line above rules out): under 10 s, or on a machine so busy that starts take
    // longer, under twice what the running serve took to be ready or the admin command started beside it took.
    const refusedMs = Date.now() - rivalStarted;
    assert.ok(refusedMs < Math.max(10_000, 2 * readyMs, 2 * besideMs),
      `refused after ${refusedMs} ms (serve was ready in ${readyMs} ms; the command beside it took ${besideMs} ms)`);
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

// Through bin/leadrun in a process of its own: --version, and the exit code of a mistake. The rest, like the other
// admin commands of these tests, through the program in this process (test/cli/support.ts).
describe('leadrun tells people what it is and how to use it', { concurrency: 2 }, () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
    const result = await runLeadrun(['--version'], {}, { process: true });
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
    [['serve'], [/^Usage: leadrun serve \[--no-worker\]$/m, /^  --no-worker  /m, /setup token/]],
    [['setup'], [/^Usage: leadrun setup --name N --admin-email E/, /^  --name N  /m, /^  --admin-email E  /m, /^  --plan free\|pro  /m, /^  --json  /m]],
    [['worker'], [/^Usage: leadrun worker/]],
    [['migrate'], [/^Usage: leadrun migrate/, /^  --json  /m]],
    [['workspace'], [/^Usage: leadrun workspace create/, /^Usage: leadrun workspace list \[--json\]$/m, /^  --name N  /m, /^  --plan free\|pro  /m, /^  --admin-email E  /m]],
    [['workspace', 'list'], [/^Usage: leadrun workspace list \[--json\]$/m, /^  --json  /m]],
    [['workspace', 'create'], [/^Usage: leadrun workspace create/, /^  --admin-email E  /m]],
    [['key'], [/^Usage: leadrun key create/, /^Usage: leadrun key revoke/m, /^  --scopes a,b  /m]],
    [['key', 'revoke'], [/^Usage: leadrun key revoke KEY_ID/]],
    [['key', 'create'], [/^Usage: leadrun key create --workspace ID\|NAME/, /^  --workspace ID\|NAME  .*id or its exact name/m]],
    [['audit'], [/^Usage: leadrun audit list/, /^  --limit N  /m, /^  --workspace ID\|NAME  /m]],
    [['user'], [/^Usage: leadrun user password/, /^  --email E  /m, /without showing it/]],
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
    const result = await runLeadrun(['frobnicate', '--help'], {}, { process: true });
    assert.equal(result.code, 1);
    const line = assertCleanFailure(result, /^leadrun: unknown command "frobnicate" \(see leadrun --help\)$/);
    assert.equal(result.stderr, `${line}\n`);
  });

  it('no command at all prints the usage and exits 1', async () => {
    const result = await runLeadrun([], {}, { process: true });
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^leadrun: .*\n\nUsage:\n(  leadrun .*\n)+/);
  });
});

describe('a working directory deleted under the shell', () => {
  it('fails with one line of leadrun, after the shell\'s own warning, and no stack trace', async () => {
    const scratch = await tempDir();
    const gone = path.join(scratch.path, 'gone');
    try {
      // The shell enters the directory and removes it, then runs leadrun there, as a terminal left in it would.
      const result = await runCommand('/bin/sh', ['-c', 'mkdir "$1" && cd "$1" && rmdir "$1" && exec "$2" --version', 'sh', gone, LEADRUN_BIN], {});
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.at(-1), 'leadrun: the current directory no longer exists; cd to one that does and run the command again');
      assert.ok(lines.slice(0, -1).every((line) => /getcwd/.test(line)), `only the shell's warning before it: ${result.stderr}`);
    } finally {
      await scratch.remove();
    }
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

/**
 * `leadrun serve` on a pseudo-terminal (script(1)), as when a person starts it: resolves with its ready line. Stopped
 * through the pid it wrote into DATA_DIR, since script(1) stands between.
 */
function serveOnTerminal(dataDir: string, env: Record<string, string>): { ready: Promise<string>; stop(): Promise<void> } {
  const child = spawn('script', ['-qec', `'${LEADRUN_BIN}' serve`, '/dev/null'], {
    env: cleanEnv({ DATA_DIR: dataDir, ...env }), cwd: workingDir(), stdio: ['pipe', 'pipe', 'pipe'],
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
  return {
    ready,
    async stop() {
      const holder = readFileSync(path.join(dataDir, 'leadrun.holder'), 'utf8');
      process.kill(Number(holder.split(' ')[0]), 'SIGTERM');
      await exited;
    },
  };
}

async function postSetup(baseUrl: string, body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const res = await fetch(`${baseUrl}/ui/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ workspaceName: 'Acme Sales', name: 'Sam Rivera', email: 'sam@acme.test', password: 'correct horse battery', ...body }),
  });
  return { status: res.status, json: await res.json() };
}

describe('serve says when it is ready', () => {
  let dataDir: { path: string; remove(): Promise<void> };
  before(async () => { dataDir = await tempDir(undefined, { migrated: true }); });
  after(() => dataDir?.remove());

  it('on a terminal: one human line with the PUBLIC_URL, and the hint to set up an empty installation', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const serve = serveOnTerminal(dataDir.path, { PORT: String(port), HOST: '127.0.0.1' });
    try {
      assert.equal(await serve.ready, `leadrun is ready at http://localhost:${port} — open it to set up`);
    } finally {
      await serve.stop();
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

describe('serve on an address other machines reach: the one-time setup token', () => {
  const dirs: Array<{ remove(): Promise<void> }> = [];
  after(async () => { for (const dir of dirs) await dir.remove(); });

  it('on a terminal, the ready line carries the token, and setup takes it', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir(undefined, { migrated: true });
    dirs.push(dataDir);
    const port = await freePort();
    const serve = serveOnTerminal(dataDir.path, { PORT: String(port), HOST: '0.0.0.0' });
    try {
      const line = await serve.ready;
      const match = new RegExp(`^leadrun is ready at http://localhost:${port} — open it to set up, with the setup token ([A-Za-z0-9_-]{32})$`).exec(line);
      assert.ok(match, line);
      const baseUrl = `http://127.0.0.1:${port}`;
      assert.equal((await postSetup(baseUrl, {})).status, 403);
      assert.equal((await postSetup(baseUrl, { setupToken: match[1] })).status, 201);
    } finally {
      await serve.stop();
    }
  });

  it('not on a terminal, a JSON log line carries it; once set up, serve issues none', { timeout: 90_000 }, async () => {
    const dataDir = await tempDir(undefined, { migrated: true });
    dirs.push(dataDir);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env = { DATA_DIR: dataDir.path, PORT: String(port), HOST: '0.0.0.0', LOG_LEVEL: 'warn' };
    const server = spawnLeadrun(['serve'], env);
    let token: string;
    try {
      await waitForReady(server, `${baseUrl}/readyz`);
      // At LOG_LEVEL=warn, where info lines are not written.
      const notice = JSON.parse(await waitForLine(server, /"setupToken"/));
      assert.equal(notice.msg, 'leadrun is not set up yet: open it and give this setup token');
      assert.equal(notice.url, `http://localhost:${port}`);
      token = notice.setupToken;
      assert.deepEqual(await (await fetch(`${baseUrl}/ui/api/setup`)).json(), { needed: true, tokenRequired: true });
      const wrong = await postSetup(baseUrl, { setupToken: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` });
      assert.equal(wrong.status, 403);
      assert.match(wrong.json.detail, /The setup token is not right/);
      assert.equal((await postSetup(baseUrl, { setupToken: token })).status, 201);
    } finally {
      await server.kill('SIGTERM');
    }
    assert.equal(server.code, 0, server.output());

    const again = spawnLeadrun(['serve'], { ...env, LOG_LEVEL: 'info' });
    try {
      await waitForReady(again, `${baseUrl}/readyz`);
      // Its token would have come before the line that says it serves.
      await waitForLine(again, /"msg":"leadrun is serving"/);
      assert.doesNotMatch(again.output(), /setupToken|setup token/, 'no token for an installation set up already');
      assert.deepEqual(await (await fetch(`${baseUrl}/ui/api/setup`)).json(), { needed: false, tokenRequired: false });
    } finally {
      await again.kill('SIGTERM');
    }
  });

  it('on PostgreSQL, a token printed by one API process works on another', { timeout: 90_000 }, async () => {
    const database = await createMigratedPostgresDatabase();
    const ports = [await freePort(), await freePort()];
    const servers = ports.map((port) => spawnLeadrun(['serve', '--no-worker'], { DATABASE_URL: database.url, PORT: String(port), HOST: '0.0.0.0', LOG_LEVEL: 'warn' }));
    try {
      for (const [index, server] of servers.entries()) await waitForReady(server, `http://127.0.0.1:${ports[index]}/readyz`);
      const tokens = await Promise.all(servers.map(async (server) => JSON.parse(await waitForLine(server, /"setupToken"/)).setupToken as string));
      assert.notEqual(tokens[0], tokens[1], 'each process issues its own');
      const other = `http://127.0.0.1:${ports[1]}`;
      assert.equal((await postSetup(other, { setupToken: tokens[0] })).status, 201, "the first process's token, on the second");
      const late = await postSetup(`http://127.0.0.1:${ports[0]}`, { setupToken: tokens[1], email: 'late@acme.test' });
      assert.equal(late.status, 409, 'set up already');
    } finally {
      for (const server of servers) await server.kill('SIGTERM');
      await database.drop();
    }
  });
});

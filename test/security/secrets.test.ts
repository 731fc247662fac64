// Secrets never reach the logs. A real `leadrun serve` at LOG_LEVEL=trace, on PostgreSQL (with a password in
// DATABASE_URL and REDIS_URL) and on the embedded database (where CLI commands pass through the server's control
// socket), takes a whole session of work: first-run setup and sign-in with passwords, a failed sign-in, keys made
// in the UI and with the CLI, a password set from standard input, a password reset link used and a password
// changed, API calls that succeed and fail (401 with revoked, mistyped, unknown and misplaced keys, 400, 404, 413,
// 415, 422), a run whose model endpoint refuses its API key. Then every line it wrote, and the CLI's own output, is
// searched for every secret; and the database is searched too: keys are kept as SHA-256 digests only, sessions,
// CSRF tokens and reset links as digests, passwords as scrypt hashes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { openDatabase } from '../../src/db/database.ts';
import { generateKey } from '../../src/domain/keys/keys.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { redactSecrets } from '../../src/observability/redact.ts';
import { BACKENDS, createMigratedPostgresDatabase, TRANSCRIPT } from '../helpers.ts';
import { runLeadrun, tempDir } from '../cli/support.ts';
import { threadCpuMs } from '../support/thread-cpu.ts';
import { redisPrefix, startServe, tableNames, type Serve } from './support.ts';

const LLM_KEY = 'sk-llm-secret-7Hq2Zr9WkP4mXv';
const DB_PASSWORD = 'db-secret-Vn3Qk8Lp2';
const REDIS_PASSWORD = 'redis-secret-Xc5Tg7Jm1';
const SETUP_PASSWORD = 'setup-password-Qw8Er4Ty';
const MEMBER_PASSWORD = 'member-password-Zx6Cv2Bn';
const WRONG_PASSWORD = 'wrong-password-Lk9Jh3Gf';
const CLI_PASSWORD = 'cli-password-Mn5Bv1Cx';
const RESET_PASSWORD = 'reset-password-Pq4Wd7Rt';
const CHANGED_PASSWORD = 'changed-password-Hy2Ku6Io';

/** An OpenAI-compatible endpoint that refuses every key, as one would refuse a wrong one. */
async function refusingModelEndpoint(): Promise<{ url: string; seenKeys: string[]; close(): Promise<void> }> {
  const seenKeys: string[] = [];
  const server = http.createServer((req, res) => {
    seenKeys.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    seenKeys,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

interface Answer { status: number; headers: Headers; json: any; text: string }

async function request(base: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown; raw?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | undefined = options.raw;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
  const text = await res.text();
  let json: any;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json, text };
}

/** The cookie value a Set-Cookie header sets for the session. */
function sessionToken(res: Answer): string {
  const match = new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(res.headers.get('set-cookie') ?? '');
  assert.ok(match?.[1], `a session cookie in ${res.headers.get('set-cookie')}`);
  return match[1];
}

interface Secret { name: string; value: string }

/** Every character percent-encoded (%XX), `times` times over: `s` → `%73` → `%2573`. */
function percentEncoded(text: string, times = 1): string {
  let encoded = [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
  for (let i = 1; i < times; i++) encoded = encoded.replaceAll('%', '%25');
  return encoded;
}

/**
 * The parts of a secret worth searching for: all of it, and (for a key) what follows the public prefix, as it is
 * and percent-encoded once and twice.
 */
function needles(secret: Secret): string[] {
  const found = [secret.value];
  if (secret.value.startsWith('sk_')) {
    const rest = secret.value.slice(10);
    found.push(rest, percentEncoded(rest), percentEncoded(rest, 2));
  }
  return found;
}

function assertAbsent(haystack: string, secrets: Secret[], where: string): void {
  for (const secret of secrets) {
    for (const needle of needles(secret)) {
      const at = haystack.indexOf(needle);
      assert.equal(at, -1, `${secret.name} appears in ${where}: …${haystack.slice(Math.max(0, at - 200), at + needle.length + 50)}…`);
    }
  }
}

const modes = [
  ...(BACKENDS.includes('postgres') ? ['postgres' as const] : []),
  'embedded' as const,
];

for (const mode of modes) {
  describe(`secrets stay out of the logs (${mode})`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    });

    it('a whole session of work at LOG_LEVEL=trace logs no key, password, session or CSRF token, and stores only digests', async (c) => {
      const model = await refusingModelEndpoint();
      cleanups.push(() => model.close());
      let env: Record<string, string>;
      let databaseUrl: string | null = null;
      if (mode === 'postgres') {
        const created = await createMigratedPostgresDatabase();
        cleanups.push(() => created.drop());
        // Trust authentication accepts any password: it is here only to be looked for in the logs.
        const url = new URL(created.url);
        url.password = DB_PASSWORD;
        databaseUrl = url.toString();
        const redis = await redisPrefix('secrets');
        cleanups.push(() => redis.cleanup());
        env = { DATABASE_URL: databaseUrl, REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:6379`, REDIS_KEY_PREFIX: redis.prefix };
      } else {
        const dir = await tempDir('leadrun-secrets-', { migrated: true });
        cleanups.push(() => dir.remove());
        env = { DATA_DIR: dir.path };
      }
      const serverEnv = { ...env, LOG_LEVEL: 'trace', LLM_BASE_URL: model.url, LLM_API_KEY: LLM_KEY, LLM_MODEL: 'gpt-test', STEP_RETRY_BASE_MS: '10' };
      const server: Serve = await startServe(null, serverEnv);
      cleanups.push(() => server.stop('SIGKILL'));
      const base = server.url;
      const secrets: Secret[] = [
        { name: 'the model API key', value: LLM_KEY },
        { name: 'the setup password', value: SETUP_PASSWORD },
        { name: 'the member password', value: MEMBER_PASSWORD },
        { name: 'a wrong password', value: WRONG_PASSWORD },
        { name: 'the CLI password', value: CLI_PASSWORD },
        ...(mode === 'postgres' ? [{ name: 'the database password', value: DB_PASSWORD }, { name: 'the Redis password', value: REDIS_PASSWORD }] : []),
      ];
      const cliOutput: string[] = [];
      const cli = async (args: string[], input?: string) => {
        // The password on standard input goes through bin/leadrun's own, a pipe (the CLI never takes it from its arguments).
        const done = input === undefined ? await runLeadrun(args, env) : await runLeadrun(args, env, { input, process: true });
        assert.equal(done.code, 0, `leadrun ${args.join(' ')}: ${done.stderr}`);
        cliOutput.push(done.stderr);
        return done.stdout;
      };

      // The web UI: first-run setup, a key, a member, sign-ins right and wrong, sign-out.
      const origin = { origin: base };
      const setup = await request(base, 'POST', '/ui/api/setup', { headers: origin, body: { workspaceName: 'Secrets', name: 'Admin', email: 'admin@secrets.test', password: SETUP_PASSWORD } });
      assert.equal(setup.status, 201, setup.text);
      const admin = { token: sessionToken(setup), csrf: setup.json.csrfToken as string };
      const asAdmin = { ...origin, cookie: `${SESSION_COOKIE}=${admin.token}`, 'x-csrf-token': admin.csrf };
      secrets.push({ name: "the admin's session token", value: admin.token }, { name: "the admin's CSRF token", value: admin.csrf });
      const uiKey = await request(base, 'POST', '/ui/api/keys', { headers: asAdmin, body: { name: 'made in the UI', scopes: ['leads:read', 'leads:write', 'runs:read', 'runs:write'] } });
      assert.equal(uiKey.status, 201, uiKey.text);
      secrets.push({ name: 'a key made in the UI', value: uiKey.json.key });
      const member = await request(base, 'POST', '/ui/api/members', { headers: asAdmin, body: { name: 'Member', email: 'member@secrets.test', role: 'MEMBER', password: MEMBER_PASSWORD } });
      assert.equal(member.status, 201, member.text);
      const wrong = await request(base, 'POST', '/ui/api/session', { headers: origin, body: { email: 'member@secrets.test', password: WRONG_PASSWORD } });
      assert.equal(wrong.status, 401, wrong.text);
      const signedIn = await request(base, 'POST', '/ui/api/session', { headers: origin, body: { email: 'member@secrets.test', password: MEMBER_PASSWORD } });
      assert.equal(signedIn.status, 200, signedIn.text);
      const memberSession = { token: sessionToken(signedIn), csrf: signedIn.json.csrfToken as string };
      secrets.push({ name: "the member's session token", value: memberSession.token }, { name: "the member's CSRF token", value: memberSession.csrf });
      const asMember = { ...origin, cookie: `${SESSION_COOKIE}=${memberSession.token}`, 'x-csrf-token': memberSession.csrf };
      assert.equal((await request(base, 'GET', '/ui/api/keys', { headers: asMember })).status, 403, 'a member is kept from keys');
      assert.equal((await request(base, 'POST', '/api/v1/leads', { headers: { ...asMember, 'x-csrf-token': 'wrong' }, body: { name: 'x' } })).status, 403);
      assert.equal((await request(base, 'DELETE', '/ui/api/session', { headers: asMember })).status, 204);
      assert.equal((await request(base, 'GET', '/api/v1/leads', { headers: { cookie: `${SESSION_COOKIE}=${memberSession.token}` } })).status, 401, 'signed out');

      // The CLI: a workspace, keys, a revocation, a password from standard input.
      const workspace = JSON.parse(await cli(['workspace', 'create', '--name', 'CLI', '--plan', 'pro', '--json']));
      const key = JSON.parse(await cli(['key', 'create', '--workspace', workspace.id, '--name', 'cli', '--scopes', 'leads:read,leads:write,runs:read,runs:write', '--json']));
      const revoked = JSON.parse(await cli(['key', 'create', '--workspace', workspace.id, '--name', 'to revoke', '--scopes', 'leads:read', '--json']));
      await cli(['key', 'revoke', revoked.id]);
      await cli(['user', 'password', '--email', 'member@secrets.test'], `${CLI_PASSWORD}\n`);
      await cli(['audit', 'list', '--workspace', workspace.id, '--json']);
      const unknown = generateKey();
      const typo = `${key.key.slice(0, -1)}${key.key.endsWith('A') ? 'B' : 'A'}`;
      secrets.push({ name: 'a CLI key', value: key.key }, { name: 'a revoked key', value: revoked.key }, { name: 'an unknown key', value: unknown }, { name: 'a mistyped key', value: typo });
      const signedInAgain = await request(base, 'POST', '/ui/api/session', { headers: origin, body: { email: 'member@secrets.test', password: CLI_PASSWORD } });
      assert.equal(signedInAgain.status, 200, 'the CLI password works');
      secrets.push({ name: 'a third session token', value: sessionToken(signedInAgain) });

      // A password reset link made by the admin and used by the member, then a change of their own password.
      const link = await request(base, 'POST', `/ui/api/members/${member.json.id}/password-reset`, { headers: asAdmin, body: {} });
      assert.equal(link.status, 201, link.text);
      const resetToken = new URL(link.json.url).hash.replace('#token=', '');
      secrets.push({ name: 'a password reset token', value: resetToken }, { name: 'the reset password', value: RESET_PASSWORD }, { name: 'the changed password', value: CHANGED_PASSWORD });
      assert.equal((await request(base, 'POST', '/ui/api/password-reset/check', { headers: origin, body: { token: resetToken } })).status, 200);
      const reset = await request(base, 'POST', '/ui/api/password-reset', { headers: origin, body: { token: resetToken, password: RESET_PASSWORD } });
      assert.equal(reset.status, 200, reset.text);
      assert.equal((await request(base, 'POST', '/ui/api/password-reset', { headers: origin, body: { token: resetToken, password: RESET_PASSWORD } })).status, 400, 'used up');
      const afterReset = { ...origin, cookie: `${SESSION_COOKIE}=${sessionToken(reset)}`, 'x-csrf-token': reset.json.csrfToken as string };
      secrets.push({ name: 'the session token of the reset', value: sessionToken(reset) });
      const wrongCurrent = await request(base, 'POST', '/ui/api/profile/password', { headers: afterReset, body: { currentPassword: WRONG_PASSWORD, newPassword: CHANGED_PASSWORD } });
      assert.equal(wrongCurrent.status, 400, wrongCurrent.text);
      const changed = await request(base, 'POST', '/ui/api/profile/password', { headers: afterReset, body: { currentPassword: RESET_PASSWORD, newPassword: CHANGED_PASSWORD } });
      assert.equal(changed.status, 200, changed.text);
      secrets.push({ name: 'the session token after the change', value: sessionToken(changed) });

      // The API, with the key and with bad ones, succeeding and failing.
      const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
      const lead = await request(base, 'POST', '/api/v1/leads', { headers: bearer(key.key), body: { name: 'Ada', companyName: 'Analytical Engines' } });
      assert.equal(lead.status, 201, lead.text);
      const madeCall = await request(base, 'POST', `/api/v1/leads/${lead.json.id}/calls`, { headers: bearer(key.key), body: { transcript: TRANSCRIPT } });
      assert.equal(madeCall.status, 201);
      const run = await request(base, 'POST', '/api/v1/runs', { headers: { ...bearer(key.key), 'idempotency-key': 'secret-run' }, body: { leadId: lead.json.id, callId: madeCall.json.id } });
      assert.equal(run.status, 202, run.text);
      const expected: Array<[string, string, Record<string, string>, unknown, number]> = [
        ['GET', '/api/v1/leads', bearer(revoked.key), undefined, 401],
        ['GET', '/api/v1/leads', bearer(typo), undefined, 401],
        ['GET', '/api/v1/leads', bearer(unknown), undefined, 401],
        ['GET', '/api/v1/leads', { authorization: `Basic ${Buffer.from(`me:${key.key}`).toString('base64')}` }, undefined, 401],
        ['GET', '/api/v1/leads', { authorization: key.key }, undefined, 401],
        ['GET', '/api/v1/leads', { authorization: `Bearer ${key.key} ${key.key}` }, undefined, 401],
        ['GET', `/api/v1/leads?api_key=${key.key}`, {}, undefined, 401],
        ['GET', `/api/v1/leads?k=${key.key.replace('_', '%5F')}`, {}, undefined, 401],
        ['GET', `/api/v1/leads?k=${key.key.replace('_', '%255f')}&then=more`, {}, undefined, 401],
        ['GET', `/api/v1/leads?k=${percentEncoded(key.key)}`, {}, undefined, 401],
        ['GET', `/api/v1/leads?k=${percentEncoded(key.key, 2)}`, {}, undefined, 401],
        ['GET', `/api/v1/leads?k=${percentEncoded(key.key.slice(0, 20))}${key.key.slice(20)}`, {}, undefined, 401],
        ['GET', `/api/v1/leads/${percentEncoded(key.key)}`, bearer(key.key), undefined, 404],
        ['GET', `/api/v1/leads/${key.key}`, bearer(key.key), undefined, 404],
        ['POST', '/api/v1/leads', bearer(key.key), { name: '' }, 400],
        ['POST', '/api/v1/leads', bearer(key.key), { name: key.key, email: `${key.key}@example.com`, apiKey: key.key }, 400],
        ['POST', '/api/v1/runs', { ...bearer(key.key), 'idempotency-key': 'secret-run' }, { leadId: lead.json.id, callId: lead.json.id }, 422],
        ['GET', '/api/v1/leads', bearer(uiKey.json.key), undefined, 200],
        ['POST', '/api/v1/leads', { ...bearer(key.key), 'content-type': 'text/plain' }, 'hello', 415],
        ['GET', '/api/v1/nothing-here', bearer(key.key), undefined, 404],
        ['GET', '/ui/api/keys', { cookie: `${SESSION_COOKIE}=${admin.token}` }, undefined, 200],
      ];
      for (const [method, path, headers, body, status] of expected) {
        const res = await request(base, method, path, typeof body === 'string' ? { headers, raw: body } : { headers, ...(body !== undefined ? { body } : {}) });
        assert.equal(res.status, status, `${method} ${path}: ${res.text.slice(0, 200)}`);
        assertAbsent(res.text, secrets, `the answer to ${method} ${path}`);
      }
      const big = await request(base, 'POST', '/api/v1/leads', { headers: bearer(key.key), body: { name: 'x'.repeat(1024 * 1024 + 1) } });
      assert.equal(big.status, 413);

      // The run: its model endpoint refuses the key; the step fails, with a readable error that holds no key.
      const deadline = Date.now() + 30_000;
      let detail: Answer;
      for (;;) {
        detail = await request(base, 'GET', `/api/v1/runs/${run.json.id}`, { headers: bearer(key.key) });
        if (detail.json?.data?.status === 'FAILED') break;
        assert.ok(Date.now() < deadline, `the run failed on the refused model key: ${detail.text.slice(0, 500)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(model.seenKeys.includes(`Bearer ${LLM_KEY}`), 'the model endpoint was called with the key');
      assertAbsent(detail.text, secrets, 'the failed run');

      await server.stop('SIGTERM');
      assert.equal(server.process.code, 0, server.process.stderr().slice(-2000));
      const logs = server.process.output();
      const lines = logs.split('\n').filter(Boolean);
      c.diagnostic(`${lines.length} log lines, ${(logs.length / 1024).toFixed(0)} KiB`);
      // The logs did see all this: requests, refusals, the failed step.
      assert.ok(lines.filter((l) => l.includes('"msg":"request"')).length >= 30, 'request lines');
      assert.ok(lines.some((l) => l.includes('"status":401')), '401s logged');
      assert.ok(lines.some((l) => /step failed/.test(l)), 'the failed step logged');
      assertAbsent(logs, secrets, 'the server log');
      assertAbsent(cliOutput.join('\n'), secrets, "the CLI's standard error");

      // The database holds digests: no secret in any row of any table, and each key's SHA-256.
      const database = await openDatabase(databaseUrl ? { databaseUrl } : { databaseUrl: null, dataDir: env.DATA_DIR! });
      try {
        for (const table of await tableNames(database.db)) {
          const rows = await sql<{ row: string }>`SELECT to_jsonb(t)::text AS row FROM ${sql.table(table)} t`.execute(database.db);
          assertAbsent(rows.rows.map((r) => r.row).join('\n'), secrets, `table ${table}`);
        }
        for (const k of [key, revoked]) {
          const row = await database.db.selectFrom('api_keys').select(['digest', 'prefix']).where('id', '=', k.id).executeTakeFirstOrThrow();
          assert.equal(row.digest, createHash('sha256').update(k.key).digest('hex'), 'the key is kept as its SHA-256 digest');
          assert.equal(row.prefix, k.key.slice(0, 10));
        }
      } finally {
        await database.close();
      }
    });
  });
}

describe('redactSecrets', () => {
  it('cuts every key in a trace-level log line to its public prefix, however it was percent-encoded', () => {
    const lines: string[] = [];
    // The logger of `leadrun serve` (src/program.ts) writes each line through redactSecrets in the same way.
    const logger = pino({ level: 'trace', hooks: { streamWrite: redactSecrets } }, { write: (line: string) => { lines.push(line); } });
    const key = generateKey();
    const forms: Record<string, string> = {
      'as it is': key,
      'with %5F': key.replace('_', '%5F'),
      'with %5f': key.replace('_', '%5f'),
      'with the underscore encoded twice': key.replace('_', '%255F'),
      'with the underscore encoded four times': key.replace('_', '%2525255F'),
      'every character encoded': percentEncoded(key),
      'every character encoded twice': percentEncoded(key, 2),
      'every character encoded three times': percentEncoded(key, 3),
      'every character encoded, in lower case': percentEncoded(key).toLowerCase(),
      'every other character encoded': [...key].map((c, i) => (i % 2 ? percentEncoded(c) : c)).join(''),
      'followed by more letters': `${key}Zz9`,
    };
    for (const form of Object.values(forms)) {
      logger.trace({ url: `/api/v1/leads?k=${form}&then=1`, header: `x-api-key: ${form}` }, `refused ${form}`);
    }
    assert.equal(lines.length, Object.keys(forms).length);
    const decodedFully = (text: string) => {
      let decoded = text;
      for (let i = 0; i < 5; i++) decoded = decodeURIComponent(decoded);
      return decoded;
    };
    Object.keys(forms).forEach((name, i) => {
      const line = lines[i]!;
      assert.ok(!decodedFully(line).includes(key.slice(10)), `${name}: ${line}`);
      assert.equal(line.split(`${key.slice(0, 10)}[redacted]`).length - 1, 3, `${name}: the prefix stays, three times: ${line}`);
    });
  });

  it('leaves lines without a key as they are, and reads a hostile line in linear time', () => {
    for (const line of ['{"msg":"request","url":"/api/v1/leads?limit=5"}', 'sk_short', '100% done', 'task_0123456789']) {
      assert.equal(redactSecrets(line), line);
    }
    const hostile = `sk_${'%2525'.repeat(200_000)}${'sk%5F%'.repeat(200_000)}`;
    const cpuMs = threadCpuMs(() => assert.equal(redactSecrets(hostile), hostile));
    assert.ok(cpuMs < 1_000, `well under a second of CPU for 2 MB: ${cpuMs.toFixed(0)} ms`);
  });
});

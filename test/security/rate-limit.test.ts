// Rate limits (DESIGN §3): RATE_LIMIT_PER_MINUTE per API key, per user for a UI session, per address without
// either; 429 rate_limited with Retry-After and the IETF RateLimit-Policy / RateLimit headers; counted after
// authentication; /healthz, /readyz and /metrics never limited; in memory per process, or in Redis shared by all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKey } from '../../src/domain/keys/keys.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { systemClock } from '../../src/clock.ts';
import { buildApp, createDeps } from '../../src/http/app.ts';
import type { AppInstance } from '../../src/http/app-instance.ts';
import { SESSION_COOKIE, type Principal } from '../../src/http/auth.ts';
import { rateLimitKey } from '../../src/http/security.ts';
import { BACKENDS, silentLogger, startTestApp, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertProblem, countRows, createCall, createLead } from '../http/support.ts';
import { redisPrefix, REDIS_URL } from './support.ts';

const LIMIT = 5;
const kind = BACKENDS[0] ?? 'pglite';

function rateLimitOf(res: ApiResponse): { remaining: number; reset: number } {
  const value = res.headers.get('ratelimit') ?? '';
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(value);
  assert.ok(match, `RateLimit header in structured-field form, got "${value}" (${res.status})`);
  return { remaining: Number(match[1]), reset: Number(match[2]) };
}

function assertPolicy(res: ApiResponse, limit = LIMIT): void {
  assert.equal(res.headers.get('ratelimit-policy'), `"default";q=${limit};w=60`, `RateLimit-Policy (${res.status})`);
}

function assertRateLimited(res: ApiResponse, context: string, limit = LIMIT): void {
  assertProblem(res, 429, 'rate_limited', context);
  assertPolicy(res, limit);
  const { remaining, reset } = rateLimitOf(res);
  assert.equal(remaining, 0, `${context}: nothing remains`);
  const retryAfter = res.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, `${context}: Retry-After in seconds`);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `${context}: Retry-After ${retryAfter} within the window`);
  assert.equal(reset, Number(retryAfter), `${context}: RateLimit t= is Retry-After`);
}

/** Uses up a quota of LIMIT with `send`, checking the count-down on the way. */
async function exhaust(send: () => Promise<ApiResponse>, context: string, limit = LIMIT): Promise<void> {
  for (let i = 1; i <= limit; i++) {
    const res = await send();
    assert.ok(res.status < 400, `${context}: request ${i} of ${limit} is answered (${res.status} ${res.text.slice(0, 200)})`);
    assertPolicy(res, limit);
    assert.equal(rateLimitOf(res).remaining, limit - i, `${context}: remaining after ${i}`);
  }
}

describe('rate limit key', () => {
  const base: Principal = { source: 'api', workspaceId: 'w', scopes: [], plan: 'PRO', adminUserId: null, keyId: 'k1', userId: null, role: null };
  const request = (principal: Principal | null, ip = '203.0.113.7') => ({ principal, ip }) as never;

  it('is the API key, the signed-in user, or else the client address, each in its own namespace', () => {
    assert.equal(rateLimitKey(request(base)), 'key:k1');
    assert.equal(rateLimitKey(request({ ...base, source: 'ui', keyId: null, userId: 'u1', role: 'ADMIN' })), 'user:u1');
    assert.equal(rateLimitKey(request(null)), 'ip:203.0.113.7');
    // An IPv6 client is counted by its /64, which is what one client controls.
    assert.equal(rateLimitKey(request(null, '2001:db8:1:2:aaaa::1')), rateLimitKey(request(null, '2001:db8:1:2:bbbb::2')));
    assert.equal(rateLimitKey(request(null, '::ffff:203.0.113.7')), 'ip:203.0.113.7');
  });
});

describe(`rate limits in memory (${kind})`, () => {
  let t: TestApp;
  let workspace: { id: string; adminUserId: string };
  before(async () => {
    t = await startTestApp(kind, { config: { rateLimitPerMinute: LIMIT } });
    workspace = await t.workspace('pro');
  });
  after(() => t?.close());

  it('counts each API key on its own, with RateLimit headers on every answer, then 429 rate_limited with Retry-After', async () => {
    const a = await t.key(workspace.id);
    const b = await t.key(workspace.id);
    await exhaust(() => t.api('GET', '/api/v1/leads', { key: a.key }), 'key a');
    for (let i = 0; i < 3; i++) assertRateLimited(await t.api('GET', '/api/v1/leads', { key: a.key }), `key a, over by ${i + 1}`);
    // Another key of the same workspace, from the same address, has its own quota.
    await exhaust(() => t.api('GET', '/api/v1/runs', { key: b.key }), 'key b');
    assertRateLimited(await t.api('POST', '/api/v1/leads', { key: b.key, body: { name: 'Over the limit' } }), 'key b POST');
  });

  it('authenticates first: a missing, malformed, unknown or revoked key is answered 401, never 429, and costs no quota', async () => {
    const spent = await t.key(workspace.id);
    const revoked = await t.key(workspace.id);
    await t.revoke(revoked.id);
    await exhaust(() => t.api('GET', '/api/v1/leads', { key: spent.key }), 'spent key');
    const bad: Array<[string, Record<string, string>]> = [
      ['no key', {}],
      ['a malformed key', { authorization: 'Bearer sk_nope' }],
      ['the spent key with a typo', { authorization: `Bearer ${spent.key.slice(0, -1)}${spent.key.endsWith('A') ? 'B' : 'A'}` }],
      ['an unknown key', { authorization: `Bearer ${generateKey()}` }],
      ['a revoked key', { authorization: `Bearer ${revoked.key}` }],
    ];
    for (let round = 0; round < LIMIT + 2; round++) {
      for (const [name, headers] of bad) {
        const res = await t.api('GET', '/api/v1/leads', { headers });
        assertProblem(res, 401, 'unauthorized', name);
        assert.equal(res.headers.get('ratelimit'), null, `${name}: a 401 is not counted`);
      }
    }
    // A key without the route's scope is refused 403 before it is counted, even when its quota is spent.
    const readOnly = await t.key(workspace.id, ['leads:read']);
    await exhaust(() => t.api('GET', '/api/v1/leads', { key: readOnly.key }), 'read-only key');
    assertProblem(await t.api('POST', '/api/v1/leads', { key: readOnly.key, body: { name: 'x' } }), 403, 'insufficient_scope');
  });

  it('refuses a limited request before reading its body, and the refused request changes nothing', async () => {
    const key = await t.key(workspace.id);
    const lead = await createLead(t, key.key);
    const call = await createCall(t, key.key, lead.id);
    // Two requests made the lead and the call; three more use the quota up.
    for (let i = 0; i < LIMIT - 2; i++) assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}`, { key: key.key })).status, 200);
    const counts = { leads: await countRows(t, 'leads'), calls: await countRows(t, 'calls'), runs: await countRows(t, 'runs') };
    assertRateLimited(await t.api('POST', '/api/v1/leads', { key: key.key, raw: '{"not json', headers: { 'content-type': 'application/json' } }), 'malformed JSON');
    assertRateLimited(await t.api('POST', '/api/v1/runs', { key: key.key, body: { leadId: lead.id, callId: call.id } }), 'a run');
    assertRateLimited(await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key: key.key, body: { name: 'Changed' } }), 'a change');
    assert.deepEqual({ leads: await countRows(t, 'leads'), calls: await countRows(t, 'calls'), runs: await countRows(t, 'runs') }, counts);
  });

  it('counts a signed-in person per user: two sessions of one user share a quota; a key of the workspace has its own', async () => {
    const ws = await t.workspace('pro');
    const first = await createSession(t.database.db, ws.adminUserId, systemClock, { ip: '127.0.0.1', userAgent: 'test' });
    const second = await createSession(t.database.db, ws.adminUserId, systemClock, { ip: '127.0.0.1', userAgent: 'test' });
    const asUser = (token: string) => t.api('GET', '/api/v1/leads', { headers: { cookie: `${SESSION_COOKIE}=${token}` } });
    for (let i = 1; i <= 3; i++) assert.equal(rateLimitOf(await asUser(first.token)).remaining, LIMIT - i, `first session, request ${i}`);
    const next = await asUser(second.token);
    assert.equal(next.status, 200, next.text);
    assert.equal(rateLimitOf(next).remaining, LIMIT - 4, 'the second session draws on the same quota');
    assert.equal(rateLimitOf(await asUser(first.token)).remaining, 0);
    assertRateLimited(await asUser(second.token), 'the user has used the quota');
    assertRateLimited(await asUser(first.token), 'the user has used the quota');
    const key = await t.key(ws.id);
    await exhaust(() => t.api('GET', '/api/v1/leads', { key: key.key }), 'a key of the same workspace');
  });

  it('limits requests without a key or session per address, and never /healthz, /readyz or /metrics', async () => {
    const other = await startTestApp(kind, { config: { rateLimitPerMinute: LIMIT } });
    try {
      await exhaust(() => other.api('GET', '/api/v1/openapi.json'), 'the API document');
      assertRateLimited(await other.api('GET', '/api/v1/openapi.json'), 'the API document, again');
      assertRateLimited(await other.api('GET', '/no/such/page'), 'an unknown route');
      for (let i = 0; i < LIMIT * 3; i++) {
        for (const path of ['/healthz', '/readyz', '/metrics']) {
          const res = await other.api('GET', path);
          assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
          assert.equal(res.headers.get('ratelimit'), null, `${path} is not limited`);
          assert.equal(res.headers.get('ratelimit-policy'), null, `${path} has no policy`);
        }
      }
      // A key from the same address is counted on its own.
      const ws = await other.workspace('pro');
      const key = await other.key(ws.id);
      await exhaust(() => other.api('GET', '/api/v1/leads', { key: key.key }), 'a key from the limited address');
    } finally {
      await other.close();
    }
  });

  it('counts in each process on its own when no Redis is configured', async () => {
    const second = await secondApp(t, t.deps.config);
    try {
      const key = await t.key(workspace.id);
      await exhaust(() => t.api('GET', '/api/v1/leads', { key: key.key }), 'first process');
      const res = await fetch(`${second.url}/api/v1/leads`, { headers: { authorization: `Bearer ${key.key}` } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit'), `"default";r=${LIMIT - 1};t=60`);
    } finally {
      await second.app.close();
    }
  });
});

/** Another instance of the app on the same database: as another `serve` process would be, with its own memory. */
async function secondApp(t: TestApp, config: TestApp['deps']['config']): Promise<{ app: AppInstance; url: string }> {
  const deps = createDeps(config, t.database, systemClock, () => {});
  const app = await buildApp(deps, { logger: silentLogger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  return { app, url: `http://127.0.0.1:${address.port}` };
}

describe(`rate limits in Redis, shared by every process (${kind})`, () => {
  let t: TestApp;
  let second: { app: AppInstance; url: string };
  let redis: Awaited<ReturnType<typeof redisPrefix>>;
  let workspace: { id: string };

  before(async () => {
    redis = await redisPrefix('rate-limit');
    t = await startTestApp(kind, { config: { rateLimitPerMinute: LIMIT, redisUrl: REDIS_URL, redisKeyPrefix: redis.prefix } });
    second = await secondApp(t, t.deps.config);
    workspace = await t.workspace('pro');
  });
  after(async () => {
    await second?.app.close();
    await t?.close();
    await redis?.cleanup();
  });

  it('shares one quota per key between two processes', async () => {
    const key = await t.key(workspace.id);
    const viaSecond = async () => {
      const res = await fetch(`${second.url}/api/v1/leads`, { headers: { authorization: `Bearer ${key.key}` } });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: JSON.parse(text) } as ApiResponse;
    };
    let remaining = LIMIT;
    for (let i = 0; i < LIMIT; i++) {
      const res = i % 2 === 0 ? await t.api('GET', '/api/v1/leads', { key: key.key }) : await viaSecond();
      assert.equal(res.status, 200, res.text);
      assertPolicy(res);
      remaining -= 1;
      assert.equal(rateLimitOf(res).remaining, remaining, `request ${i + 1}, alternating between the processes`);
    }
    assertRateLimited(await viaSecond(), 'second process');
    assertRateLimited(await t.api('GET', '/api/v1/leads', { key: key.key }), 'first process');
  });

  it('keeps its counters under REDIS_KEY_PREFIX, each expiring with its window', async () => {
    const key = await t.key(workspace.id);
    await t.api('GET', '/api/v1/leads', { key: key.key });
    const keys = await redis.keys();
    const counter = `${redis.prefix}rate-limit:key:${key.id}`;
    assert.ok(keys.includes(counter), `${counter} in ${keys.join(', ')}`);
    const ttl = await redis.redis.pttl(counter);
    assert.ok(ttl > 0 && ttl <= 60_000, `the counter expires with its window (PTTL ${ttl})`);
    for (const k of keys) assert.ok(k.startsWith(redis.prefix), `${k} is under the test's prefix`);
  });

  it('still answers, without limiting, while Redis cannot be reached', async () => {
    const gone = await startTestApp(kind, { config: { rateLimitPerMinute: LIMIT, redisUrl: 'redis://127.0.0.1:9', redisKeyPrefix: redis.prefix } });
    try {
      const ws = await gone.workspace('pro');
      const key = await gone.key(ws.id);
      for (let i = 0; i < LIMIT * 2; i++) {
        const started = performance.now();
        const res = await gone.api('GET', '/api/v1/leads', { key: key.key });
        assert.equal(res.status, 200, res.text);
        assert.ok(performance.now() - started < 2_000, 'answered without waiting for Redis');
      }
    } finally {
      await gone.close();
    }
  });
});

describe('REDIS_KEY_PREFIX', () => {
  it('defaults to leadrun: and refuses a prefix with spaces or over 64 characters, naming the variable', async () => {
    const { ConfigError, loadConfig } = await import('../../src/config.ts');
    assert.equal(loadConfig({}).redisKeyPrefix, 'leadrun:');
    assert.equal(loadConfig({ REDIS_KEY_PREFIX: 'staging:leadrun:' }).redisKeyPrefix, 'staging:leadrun:');
    for (const bad of ['has space', 'x'.repeat(65)]) {
      assert.throws(() => loadConfig({ REDIS_KEY_PREFIX: bad }), (error: unknown) => error instanceof ConfigError && error.variable === 'REDIS_KEY_PREFIX');
    }
  });
});

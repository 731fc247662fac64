// Concurrency across processes, on PostgreSQL: two real `leadrun serve` processes on one database. The Free-plan
// count stays exact under 200 simultaneous starts spread over both; one Idempotency-Key makes one resource however
// many copies race on either process; a key revoked with `leadrun key revoke` stops working on both within 1 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { BACKENDS, createPostgresDatabase, TRANSCRIPT } from '../helpers.ts';
import { leadrunJson, runLeadrun } from '../cli/support.ts';
import { assertProblem } from '../http/support.ts';
import { startServe, type Serve } from './support.ts';

const FREE_RUNS = 37;
const STARTS = 200;

interface Answer { status: number; headers: Headers; json: any; text: string }

async function call(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: any;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json, text };
}

describe('two serve processes on one PostgreSQL database', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let drop: (() => Promise<void>) | null = null;
  let databaseUrl: string;
  let database: Database;
  const servers: Serve[] = [];
  const env = () => ({ DATABASE_URL: databaseUrl });

  before(async () => {
    const created = await createPostgresDatabase();
    drop = created.drop;
    databaseUrl = created.url;
    // 200 starts at once queue for each server's ten connections; on a loaded machine the last waited past the default
    // 5 s and were answered 503. This test is about the plan's limit, so they may wait.
    const settings = { FREE_PLAN_MONTHLY_RUNS: String(FREE_RUNS), RATE_LIMIT_PER_MINUTE: '1000000', DATABASE_POOL_WAIT_SECONDS: '120' };
    // Started together: they migrate the new database in turns, under the migration lock.
    servers.push(...await Promise.all([startServe(databaseUrl, settings, ['--no-worker']), startServe(databaseUrl, settings, ['--no-worker'])]));
    database = await openDatabase({ databaseUrl });
  });

  after(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await database?.close();
    await drop?.();
  });

  async function workspaceWithKey(plan: 'free' | 'pro') {
    const workspace = await leadrunJson(['workspace', 'create', '--name', `Race ${plan}`, '--plan', plan, '--json'], env());
    const key = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'race', '--scopes', 'leads:read,leads:write,runs:read,runs:write', '--json'], env());
    const lead = await call(servers[0]!.url, 'POST', '/api/v1/leads', key.key, { name: 'Ada' });
    assert.equal(lead.status, 201, lead.text);
    const callRes = await call(servers[1]!.url, 'POST', `/api/v1/leads/${lead.json.id}/calls`, key.key, { transcript: TRANSCRIPT });
    assert.equal(callRes.status, 201, callRes.text);
    return { workspace, key, body: { leadId: lead.json.id as string, callId: callRes.json.id as string } };
  }

  it(`lets exactly ${FREE_RUNS} of ${STARTS} simultaneous starts on two processes through, and refuses the rest with 402`, async () => {
    const { workspace, key, body } = await workspaceWithKey('free');
    const answers = await Promise.all(Array.from({ length: STARTS }, (_, i) => call(servers[i % 2]!.url, 'POST', '/api/v1/runs', key.key, body)));
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status === 402);
    assert.deepEqual(answers.filter((a) => a.status !== 202 && a.status !== 402).map((a) => `${a.status} ${a.text.slice(0, 200)}`), [], 'only 202 and 402');
    assert.equal(accepted.length, FREE_RUNS);
    assert.equal(refused.length, STARTS - FREE_RUNS);
    for (const answer of refused) {
      assertProblem({ ...answer }, 402, 'run_limit_reached');
      assert.equal(answer.json.limit, FREE_RUNS);
      assert.equal(answer.json.used, FREE_RUNS);
    }
    assert.equal(new Set(accepted.map((a) => a.json.id)).size, FREE_RUNS, 'every accepted start is its own run');
    const runs = await database.db.selectFrom('runs').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspace.id).executeTakeFirstOrThrow();
    assert.equal(Number(runs.n), FREE_RUNS, 'runs in the database');
    const usage = await database.db.selectFrom('run_usage').select('runs').where('workspace_id', '=', workspace.id).execute();
    assert.deepEqual(usage.map((u) => u.runs), [FREE_RUNS], 'the month\'s count');
    const steps = await sql<{ n: string }>`SELECT count(*) AS n FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE r.workspace_id = ${workspace.id}`.execute(database.db);
    assert.equal(Number(steps.rows[0]!.n), FREE_RUNS * 4, 'four steps per run, none for a refused start');
    const audits = await database.db.selectFrom('audit_log').select(['outcome', 'status']).where('workspace_id', '=', workspace.id).where('action', '=', 'run.created').execute();
    assert.equal(audits.length, STARTS, 'one audit entry per start');
    assert.equal(audits.filter((e) => e.outcome === 'success').length, FREE_RUNS);
  });

  it('makes one resource of one Idempotency-Key, however many copies race on either process', async () => {
    const { workspace, key, body } = await workspaceWithKey('pro');
    const headers = { 'idempotency-key': `race-${workspace.id}` };
    const copies = await Promise.all(Array.from({ length: 40 }, (_, i) => call(servers[i % 2]!.url, 'POST', '/api/v1/runs', key.key, body, headers)));
    const created = copies.filter((a) => a.status === 202 && a.headers.get('idempotent-replayed') === null);
    const replayed = copies.filter((a) => a.status === 202 && a.headers.get('idempotent-replayed') === 'true');
    const inFlight = copies.filter((a) => a.status === 409);
    assert.equal(created.length, 1, `one copy creates: ${copies.map((a) => a.status).join(',')}`);
    assert.equal(created.length + replayed.length + inFlight.length, copies.length, 'every other copy is a replay or 409 while the first is in flight');
    for (const answer of inFlight) assertProblem({ ...answer }, 409, 'idempotency_conflict');
    const id = created[0]!.json.id;
    for (const answer of replayed) assert.equal(answer.json.id, id, 'a replay answers the same run');
    // Once settled, every process replays it.
    for (const server of servers) {
      const again = await call(server.url, 'POST', '/api/v1/runs', key.key, body, headers);
      assert.equal(again.status, 202);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.json.id, id);
    }
    // The same key with another body, on both processes at once: refused, and still one run.
    const other = await workspaceWithKey('pro');
    const mixed = await Promise.all(servers.map((s) => call(s.url, 'POST', '/api/v1/runs', key.key, { ...body, callId: other.body.callId }, headers)));
    for (const answer of mixed) assertProblem({ ...answer }, 422, 'idempotency_key_reused');
    const runs = await database.db.selectFrom('runs').select('id').where('workspace_id', '=', workspace.id).execute();
    assert.deepEqual(runs.map((r) => r.id), [id], 'exactly one run');
  });

  it('stops a key revoked with `leadrun key revoke` on both processes within one second', async () => {
    const { key } = await workspaceWithKey('pro');
    // Both processes have the key in their cache, fresh.
    for (const server of servers) for (let i = 0; i < 3; i++) assert.equal((await call(server.url, 'GET', '/api/v1/leads', key.key)).status, 200);
    const revoke = await runLeadrun(['key', 'revoke', key.id], env());
    assert.equal(revoke.code, 0, revoke.stderr);
    const revokedAt = performance.now();
    // Each process is asked until it refuses the key. A request sent more than a second after the revocation must be
    // refused; its answer may take longer to arrive on a loaded machine, which is not the process's delay.
    await Promise.all(servers.map(async (server, i) => {
      for (;;) {
        const sentAfter = performance.now() - revokedAt;
        const res = await call(server.url, 'GET', '/api/v1/leads', key.key);
        if (res.status === 401) return assertProblem({ ...res }, 401, 'unauthorized');
        assert.equal(res.status, 200, res.text);
        assert.ok(sentAfter <= 1_000, `process ${i + 1} took the revoked key in a request sent ${sentAfter.toFixed(0)} ms after the revocation`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }));
    // And it stays refused.
    for (const server of servers) assertProblem({ ...(await call(server.url, 'POST', '/api/v1/leads', key.key, { name: 'x' })) }, 401, 'unauthorized');
  });
});

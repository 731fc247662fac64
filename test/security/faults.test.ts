// Faults, on a PostgreSQL cluster of this test's own (never the shared server): the database stopped and started
// under load — requests in the outage get 503 unavailable with Retry-After, the service recovers without a
// restart, and every run accepted before or after completes; and SIGTERM — the request in flight finishes, the
// worker hands its runs back, nothing is half-written, and another process finishes the runs.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { BACKENDS } from '../helpers.ts';
import { leadrunJson } from '../cli/support.ts';
import { assertProblem } from '../http/support.ts';
import { createPrivateCluster, eventually, startServe, startSlowSite, type PrivateCluster, type Serve } from './support.ts';

interface Answer { status: number; headers: Headers; json: any; text: string }

async function call(base: string, method: string, path: string, key: string | null, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json: any;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json, text };
}

const SCOPES = 'leads:read,leads:write,runs:read,runs:write';

describe('faults', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let cluster: PrivateCluster;
  const servers: Serve[] = [];

  before(async () => {
    cluster = await createPrivateCluster();
  });
  after(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await cluster?.remove();
  });

  async function setUp(databaseUrl: string, base: string, website: string | null = null) {
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Faults', '--plan', 'pro', '--json'], { DATABASE_URL: databaseUrl });
    const key = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'faults', '--scopes', SCOPES, '--json'], { DATABASE_URL: databaseUrl });
    const lead = await call(base, 'POST', '/api/v1/leads', key.key, { name: 'Ada', ...(website ? { companyWebsite: website } : {}) });
    assert.equal(lead.status, 201, lead.text);
    const made = await call(base, 'POST', `/api/v1/leads/${lead.json.id}/calls`, key.key, { transcript: 'Ada: Our reporting takes four days.\nAda: Budget is approved for Q3.' });
    assert.equal(made.status, 201, made.text);
    return { key: key.key as string, body: { leadId: lead.json.id as string, callId: made.json.id as string } };
  }

  it('answers 503 unavailable with Retry-After while PostgreSQL is down, recovers without a restart, and completes every accepted run', async (c) => {
    const server = await startServe(cluster.url, { RATE_LIMIT_PER_MINUTE: '1000000', STEP_RETRY_BASE_MS: '50', RUN_LEASE_SECONDS: '2', WORKER_CONCURRENCY: '4' });
    servers.push(server);
    const { key, body } = await setUp(cluster.url, server.url);

    // The phase a request started in; 'stopping' and 'starting' cover requests that overlap a change.
    let phase: 'before' | 'stopping' | 'outage' | 'starting' | 'after' = 'before';
    let stop = false;
    const accepted = new Map<string, string>();
    const answers: Array<{ phase: string; answer: Answer | Error }> = [];
    // accepted: run id → the phase its start was answered in
    const client = async () => {
      while (!stop) {
        for (const [method, path, sent] of [['POST', '/api/v1/runs', body], ['GET', '/api/v1/runs?limit=5', undefined]] as const) {
          const started = phase;
          try {
            const answer = await call(server.url, method, path, key, sent);
            // A request that began before a change and ended after it counts as overlapping the change.
            const at = started === phase ? started : `${started}→${phase}`;
            answers.push({ phase: at, answer });
            if (method === 'POST' && answer.status === 202) accepted.set(answer.json.id, at);
          } catch (error) {
            answers.push({ phase: started, answer: error as Error });
          }
        }
        if (phase === 'outage') await new Promise((resolve) => setTimeout(resolve, 5)); // no tight loop on instant refusals
      }
    };
    const summary = () => {
      const counts = new Map<string, number>();
      for (const { phase: p, answer } of answers) {
        const k = `${p} ${answer instanceof Error ? answer.message : answer.status}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      return [...counts].map(([k, n]) => `${k}×${n}`).join(', ');
    };
    const load = Array.from({ length: 6 }, () => client());
    try {
      await eventually(async () => accepted.size >= 10, 'ten runs accepted before the outage', 30_000);
      const pid = server.process.pid;

      phase = 'stopping';
      await cluster.stop();
      phase = 'outage';
      await eventually(async () => answers.filter((a) => a.phase === 'outage' && !(a.answer instanceof Error) && a.answer.status === 503).length >= 10, 'ten 503 answers in the outage', 30_000)
        .catch((error: Error) => { throw new Error(`${error.message}; answers so far: ${summary()}\n${server.process.output().slice(-3000)}`); });
      const ready = await call(server.url, 'GET', '/readyz', null);
      assertProblem({ ...ready }, 503, 'unavailable', '/readyz in the outage');
      const health = await call(server.url, 'GET', '/healthz', null);
      assert.equal(health.status, 200, 'the process is alive');

      phase = 'starting';
      await cluster.start();
      await eventually(async () => (await call(server.url, 'GET', '/readyz', null)).status === 200, '/readyz after PostgreSQL is back', 30_000);
      phase = 'after';
      const acceptedBefore = [...accepted.values()].filter((p) => p === 'after').length;
      await eventually(async () => [...accepted.values()].filter((p) => p === 'after').length >= acceptedBefore + 10, 'ten runs accepted after the outage', 30_000);
      assert.equal(server.process.pid, pid);
      server.process.assertAlive();
    } finally {
      stop = true;
      await Promise.all(load);
    }

    const errors = answers.filter((a) => a.answer instanceof Error).map((a) => `${a.phase}: ${(a.answer as Error).message}`);
    assert.deepEqual(errors, [], 'every request was answered');
    const byStatus = new Map<string, number>();
    for (const { phase: p, answer } of answers) {
      const a = answer as Answer;
      byStatus.set(`${p} ${a.status}`, (byStatus.get(`${p} ${a.status}`) ?? 0) + 1);
      assert.ok([200, 202, 503].includes(a.status), `${p}: ${a.status} ${a.text.slice(0, 300)}`);
      if (a.status === 503) {
        assertProblem({ ...a }, 503, 'unavailable', p);
        assert.match(a.headers.get('retry-after') ?? '', /^\d+$/, 'Retry-After');
      }
    }
    c.diagnostic(`answers: ${[...byStatus].map(([k, n]) => `${k}×${n}`).join(', ')}; ${accepted.size} runs accepted`);
    // Only a request that overlapped the outage may be refused; one wholly before or after it never is.
    for (const p of ['before', 'after']) {
      assert.equal(answers.filter((a) => a.phase === p && (a.answer as Answer).status === 503).length, 0, `no 503 ${p} the outage`);
    }

    // Every run accepted, before or after, is worked to the end and can be approved.
    const database = await openDatabase({ databaseUrl: cluster.url });
    try {
      const ids = [...accepted.keys()];
      await eventually(async () => {
        const rows = await database.db.selectFrom('runs').select(['id', 'status']).where('id', 'in', ids).execute();
        const notDone = rows.filter((r) => r.status !== 'AWAITING_APPROVAL');
        assert.deepEqual(rows.filter((r) => ['FAILED', 'CANCELLED', 'REJECTED'].includes(r.status)).map((r) => `${r.id} ${r.status}`), [], 'no accepted run failed');
        return rows.length === ids.length && notDone.length === 0;
      }, `all ${ids.length} accepted runs awaiting approval`, 90_000, 100);
      const steps = await database.db.selectFrom('run_steps').select(['run_id', 'status']).where('run_id', 'in', ids).execute();
      assert.ok(steps.every((s) => s.status === 'COMPLETED') && steps.length === ids.length * 4, 'four completed steps each');
      const drafts = await database.db.selectFrom('email_drafts').select('run_id').where('run_id', 'in', ids).execute();
      assert.equal(drafts.length, ids.length, 'one draft each');
      for (const id of ids) {
        const approved = await call(server.url, 'POST', `/api/v1/runs/${id}/approve`, key, {});
        assert.equal(approved.status, 200, approved.text);
        assert.equal(approved.json.data.status, 'COMPLETED');
      }
    } finally {
      await database.close();
      // Its worker must not take the next test's runs.
      await server.stop();
    }
  });

  it('drains on SIGTERM: the request in flight finishes, the worker hands its runs back, nothing is half-written', async () => {
    const site = await startSlowSite(4_000);
    let database: Database | null = null;
    try {
      const server = await startServe(cluster.url, { LOG_LEVEL: 'info', RESEARCH_ALLOW_PRIVATE_HOSTS: 'true', WORKER_CONCURRENCY: '4', RUN_LEASE_SECONDS: '30' });
      servers.push(server);
      const { key, body } = await setUp(cluster.url, server.url, site.url);
      database = await openDatabase({ databaseUrl: cluster.url });
      const db = database.db;
      const runs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const started = await call(server.url, 'POST', '/api/v1/runs', key, body);
        assert.equal(started.status, 202, started.text);
        runs.push(started.json.id);
      }
      // The worker is in the middle of RESEARCH for every run (each page of the site takes 4 s).
      await eventually(async () => {
        const researching = await db.selectFrom('run_steps').select('run_id').where('run_id', 'in', runs).where('node', '=', 'RESEARCH').where('status', '=', 'RUNNING').execute();
        return researching.length === runs.length;
      }, 'the worker researching every run', 20_000).catch(async (error: Error) => {
        const steps = await db.selectFrom('run_steps').select(['run_id', 'node', 'status', 'attempts', 'error']).where('run_id', 'in', runs).execute();
        throw new Error(`${error.message}: ${JSON.stringify(steps)}\n${server.process.output().slice(-3000)}`);
      });

      // A request in flight: its headers and half its body are in when SIGTERM arrives.
      const url = new URL(server.url);
      const payload = JSON.stringify({ name: 'Sent across the shutdown', companyName: 'Drain Ltd' });
      const inFlightRequest: { req?: http.ClientRequest } = {};
      const inFlight = new Promise<Answer>((resolve, reject) => {
        const req = http.request({
          host: url.hostname, port: url.port, method: 'POST', path: '/api/v1/leads',
          // 100-continue: the server answers "continue" once it has taken the request in, which is the moment to wait for.
          headers: {
            authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)),
            expect: '100-continue',
          },
        }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => { text += d; }).on('end', () => {
            resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), json: JSON.parse(text), text });
          });
        });
        req.on('error', reject);
        req.on('continue', () => {
          req.write(payload.slice(0, 20));
          inFlightRequest.req = req;
        });
        req.flushHeaders();
      });
      await eventually(async () => (inFlightRequest.req?.socket?.bytesWritten ?? 0) > 0, 'the server to take the request in, and the first half of the body sent');

      server.process.child.kill('SIGTERM');
      await eventually(async () => server.process.output().includes('shutting down'), 'the server to start shutting down');
      // New connections are refused while it drains.
      await eventually(async () => {
        try {
          await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
          return false;
        } catch {
          return true;
        }
      }, 'new connections refused', 5_000);
      inFlightRequest.req!.end(payload.slice(20));
      const answer = await inFlight;
      assert.equal(answer.status, 201, answer.text);
      await server.process.exited;
      assert.equal(server.process.code, 0, server.process.output().slice(-2000));

      const lead = await db.selectFrom('leads').select(['name']).where('id', '=', answer.json.id).executeTakeFirst();
      assert.equal(lead?.name, 'Sent across the shutdown', 'the request in flight was written');
      const audit = await db.selectFrom('audit_log').select('outcome').where('request_id', '=', answer.headers.get('x-request-id')!).execute();
      assert.deepEqual(audit.map((a) => a.outcome), ['success'], 'with its audit entry');

      // Handed back: no run is held by the stopped worker; nothing is half-written.
      const held = await db.selectFrom('runs').select(['id', 'status', 'lease_owner']).where('id', 'in', runs).execute();
      for (const run of held) {
        assert.equal(run.lease_owner, null, `run ${run.id} (${run.status}) was handed back`);
        assert.ok(['RUNNING', 'QUEUED', 'AWAITING_APPROVAL'].includes(run.status), `run ${run.id} is ${run.status}`);
      }
      const steps = await db.selectFrom('run_steps').selectAll().where('run_id', 'in', runs).execute();
      for (const step of steps) {
        assert.equal(step.output !== null, step.status === 'COMPLETED', `${step.run_id} ${step.node}: output exactly when COMPLETED`);
      }
      const drafts = await db.selectFrom('email_drafts').select('run_id').where('run_id', 'in', runs).execute();
      const writers = steps.filter((s) => s.node === 'WRITER' && s.status === 'COMPLETED');
      assert.equal(drafts.length, writers.length, 'a draft exactly for each completed WRITER');

      // Another process takes the runs over at once and finishes them.
      site.delayMs = 0;
      const next = await startServe(cluster.url, { RESEARCH_ALLOW_PRIVATE_HOSTS: 'true', WORKER_CONCURRENCY: '4' });
      servers.push(next);
      await eventually(async () => {
        const rows = await db.selectFrom('runs').select('status').where('id', 'in', runs).execute();
        return rows.every((r) => r.status === 'AWAITING_APPROVAL');
      }, 'every run finished by the next process', 60_000, 100);
      const done = await db.selectFrom('run_steps').select(['status']).where('run_id', 'in', runs).execute();
      assert.ok(done.every((s) => s.status === 'COMPLETED'));
      assert.equal((await db.selectFrom('email_drafts').select('id').where('run_id', 'in', runs).execute()).length, runs.length, 'one draft per run');
    } finally {
      await database?.close();
      await site.close();
    }
  });
});

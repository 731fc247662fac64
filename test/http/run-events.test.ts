// GET /api/v1/runs/{id}/events: the run's event log as JSON, and live as Server-Sent Events until the run rests.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { runAdminCommand } from '../../src/admin/commands.ts';
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { recordEvent, RUN_EVENTS_CHANNEL } from '../../src/domain/runs/lifecycle.ts';
import { createSession, endSession } from '../../src/domain/members/sessions.ts';
import { buildApp, createDeps } from '../../src/http/app.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { CREDENTIAL_CHECK_MS } from '../../src/http/run-event-hub.ts';
import { STREAMS_PER_HOLDER } from '../../src/http/stream-slots.ts';
import { ALL_SCOPES, BACKENDS, createTestDatabase, silentLogger, startTestApp, testConfig, waitForRun, type TestApp } from '../helpers.ts';
import { eventually, redisPrefix, REDIS_URL } from '../security/support.ts';
import { asApiResponse, rawRequest } from '../support/http.ts';
import { assertProblem, createCall, createLead, startRun } from './support.ts';

interface SseMessage {
  id: string | null;
  event: string;
  data: any;
}

/** Reads a text/event-stream response message by message. */
async function* readSse(res: Response): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n').filter((l) => !l.startsWith(':'));
      if (lines.length === 0) continue;
      const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? null;
      yield { id: field('id'), event: field('event') ?? 'message', data: JSON.parse(field('data') ?? 'null') };
    }
  }
}

/** A stream read in the background: `seen` fills as messages arrive; `ended` settles when the server ends it. */
interface Followed {
  seen: SseMessage[];
  ended: Promise<void>;
  /** Resolves once a message that satisfies `test` has arrived. */
  until(test: (m: SseMessage) => boolean): Promise<SseMessage>;
  abort(): void;
}

function followStream(res: Response, controller = new AbortController()): Followed {
  const seen: SseMessage[] = [];
  const waiting: Array<{ test: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }> = [];
  const ended = (async () => {
    try {
      for await (const m of readSse(res)) {
        seen.push(m);
        for (const w of [...waiting]) if (w.test(m)) { waiting.splice(waiting.indexOf(w), 1); w.resolve(m); }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return {
    seen,
    ended,
    until: (test) => {
      const found = seen.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiting.push({ test, resolve });
        ended.then(() => reject(new Error(`the stream ended before the message awaited (saw ${seen.map((m) => m.event).join(', ')})`)), reject);
      });
    },
    abort: () => controller.abort(),
  };
}

/** `promise`, or a failure naming `what` after `ms`: a bound on a wait, so that a broken build fails instead of hanging. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const isQueued = (m: SseMessage) => m.event === 'run.queued';

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let key: string;
    let otherKey: string;
    let lead: any;
    let call: any;

    before(async () => {
      t = await startTestApp(kind);
      A = await t.workspace('pro');
      const B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      otherKey = (await t.key(B.id)).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines' });
      call = await createCall(t, key, lead.id);
    });
    after(() => t?.close());

    const stream = (runId: string, headers: Record<string, string> = {}, k = key, signal?: AbortSignal) =>
      fetch(`${t.url}/api/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream', ...headers }, signal });
    /** Opens a stream with key `k` (200 expected) and reads it in the background. */
    const openStream = async (runId: string, k = key) => {
      const controller = new AbortController();
      const res = await stream(runId, {}, k, controller.signal);
      assert.equal(res.status, 200, await (res.status === 200 ? '' : res.text()));
      return followStream(res, controller);
    };

    it('streams a queued run live, step by step, and ends once it awaits approval', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      const res = await stream(run.id);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(res.headers.get('x-request-id'));
      const seen: SseMessage[] = [];
      let worker: Awaited<ReturnType<TestApp['startWorker']>> | null = null;
      for await (const message of readSse(res)) {
        seen.push(message);
        // Only once the stream has shown the queued run does a worker start: what follows arrives live.
        if (message.event === 'run.queued') worker = await t.startWorker();
      }
      await worker?.stop();
      const types = seen.map((m) => m.event);
      assert.deepEqual(types, [
        'run.queued',
        'step.started', 'step.completed', 'step.started', 'step.completed',
        'step.started', 'step.completed', 'step.started', 'step.completed',
        'run.awaiting_approval', 'end',
      ]);
      assert.deepEqual(seen.filter((m) => m.event === 'step.completed').map((m) => m.data.node), ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER']);
      for (const m of seen.filter((x) => x.event === 'step.completed')) {
        assert.equal(m.data.attempt, 1);
        assert.equal(m.data.engine, 'offline');
        assert.equal(typeof m.data.durationMs, 'number');
        assert.equal(m.id, String(m.data.id));
      }
      const ids = seen.filter((m) => m.id).map((m) => Number(m.id));
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids increase');
      assert.deepEqual(seen.at(-1)?.data, { status: 'AWAITING_APPROVAL' });
    });

    it("notifies of a run's steps only while a stream follows it, and counts the stream out when it ends", async () => {
      const heard: string[] = [];
      const unlisten = await t.database.listen(RUN_EVENTS_CHANNEL, (runId) => { heard.push(runId); });
      const followers = async (runId: string) =>
        (await t.database.db.selectFrom('runs').select('followers').where('id', '=', runId).executeTakeFirstOrThrow()).followers;
      try {
        const unfollowed = await startRun(t, key, lead.id, call.id);
        let worker = await t.startWorker();
        await waitForRun(t, key, unfollowed.id, (r) => r.status === 'AWAITING_APPROVAL');
        await worker.stop();

        const followed = await startRun(t, key, lead.id, call.id);
        const stream = await openStream(followed.id);
        await stream.until(isQueued);
        assert.equal(await followers(followed.id), 1, 'the stream counted in before its first read');
        worker = await t.startWorker();
        await within(stream.ended, 10_000, 'the stream ends once the run awaits approval');
        await worker.stop();
        assert.deepEqual(stream.seen.map((m) => m.event).slice(-2), ['run.awaiting_approval', 'end']);
        // Notices arrive in commit order: once the followed run's last one is heard, any of the first run would have been.
        // Five commits: the first step's start, three completions that each start the next step, WRITER's completion.
        await eventually(async () => heard.filter((id) => id === followed.id).length === 5, 'the followed run\'s five step notices');
        assert.equal(heard.filter((id) => id === unfollowed.id).length, 0, 'no notice for a run nobody follows');
        await eventually(async () => (await followers(followed.id)) === 0, 'the ended stream to count itself out');
        assert.equal(await followers(unfollowed.id), 0);
      } finally {
        await unlisten();
      }
    });

    it('lists the same events as JSON, and resumes after Last-Event-ID or ?after=', async () => {
      const worker = await t.startWorker();
      const run = await startRun(t, key, lead.id, call.id);
      await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      await worker.stop();
      const all = await t.api('GET', `/api/v1/runs/${run.id}/events`, { key });
      assert.equal(all.status, 200, all.text);
      assert.equal(all.json.data.length, 10);
      assert.deepEqual(Object.keys(all.json.data[0]).sort(), ['at', 'attempt', 'deferred', 'durationMs', 'engine', 'error', 'id', 'model', 'node', 'type', 'usage']);
      const fifth = all.json.data[4].id;
      const later = await t.api('GET', `/api/v1/runs/${run.id}/events?after=${fifth}`, { key });
      assert.deepEqual(later.json.data, all.json.data.slice(5));
      const resumed: SseMessage[] = [];
      for await (const m of readSse(await stream(run.id, { 'last-event-id': String(fifth) }))) resumed.push(m);
      assert.deepEqual(resumed.filter((m) => m.id).map((m) => Number(m.id)), all.json.data.slice(5).map((e: any) => e.id));
      assert.equal(resumed.at(-1)?.event, 'end');
    });

    it('answers 404 for an unknown, malformed or foreign run, as JSON and as a stream', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      assertProblem(await t.api('GET', `/api/v1/runs/${randomUUID()}/events`, { key }), 404, 'not_found');
      assertProblem(await t.api('GET', '/api/v1/runs/nope/events', { key }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: otherKey }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: otherKey, headers: { accept: 'text/event-stream' } }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events?after=-1`, { key }), 400, 'invalid_request');
    });

    it('ends open streams promptly when the server shuts down', async () => {
      const own = await startTestApp(kind);
      try {
        const A = await own.workspace('pro');
        const k = (await own.key(A.id)).key;
        const l = await createLead(own, k);
        const c = await createCall(own, k, l.id);
        const run = await startRun(own, k, l.id, c.id); // no worker: the run stays QUEUED and the stream stays open
        const res = await fetch(`${own.url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' } });
        const messages = readSse(res);
        assert.equal((await messages.next()).value?.event, 'run.queued');
        const began = performance.now();
        const closing = own.app.close();
        for await (const _ of messages) { /* drain until the server ends the stream */ }
        await closing;
        assert.ok(performance.now() - began < 5_000, 'the stream did not hold the shutdown');
      } finally {
        await own.close().catch(() => {});
      }
    });

    it("numbers each run's events 1, 2, 3… on its own, whatever other runs and workspaces do", async () => {
      const B = await t.workspace('pro');
      const keyB = (await t.key(B.id)).key;
      const leadB = await createLead(t, keyB);
      const callB = await createCall(t, keyB, leadB.id);
      const worker = await t.startWorker();
      // Two workspaces' runs at once: their events interleave in the table.
      const [runA, runB] = await Promise.all([startRun(t, key, lead.id, call.id), startRun(t, keyB, leadB.id, callB.id)]);
      await Promise.all([
        waitForRun(t, key, runA.id, (r) => r.status === 'AWAITING_APPROVAL'),
        waitForRun(t, keyB, runB.id, (r) => r.status === 'AWAITING_APPROVAL'),
      ]);
      await worker.stop();
      const one_to_ten = Array.from({ length: 10 }, (_, i) => i + 1);
      for (const [runId, k] of [[runA.id, key], [runB.id, keyB]] as const) {
        const all = await t.api('GET', `/api/v1/runs/${runId}/events`, { key: k });
        assert.deepEqual(all.json.data.map((e: any) => e.id), one_to_ten, 'the JSON answer numbers the run on its own');
        const streamed: SseMessage[] = [];
        for await (const m of readSse(await stream(runId, {}, k))) streamed.push(m);
        assert.deepEqual(streamed.filter((m) => m.id).map((m) => Number(m.id)), one_to_ten, 'the SSE ids are the same numbers');
        const resumed: SseMessage[] = [];
        for await (const m of readSse(await stream(runId, { 'last-event-id': '7' }, k))) resumed.push(m);
        assert.deepEqual(resumed.filter((m) => m.id).map((m) => Number(m.id)), [8, 9, 10], 'Last-Event-ID is a number of this run');
        const later = await t.api('GET', `/api/v1/runs/${runId}/events?after=9`, { key: k });
        assert.deepEqual(later.json.data.map((e: any) => e.id), [10], '?after= is a number of this run');
      }
    });

    it("ends a stream within a second of its key's revocation, whether or not this process hears of it", async () => {
      const run = await startRun(t, key, lead.id, call.id); // no worker: the run stays QUEUED and its streams open
      const revocations: Array<[string, (keyId: string) => Promise<void>]> = [
        // `leadrun key revoke`: the revocation commits and is announced to every process.
        ['announced', (keyId) => t.revoke(keyId)],
        // Another process whose notice never arrives (a LISTEN connection that dropped): only the database knows.
        ['silent', async (keyId) => { await t.database.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute(); }],
      ];
      for (const [how, revoke] of revocations) {
        const k = await t.key(A.id);
        const followed = await openStream(run.id, k.key);
        await followed.until(isQueued);
        await revoke(k.id);
        // Judged by what happens, not by the clock: the run stays QUEUED, so nothing but the revocation ends the
        // stream, and the silent one only by the periodic check (every CREDENTIAL_CHECK_MS, asserted below).
        await within(followed.ended, 30_000, `${how} revocation ends the stream`);
        assert.ok(!followed.seen.some((m) => m.event === 'end'), 'no `end` event: the run has not come to rest');
        if (how === 'announced') {
          assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: k.key, headers: { accept: 'text/event-stream' } }), 401, 'unauthorized');
        }
      }
    });

    it('ends a stream the web UI opened with a session within a second of signing out', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      const { token } = await createSession(t.database.db, A.adminUserId, systemClock, { ip: '127.0.0.1', userAgent: 'test' });
      const res = await fetch(`${t.url}/api/v1/runs/${run.id}/events`, { headers: { cookie: `${SESSION_COOKIE}=${token}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      const followed = followStream(res);
      await followed.until(isQueued);
      await endSession(t.database.db, token, systemClock);
      await within(followed.ended, 30_000, 'signing out ends the stream');
    });

    it('checks the credentials of open streams four times a second, so that a stream ends within a second of its revocation', () => {
      assert.ok(CREDENTIAL_CHECK_MS <= 250, `every ${CREDENTIAL_CHECK_MS} ms`);
    });

    it(`lets a key hold at most ${STREAMS_PER_HOLDER} open streams: the next is 429 rate_limited with Retry-After until one ends`, async () => {
      const k = await t.key(A.id);
      const run = await startRun(t, key, lead.id, call.id);
      const open: Followed[] = [];
      for (let i = 0; i < STREAMS_PER_HOLDER; i++) {
        const followed = await openStream(run.id, k.key);
        await followed.until(isQueued);
        open.push(followed);
      }
      // A raw request: were it admitted, its stream would not be read to an end that never comes.
      const refused = asApiResponse(await rawRequest(t.url, 'GET', `/api/v1/runs/${run.id}/events`, {
        headers: { authorization: `Bearer ${k.key}`, accept: 'text/event-stream' },
      }));
      assertProblem(refused, 429, 'rate_limited');
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in seconds');
      assert.match(refused.json.detail, new RegExp(`${STREAMS_PER_HOLDER} open event streams`));
      // The JSON answer holds no stream: it is still answered.
      assert.equal((await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: k.key })).status, 200);
      // Another key of the workspace has places of its own.
      const others = await openStream(run.id);
      await others.until(isQueued);

      // A client that goes away gives its place back.
      open.shift()!.abort();
      await eventually(async () => (await rawRequest(t.url, 'GET', `/api/v1/runs/${run.id}/events`, {
        headers: { authorization: `Bearer ${k.key}`, accept: 'text/event-stream' },
      })).status === 200, 'a place freed by a client that left');

      // Streams that end with their run give theirs back before the client sees the end.
      assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/cancel`, { key })).status, 200);
      await Promise.all([...open, others].map((f) => within(f.ended, 5_000, 'the cancelled run ends its streams')));
      for (const f of open) assert.deepEqual(f.seen.at(-1), { id: null, event: 'end', data: { status: 'CANCELLED' } });
      const again = await Promise.all(Array.from({ length: STREAMS_PER_HOLDER }, () => stream(run.id, {}, k.key)));
      assert.deepEqual(again.map((r) => r.status), Array(STREAMS_PER_HOLDER).fill(200));
      await Promise.all(again.map((r) => r.text()));
    });

    it('counts opening a stream as one request of its key, as every request', async () => {
      const own = await startTestApp(kind, { config: { rateLimitPerMinute: 3 } });
      try {
        const W = await own.workspace('pro');
        const setup = (await own.key(W.id)).key;
        const l = await createLead(own, setup);
        const c = await createCall(own, setup, l.id);
        const run = await startRun(own, setup, l.id, c.id);
        const k = (await own.key(W.id)).key;
        const open = (signal?: AbortSignal) =>
          fetch(`${own.url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' }, signal });
        const controllers = [new AbortController(), new AbortController()];
        const first = await open(controllers[0]!.signal);
        assert.equal(first.status, 200);
        assert.match(first.headers.get('ratelimit') ?? '', /^"default";r=2;/, 'the stream was counted');
        const second = await open(controllers[1]!.signal);
        assert.equal(second.status, 200);
        assert.match(second.headers.get('ratelimit') ?? '', /^"default";r=1;/);
        const streams = [followStream(first, controllers[0]), followStream(second, controllers[1])];
        await Promise.all(streams.map((f) => f.until(isQueued)));
        assert.equal((await own.api('GET', `/api/v1/runs/${run.id}`, { key: k })).status, 200);
        // With its minute spent, two streams still open, the key gets nothing more: no request, no further stream.
        assertProblem(await own.api('GET', `/api/v1/runs/${run.id}`, { key: k }), 429, 'rate_limited');
        const third = await own.api('GET', `/api/v1/runs/${run.id}/events`, { key: k, headers: { accept: 'text/event-stream' } });
        assertProblem(third, 429, 'rate_limited');
        assert.match(third.json.detail, /a minute/);
        for (const f of streams) f.abort();
        await Promise.all(streams.map((f) => f.ended));
      } finally {
        await own.close();
      }
    });

    it('reads a run once for each change, however many streams follow it', async () => {
      const testDb = await createTestDatabase(kind);
      let reads = 0;
      // Counts the statements of the app that touch the event log.
      const counter: KyselyPlugin = {
        transformQuery: (args) => {
          if (JSON.stringify(args.node).includes('run_events')) reads += 1;
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      const database = { ...testDb.database, db: testDb.database.db.withPlugin(counter) };
      const deps = createDeps(testConfig(), database, systemClock, () => {});
      const app = await buildApp(deps, { logger: silentLogger });
      const streams: Followed[] = [];
      try {
        await app.listen({ port: 0, host: '127.0.0.1' });
        const address = app.server.address();
        const url = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
        const admin = { db: testDb.database.db, clock: systemClock, migrate: () => testDb.database.migrate() };
        const W = await runAdminCommand(admin, { command: 'workspace.create', name: 'Crowd', plan: 'pro', adminEmail: `crowd-${randomUUID()}@example.com` }) as { id: string };
        const keys = await Promise.all([1, 2, 3].map(async () =>
          (await runAdminCommand(admin, { command: 'key.create', workspace: W.id, name: 'crowd', scopes: ALL_SCOPES }) as { key: string }).key));
        const post = async (path: string, body: unknown) => {
          const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
          assert.ok(res.ok, await res.clone().text());
          return res.json() as Promise<any>;
        };
        const l = await post('/api/v1/leads', { name: 'Crowded Lead' });
        const c = await post(`/api/v1/leads/${l.id}/calls`, { transcript: 'Rep: Hello.' });
        const run = await post('/api/v1/runs', { leadId: l.id, callId: c.id });
        for (const k of keys) {
          for (let i = 0; i < 4; i++) {
            const controller = new AbortController();
            const res = await fetch(`${url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' }, signal: controller.signal });
            assert.equal(res.status, 200);
            streams.push(followStream(res, controller));
          }
        }
        await Promise.all(streams.map((f) => f.until(isQueued)));

        reads = 0;
        await recordEvent(testDb.database.db, { runId: run.id, workspaceId: W.id, type: 'step.started', node: 'RESEARCH', attempt: 1, at: new Date() });
        await Promise.all(streams.map((f) => within(f.until((m) => m.event === 'step.started'), 5_000, 'every stream gets the event')));
        assert.equal(reads, 1, `${streams.length} streams of one run cost one read of its log for one change`);
      } finally {
        for (const f of streams) f.abort();
        await Promise.all(streams.map((f) => f.ended.catch(() => {})));
        await app.close();
        await testDb.drop();
      }
    });
  });
}

describe('stream places shared through Redis (postgres)', { skip: !BACKENDS.includes('postgres') }, () => {
  it(`counts a key's open streams across processes: ${STREAMS_PER_HOLDER} on one, and the next on another is 429`, async () => {
    const redis = await redisPrefix('streams');
    const config = { redisUrl: REDIS_URL, redisKeyPrefix: redis.prefix };
    const t = await startTestApp('postgres', { config });
    // A second process on the same database and the same Redis.
    const database = await openDatabase({ databaseUrl: t.databaseUrl });
    const second = await buildApp(createDeps(testConfig(config), database, systemClock, () => {}), { logger: silentLogger });
    const streams: Followed[] = [];
    try {
      await second.listen({ port: 0, host: '127.0.0.1' });
      const address = second.server.address();
      const secondUrl = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
      const W = await t.workspace('pro');
      const k = (await t.key(W.id)).key;
      const l = await createLead(t, k);
      const c = await createCall(t, k, l.id);
      const run = await startRun(t, k, l.id, c.id);
      const open = (base: string, signal?: AbortSignal) =>
        fetch(`${base}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' }, signal });
      for (let i = 0; i < STREAMS_PER_HOLDER; i++) {
        const controller = new AbortController();
        const res = await open(t.url, controller.signal);
        assert.equal(res.status, 200);
        streams.push(followStream(res, controller));
      }
      await Promise.all(streams.map((f) => f.until(isQueued)));
      const refusal = new AbortController();
      const refused = await open(secondUrl, refusal.signal);
      if (refused.status !== 429) refusal.abort();
      assert.equal(refused.status, 429);
      assert.equal((await refused.json() as any).code, 'rate_limited');
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);

      // Ended streams give their places back in Redis too.
      assert.equal((await t.api('POST', `/api/v1/runs/${run.id}/cancel`, { key: k })).status, 200);
      await Promise.all(streams.map((f) => within(f.ended, 5_000, 'the cancelled run ends its streams')));
      const admitted = await open(secondUrl);
      assert.equal(admitted.status, 200);
      await admitted.text();
    } finally {
      for (const f of streams) f.abort();
      await Promise.all(streams.map((f) => f.ended.catch(() => {})));
      await second.close();
      await database.close();
      await t.close();
      await redis.cleanup();
    }
  });
});

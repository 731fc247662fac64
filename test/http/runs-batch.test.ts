// POST /api/v1/runs/batch: up to 100 runs in one request, in order, all or nothing — 400 and 404 naming the item,
// 402 when the Free month cannot hold the whole batch (exact when batches race), Idempotency-Key replays, scopes,
// one audit entry, one wake-up notice for the workers, the runs then worked; GET /api/v1/runs?batchId=… and
// order=oldest; and the web UI's batch view (/ui/api/batches/{id}).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.ts';
import { RUNS_CHANNEL } from '../../src/domain/runs/lifecycle.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { workspaceUsage } from '../../src/domain/workspaces/usage.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, waitForRun, type ApiResponse, type TestApp } from '../helpers.ts';
import { asBrowser, assertInvalid, assertProblem, auditRows, createCall, createLead, db, startRun, STEP_ORDER, UUID, type Browser } from './support.ts';

const LIMIT = 50;
const NOW = '2026-03-10T09:00:00.000Z';
const RESETS_AT = '2026-04-01T00:00:00.000Z';

interface Item { leadId: string; callId: string }

for (const kind of BACKENDS) {
  describe(`${kind}: POST /api/v1/runs/batch`, () => {
    const clock = new ManualClock(NOW);
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let key: string;
    let keyId: string;
    let keyB: string;
    /** Ten leads of workspace A with one call each. */
    let items: Item[];

    before(async () => {
      t = await startTestApp(kind, { clock, config: { freePlanMonthlyRuns: LIMIT, rateLimitPerMinute: 1_000_000 } });
      A = await t.workspace('pro', 'Batch A');
      ({ key, id: keyId } = await t.key(A.id));
      keyB = (await t.key((await t.workspace('pro', 'Batch B')).id)).key;
      items = await prospects(t, key, 10);
    });
    after(() => t?.close());

    const post = (body: unknown, k = key, headers: Record<string, string> = {}) => t.api('POST', '/api/v1/runs/batch', { key: k, body, headers });

    /**
     * Everything a batch writes, counted for one workspace: nothing may change when a batch is refused. The usage is the
     * month's as Settings / Plan and usage shows it (a Free workspace's count of its limit, a Pro one's runs).
     */
    const footprint = async (workspaceId: string) => {
      const { rows: [row] } = await sql<{ runs: string; steps: string; events: string }>`
        SELECT (SELECT count(*) FROM runs WHERE workspace_id = ${workspaceId}) AS runs,
               (SELECT count(*) FROM run_steps s JOIN runs r ON r.id = s.run_id WHERE r.workspace_id = ${workspaceId}) AS steps,
               (SELECT count(*) FROM run_events WHERE workspace_id = ${workspaceId}) AS events`.execute(db(t));
      const usage = await workspaceUsage(db(t), workspaceId, LIMIT, clock);
      return { runs: Number(row!.runs), steps: Number(row!.steps), events: Number(row!.events), usage: usage.used };
    };

    it('answers 202 with 100 queued runs in the order of the items, one batch, a Location listing it', async () => {
      // 100 items over ten leads, in an order that is neither the leads' nor sorted by id.
      const batch = Array.from({ length: 100 }, (_, i) => items[(i * 7 + Math.floor(i / 10)) % items.length]!);
      const before = await footprint(A.id);
      const res = await post({ runs: batch });
      assert.equal(res.status, 202, res.text);
      assert.deepEqual(Object.keys(res.json), ['data']);
      const runs: any[] = res.json.data;
      assert.equal(runs.length, 100);
      assert.deepEqual(runs.map((r) => ({ leadId: r.leadId, callId: r.callId })), batch, 'the runs are in the order of the items');
      assert.equal(new Set(runs.map((r) => r.id)).size, 100, 'a run for every item, even where an item repeats');
      const batchId = runs[0].batchId;
      assert.match(batchId, UUID);
      for (const run of runs) {
        assert.equal(run.batchId, batchId);
        assert.equal(run.status, 'QUEUED');
        assert.equal(run.startedAt, NOW);
        assert.equal(run.completedAt, null);
        assert.equal(run.emailDraft, null);
        assert.deepEqual(run.steps.map((s: any) => [s.node, s.status, s.output, s.attempts]), STEP_ORDER.map((n) => [n, 'PENDING', null, 0]));
        assert.equal(run.traceUrl, `${t.deps.config.publicUrl}/runs/${run.id}/trace`);
      }
      assert.equal(res.headers.get('location'), `/api/v1/runs?batchId=${batchId}`);
      // Each run reads back as it was answered; the batch lists exactly its runs.
      for (const run of [runs[0], runs[57], runs[99]]) assert.deepEqual((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json, { data: run });
      const listed = await t.api('GET', `${res.headers.get('location')}&limit=100`, { key });
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(new Set(listed.json.data.map((r: any) => r.id)), new Set(runs.map((r) => r.id)));
      assert.equal(res.headers.get('link'), null);

      assert.deepEqual(await footprint(A.id), { runs: before.runs + 100, steps: before.steps + 400, events: before.events + 100, usage: before.usage + 100 });
      const rows = await db(t).selectFrom('runs').select(['created_by_user_id', 'key_id', 'batch_id']).where('batch_id', '=', batchId).execute();
      assert.equal(rows.length, 100);
      for (const row of rows) assert.deepEqual(row, { created_by_user_id: A.adminUserId, key_id: keyId, batch_id: batchId }, 'attributed to the admin and the key');
      const events = await db(t).selectFrom('run_events').select(['type', 'seq']).where('run_id', '=', runs[3].id).execute();
      assert.deepEqual(events, [{ type: 'run.queued', seq: 1 }]);
    });

    it('writes one audit entry for the batch, whose target is the batch', async () => {
      const res = await post({ runs: items.slice(0, 2) }, key, { 'x-request-id': `batch-audit-${kind}` });
      assert.equal(res.status, 202, res.text);
      const entries = await auditRows(t, { requestId: `batch-audit-${kind}` });
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.action, 'run.batch_created');
      assert.equal(entries[0]!.outcome, 'success');
      assert.equal(entries[0]!.status, 202);
      assert.equal(entries[0]!.source, 'api');
      assert.equal(entries[0]!.key_id, keyId);
      assert.deepEqual([entries[0]!.target_type, entries[0]!.target_id], ['batch', res.json.data[0].batchId]);
    });

    const invalid: Array<[string, unknown, string[]]> = [
      ['no runs', { runs: [] }, ['runs']],
      ['101 runs', { runs: Array.from({ length: 101 }, () => ({ leadId: randomUUID(), callId: randomUUID() })) }, ['runs']],
      ['no runs field', {}, ['runs']],
      ['runs that is not an array', { runs: { leadId: randomUUID(), callId: randomUUID() } }, ['runs']],
      ['an unknown field beside runs', { runs: [{ leadId: randomUUID(), callId: randomUUID() }], dryRun: true }, ['dryRun']],
      ['a callId that is not a UUID in item 3', { runs: [0, 1, 2, 3].map((i) => ({ leadId: randomUUID(), callId: i === 3 ? 'nope' : randomUUID() })) }, ['runs[3].callId']],
      ['no leadId in item 2', { runs: [0, 1, 2].map((i) => (i === 2 ? { callId: randomUUID() } : { leadId: randomUUID(), callId: randomUUID() })) }, ['runs[2].leadId']],
      ['an unknown field in item 1', { runs: [{ leadId: randomUUID(), callId: randomUUID() }, { leadId: randomUUID(), callId: randomUUID(), status: 'COMPLETED' }] }, ['runs[1].status']],
      ['an item that is null', { runs: [{ leadId: randomUUID(), callId: randomUUID() }, null] }, ['runs[1]']],
      ['a numeric leadId in item 0 and a null callId in item 1', { runs: [{ leadId: 7, callId: randomUUID() }, { leadId: randomUUID(), callId: null }] }, ['runs[0].leadId', 'runs[1].callId']],
    ];
    for (const [what, body, fields] of invalid) {
      it(`refuses ${what} with 400 naming ${fields.join(' and ')}, and starts nothing`, async () => {
        const before = await footprint(A.id);
        const res = await post(body);
        assertInvalid(res, fields, what);
        assert.ok(res.json.errors.every((e: any) => !/^runs\.\d/.test(e.field)), 'items are named runs[i], not runs.i');
        assert.deepEqual(await footprint(A.id), before);
      });
    }

    it('refuses a body that is not JSON, or not sent as JSON', async () => {
      assertProblem(await t.api('POST', '/api/v1/runs/batch', { key, raw: '{"runs": [', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
      assertProblem(await t.api('POST', '/api/v1/runs/batch', { key, raw: 'runs', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    });

    it('answers 404 naming every item whose lead or call does not resolve, and starts nothing', async () => {
      const [x, y, z] = items as [Item, Item, Item];
      const theirLead = await createLead(t, keyB, { name: 'Their lead' });
      const theirCall = await createCall(t, keyB, theirLead.id, { transcript: 'Them: hi' });
      const cases: Array<[string, Item[], string[], string]> = [
        ['an unknown lead in item 3', [x, y, z, { ...x, leadId: randomUUID() }], ['runs[3].leadId'], key],
        ['an unknown call in item 1', [x, { ...y, callId: randomUUID() }], ['runs[1].callId'], key],
        ["a call of another lead in item 2", [x, y, { leadId: x.leadId, callId: y.callId }], ['runs[2].callId'], key],
        ['several bad items, each named', [{ ...x, leadId: randomUUID() }, y, { ...z, callId: randomUUID() }, { leadId: y.leadId, callId: z.callId }],
          ['runs[0].leadId', 'runs[2].callId', 'runs[3].callId'], key],
        ["another workspace's lead and call", [x], ['runs[0].leadId', 'runs[0].callId'], keyB],
        ["its own lead with another workspace's call", [{ leadId: theirLead.id, callId: x.callId }], ['runs[0].callId'], keyB],
        ["another workspace's call for one's own lead, after good items", [x, y, { leadId: x.leadId, callId: theirCall.id }], ['runs[2].callId'], key],
      ];
      for (const [what, batch, fields, k] of cases) {
        const before = { A: await footprint(A.id), all: await countAll() };
        const res = await post({ runs: batch }, k);
        assertProblem(res, 404, 'not_found', what);
        assert.deepEqual(res.json.errors.map((e: any) => e.field).sort(), [...fields].sort(), what);
        assert.match(res.json.detail, /Nothing was started/);
        assert.deepEqual(await footprint(A.id), before.A, what);
        assert.equal(await countAll(), before.all, `${what}: no run anywhere`);
      }
    });

    const countAll = async () => Number((await db(t).selectFrom('runs').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

    it('checks in order: 400 before 404 before 402', async () => {
      const F = await t.workspace('free');
      const fKey = (await t.key(F.id)).key;
      const [mine] = await prospects(t, fKey, 1) as [Item];
      const tooMany = Array.from({ length: LIMIT + 1 }, () => mine);
      assertInvalid(await post({ runs: [...tooMany.slice(0, 3), { leadId: 'x', callId: mine.callId }] }, fKey), ['runs[3].leadId']);
      assertProblem(await post({ runs: [...tooMany, { leadId: randomUUID(), callId: mine.callId }] }, fKey), 404, 'not_found');
      assertProblem(await post({ runs: tooMany }, fKey), 402, 'run_limit_reached');
    });

    it('answers 402 with limit, used and resetsAt when the Free month cannot hold the whole batch, and starts none of it', async () => {
      const F = await t.workspace('free');
      const fKey = (await t.key(F.id)).key;
      const mine = await prospects(t, fKey, 3);
      const batchOf = (n: number) => Array.from({ length: n }, (_, i) => mine[i % mine.length]!);

      // More than a whole month's runs, with nothing used yet: refused, and no usage row is made.
      assertLimit(await post({ runs: batchOf(LIMIT + 1) }, fKey), { used: 0 });
      assert.deepEqual(await footprint(F.id), { runs: 0, steps: 0, events: 0, usage: 0 });

      assert.equal((await post({ runs: batchOf(40) }, fKey)).status, 202);
      const before = await footprint(F.id);
      const refused = await post({ runs: batchOf(11) }, fKey);
      assertLimit(refused, { used: 40 });
      assert.match(refused.json.detail, /used 40, and 11 more would pass the limit/);
      assert.deepEqual(await footprint(F.id), before, 'none of the 11 was started, and the month still counts 40');

      // Exactly the rest of the month fits; after it, a batch of one and a single run are refused alike.
      const last = await post({ runs: batchOf(10) }, fKey);
      assert.equal(last.status, 202, last.text);
      assert.equal((await footprint(F.id)).usage, LIMIT);
      assertLimit(await post({ runs: batchOf(1) }, fKey), { used: LIMIT });
      assertLimit(await t.api('POST', '/api/v1/runs', { key: fKey, body: mine[0] }), { used: LIMIT });
      assert.equal((await footprint(F.id)).runs, LIMIT);

      // The month turns: the limit starts again.
      clock.set('2026-04-01T00:00:00.000Z');
      try {
        assert.equal((await post({ runs: batchOf(LIMIT) }, fKey)).status, 202);
      } finally {
        clock.set(NOW);
      }
    });

    function assertLimit(res: ApiResponse, expected: { used: number }) {
      assertProblem(res, 402, 'run_limit_reached');
      assert.deepEqual({ limit: res.json.limit, used: res.json.used, resetsAt: res.json.resetsAt }, { limit: LIMIT, used: expected.used, resetsAt: RESETS_AT });
    }

    it('never lets racing batches pass the month together: of two batches of 30 for the last 50 places, exactly one starts', async () => {
      const F = await t.workspace('free');
      const fKey = (await t.key(F.id)).key;
      const mine = await prospects(t, fKey, 3);
      const batchOf = (n: number) => ({ runs: Array.from({ length: n }, (_, i) => mine[i % mine.length]!) });

      const [first, second] = await Promise.all([post(batchOf(30), fKey), post(batchOf(30), fKey)]);
      const statuses = [first!.status, second!.status].sort();
      assert.deepEqual(statuses, [202, 402], `${first!.text.slice(0, 200)} / ${second!.text.slice(0, 200)}`);
      assertLimit([first!, second!].find((r) => r.status === 402)!, { used: 30 });
      assert.deepEqual(await footprint(F.id), { runs: 30, steps: 120, events: 30, usage: 30 });

      // Twenty left: of eight batches of five and a batch of twenty racing, the places taken are exactly twenty.
      const answers = await Promise.all([...Array.from({ length: 8 }, () => post(batchOf(5), fKey)), post(batchOf(20), fKey)]);
      const started = answers.filter((r) => r.status === 202).reduce((sum, r) => sum + r.json.data.length, 0);
      for (const r of answers.filter((a) => a.status !== 202)) assertProblem(r, 402, 'run_limit_reached');
      assert.ok(started <= 20, `${started} runs started for 20 places`);
      // The twenty-run batch either took every place, or four batches of five did.
      assert.equal(started, 20, `statuses ${answers.map((r) => r.status).join(',')}`);
      assert.deepEqual(await footprint(F.id), { runs: LIMIT, steps: 4 * LIMIT, events: LIMIT, usage: LIMIT });
    });

    it('replays the first answer for the same Idempotency-Key and body, creating and counting nothing more', async () => {
      const F = await t.workspace('free');
      const fKey = (await t.key(F.id)).key;
      const mine = await prospects(t, fKey, 2);
      const headers = { 'idempotency-key': `batch-${randomUUID()}` };
      const first = await post({ runs: mine }, fKey, headers);
      assert.equal(first.status, 202, first.text);
      const after = await footprint(F.id);
      const again = await post({ runs: mine }, fKey, headers);
      assert.equal(again.status, 202);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.json, first.json);
      assert.equal(again.headers.get('location'), first.headers.get('location'));
      assert.deepEqual(await footprint(F.id), after, 'no run started and none counted by the replay');
      assertProblem(await post({ runs: [mine[1], mine[0]] }, fKey, headers), 422, 'idempotency_key_reused');
      const replays = (await auditRows(t, { workspaceId: F.id })).filter((e) => e.outcome === 'replayed');
      assert.deepEqual(replays.map((e) => [e.action, e.target_type, e.target_id]), [['run.batch_created', 'batch', first.json.data[0].batchId]]);
    });

    it('needs runs:write: a read-only key, a leads key and no key are refused, and nothing starts', async () => {
      const before = await footprint(A.id);
      const readOnly = (await t.key(A.id, ['runs:read', 'leads:read'])).key;
      const leadsOnly = (await t.key(A.id, ['leads:read', 'leads:write'])).key;
      for (const k of [readOnly, leadsOnly]) {
        const res = await post({ runs: items.slice(0, 1) }, k);
        assertProblem(res, 403, 'insufficient_scope');
        assert.equal(res.json.requiredScope, 'runs:write');
      }
      assertProblem(await t.api('POST', '/api/v1/runs/batch', { body: { runs: items.slice(0, 1) } }), 401, 'unauthorized');
      assert.deepEqual(await footprint(A.id), before);
      // A key with runs:write alone may start a batch; the answer shows only what it sent and ids.
      const writeOnly = (await t.key(A.id, ['runs:write'])).key;
      assert.equal((await post({ runs: items.slice(0, 1) }, writeOnly)).status, 202);
    });

    it('starts a batch for a signed-in person, who is then its author', async () => {
      const person = await signedIn(t, A.adminUserId);
      const res = await asBrowser(t, person, 'POST', '/api/v1/runs/batch', { runs: items.slice(0, 2) });
      assert.equal(res.status, 202, res.text);
      const row = await db(t).selectFrom('runs').select(['created_by_user_id', 'key_id']).where('id', '=', res.json.data[0].id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { created_by_user_id: A.adminUserId, key_id: null });
      const noCsrf = await t.api('POST', '/api/v1/runs/batch', { body: { runs: items.slice(0, 1) }, headers: { cookie: person.cookie, origin: t.url } });
      assertProblem(noCsrf, 403);
    });

    describe('GET /api/v1/runs?batchId=… and order=oldest', () => {
      it("lists one batch's runs, pages through them, and shows another workspace nothing", async () => {
        const res = await post({ runs: items.slice(0, 5) });
        const batchId = res.json.data[0].batchId;
        const ids = new Set(res.json.data.map((r: any) => r.id));
        const page = await t.api('GET', `/api/v1/runs?batchId=${batchId}&limit=2`, { key });
        assert.equal(page.json.data.length, 2);
        let all: any[] = [];
        for (let next: string | null = `/api/v1/runs?batchId=${batchId}&limit=2`; next;) {
          const p: ApiResponse = await t.api('GET', next, { key });
          all = all.concat(p.json.data);
          const link = p.headers.get('link');
          next = link ? new URL(/<([^>]+)>/.exec(link)![1]!, 'http://x').pathname + new URL(/<([^>]+)>/.exec(link)![1]!, 'http://x').search : null;
          if (next) assert.match(next, new RegExp(`batchId=${batchId}`), 'the next page keeps the filter');
        }
        assert.deepEqual(new Set(all.map((r) => r.id)), ids);
        assert.equal(all.length, 5);
        assert.deepEqual((await t.api('GET', `/api/v1/runs?batchId=${batchId}`, { key: keyB })).json, { data: [] });
        assert.deepEqual((await t.api('GET', `/api/v1/runs?batchId=${randomUUID()}`, { key })).json, { data: [] });
        assertInvalid(await t.api('GET', '/api/v1/runs?batchId=nope', { key }), ['batchId']);
        const single = await startRun(t, key, items[0]!.leadId, items[0]!.callId);
        assert.equal(single.batchId, null, 'a run started on its own has no batch');
      });

      it('lists oldest first with order=oldest, each page after the last', async () => {
        const W = await t.workspace('pro');
        const wKey = (await t.key(W.id)).key;
        const [mine] = await prospects(t, wKey, 1) as [Item];
        const started: string[] = [];
        for (let i = 0; i < 5; i++) {
          clock.set(new Date(Date.parse(NOW) + i * 1000));
          started.push((await startRun(t, wKey, mine.leadId, mine.callId)).id);
        }
        clock.set(NOW);
        const walk = async (order: string) => {
          const seen: string[] = [];
          let next: string | null = `/api/v1/runs?order=${order}&limit=2`;
          while (next) {
            const p: ApiResponse = await t.api('GET', next, { key: wKey });
            assert.equal(p.status, 200, p.text);
            seen.push(...p.json.data.map((r: any) => r.id));
            const link = p.headers.get('link');
            next = link ? (() => { const u = new URL(/<([^>]+)>/.exec(link)![1]!, 'http://x'); return u.pathname + u.search; })() : null;
          }
          return seen;
        };
        assert.deepEqual(await walk('oldest'), started);
        assert.deepEqual(await walk('newest'), [...started].reverse());
        assertInvalid(await t.api('GET', '/api/v1/runs?order=random', { key: wKey }), ['order']);
      });
    });

    describe('the web UI: GET /ui/api/batches/{id}', () => {
      it("answers each run's status, lead and draft subject by lead name, to a person of the workspace only", async () => {
        const W = await t.workspace('pro');
        const wKey = (await t.key(W.id)).key;
        const names = ['Zoe Zimmer', 'Ada Abbott', 'Mo Meyer'];
        const mine: Item[] = [];
        for (const name of names) {
          const lead = await createLead(t, wKey, { name, companyName: `${name.split(' ')[1]} GmbH` });
          mine.push({ leadId: lead.id, callId: (await createCall(t, wKey, lead.id, { transcript: TRANSCRIPT })).id });
        }
        const res = await post({ runs: mine }, wKey);
        const batchId = res.json.data[0].batchId;
        const person = await signedIn(t, W.adminUserId);
        const view = await asBrowser(t, person, 'GET', `/ui/api/batches/${batchId}`);
        assert.equal(view.status, 200, view.text);
        assert.deepEqual(view.json.data.map((r: any) => r.leadName), ['Ada Abbott', 'Mo Meyer', 'Zoe Zimmer']);
        const byLead = new Map(res.json.data.map((r: any) => [r.leadId, r]));
        for (const row of view.json.data) {
          const run: any = byLead.get(row.leadId);
          assert.deepEqual(row, {
            id: run.id, status: 'QUEUED', leadId: run.leadId, leadName: row.leadName, companyName: `${row.leadName.split(' ')[1]} GmbH`,
            subject: null, error: null, startedAt: NOW, completedAt: null,
          });
        }
        // Another workspace's person, a key, nobody, an unknown or malformed id: not found or not signed in.
        const other = await signedIn(t, A.adminUserId);
        assertProblem(await asBrowser(t, other, 'GET', `/ui/api/batches/${batchId}`), 404, 'not_found');
        assertProblem(await t.api('GET', `/ui/api/batches/${batchId}`, { key: wKey }), 401, 'unauthorized');
        assertProblem(await t.api('GET', `/ui/api/batches/${batchId}`), 401, 'unauthorized');
        assertProblem(await asBrowser(t, person, 'GET', `/ui/api/batches/${randomUUID()}`), 404, 'not_found');
        assertProblem(await asBrowser(t, person, 'GET', '/ui/api/batches/nope'), 404, 'not_found');
      });
    });
  });

  // On a database of its own, so that the worker has only this batch to work.
  describe(`${kind}: a batch and the workers`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(kind);
    });
    after(() => t?.close());

    it('are woken by one notice that counts the runs, a slot for each, and work every run of the batch', async () => {
      const W = await t.workspace('pro');
      const wKey = (await t.key(W.id)).key;
      const mine = await prospects(t, wKey, 3);
      const notices: string[] = [];
      const stop = await t.database.listen(RUNS_CHANNEL, (payload) => notices.push(payload));
      try {
        // A worker that polls only once a minute, idle once it has worked a first run: only a notice wakes it now.
        await t.startWorker({ pollMs: 60_000, concurrency: 4 });
        const first = await startRun(t, wKey, mine[0]!.leadId, mine[0]!.callId);
        await waitForRun(t, wKey, first.id, (r) => r.status === 'AWAITING_APPROVAL');

        const res = await t.api('POST', '/api/v1/runs/batch', { key: wKey, body: { runs: mine } });
        assert.equal(res.status, 202, res.text);
        const done = [];
        for (const run of res.json.data) done.push(await waitForRun(t, wKey, run.id, (r) => r.status !== 'QUEUED' && r.status !== 'RUNNING'));
        for (const run of done) {
          assert.equal(run.status, 'AWAITING_APPROVAL', JSON.stringify(run.steps.map((s: any) => s.error)));
          assert.equal(run.emailDraft.status, 'DRAFT');
        }
        assert.deepEqual(notices, [first.id, '3'], 'one notice for the whole batch, saying how many runs it queued');
        // Three slots woke at once: every run of the batch was taken before the first of them was done.
        const events = await db(t).selectFrom('run_events').select(['run_id', 'type', 'id'])
          .where('run_id', 'in', done.map((r) => r.id)).where('type', 'in', ['step.started', 'run.awaiting_approval']).orderBy('id').execute();
        const firstDone = events.findIndex((e) => e.type === 'run.awaiting_approval');
        assert.equal(new Set(events.slice(0, firstDone).map((e) => e.run_id)).size, 3, 'all three runs started before one finished');

        const view = await asBrowser(t, await signedIn(t, W.adminUserId), 'GET', `/ui/api/batches/${res.json.data[0].batchId}`);
        for (const row of view.json.data) {
          assert.equal(row.status, 'AWAITING_APPROVAL');
          assert.equal(typeof row.subject, 'string');
          assert.ok(row.subject.length > 0);
          assert.ok(row.completedAt);
        }
      } finally {
        await stop();
      }
    });
  });
}

/** `n` leads of the key's workspace, each with one call. */
async function prospects(t: TestApp, key: string, n: number): Promise<Item[]> {
  const out: Item[] = [];
  for (let i = 0; i < n; i++) {
    const lead = await createLead(t, key, { name: `Batch lead ${i}`, companyName: `Company ${i}` });
    const call = await createCall(t, key, lead.id, { transcript: TRANSCRIPT });
    out.push({ leadId: lead.id, callId: call.id });
  }
  return out;
}

async function signedIn(t: TestApp, userId: string): Promise<Browser> {
  const created = await createSession(t.database.db, userId, t.deps.clock, { ip: '127.0.0.1', userAgent: 'batch test' });
  return { cookie: `${SESSION_COOKIE}=${created.token}`, csrf: created.session.csrfToken, session: created.session };
}

async function waitUntil(probe: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

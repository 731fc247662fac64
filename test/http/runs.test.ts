// /api/v1/runs: start a run (202 with the run itself), follow it to AWAITING_APPROVAL with a worker, list runs,
// the trace URL, and the Free plan's monthly limit with its order of checks.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { assertStepOutput } from '../../src/agent/output-check.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, waitForRun, type TestApp } from '../helpers.ts';
import {
  assertInvalid, assertProblem, countRows, createCall, createLead, db, ISO_MS, newestFirst, nextLink, startRun, STEP_ORDER, UUID, walkPages,
} from './support.ts';

const RUN_FIELDS = ['batchId', 'callId', 'completedAt', 'emailDraft', 'error', 'id', 'leadId', 'replies', 'reply', 'sequence', 'startedAt', 'status', 'steps', 'tokensUsed', 'traceUrl'];
const STEP_FIELDS = ['attempts', 'completedAt', 'durationMs', 'engine', 'error', 'model', 'node', 'output', 'promptVersion', 'startedAt', 'status', 'usage'];
const TERMINAL = ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED', 'COMPLETED', 'REJECTED'];

const COMPANY_PAGE = `<!doctype html>
<html><head>
  <title>Analytical Engines Ltd | Finance reporting automation</title>
  <meta name="description" content="Analytical Engines automates month-end reporting for finance teams.">
</head><body><main>
  <h1>Close the books in one day</h1>
  <p>Analytical Engines Ltd builds reporting software for finance teams at mid-sized manufacturers.</p>
  <p>More than 120 finance teams in 9 countries close their month with Analytical Engines.</p>
</main></body></html>`;

/** The lead's company website, on loopback: RESEARCH reads a real page without leaving the machine. */
async function companySite(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(COMPANY_PAGE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

function assertQueuedRun(run: any, leadId: string, callId: string): void {
  assert.deepEqual(Object.keys(run).sort(), RUN_FIELDS);
  assert.match(run.id, UUID);
  assert.equal(run.status, 'QUEUED');
  assert.equal(run.leadId, leadId);
  assert.equal(run.callId, callId);
  assert.match(run.startedAt, ISO_MS);
  assert.equal(run.completedAt, null);
  assert.equal(run.reply, null, 'no reply before an e-mail is sent');
  assert.equal(run.emailDraft, null);
  assert.deepEqual(run.steps.map((s: any) => s.node), STEP_ORDER);
  for (const step of run.steps) {
    assert.deepEqual(Object.keys(step).sort(), STEP_FIELDS);
    assert.equal(step.status, 'PENDING');
    assert.equal(step.output, null);
    assert.equal(step.attempts, 0);
    assert.equal(step.startedAt, null);
    assert.equal(step.completedAt, null);
  }
  const trace = new URL(run.traceUrl);
  assert.ok(['http:', 'https:'].includes(trace.protocol), 'traceUrl is an absolute http(s) URL');
}

const strings = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string');

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let site: { url: string; server: Server };
    let A: { id: string; adminUserId: string };
    let key: string;
    let keyId: string;
    let keyB: string;
    let readOnly: string;
    let lead: any;
    let call: any;

    before(async () => {
      site = await companySite();
      t = await startTestApp(kind);
      A = await t.workspace('pro');
      const B = await t.workspace('pro');
      ({ key, id: keyId } = await t.key(A.id));
      keyB = (await t.key(B.id)).key;
      readOnly = (await t.key(A.id, ['runs:read'])).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', email: 'ada@analytical.example', companyName: 'Analytical Engines Ltd', companyWebsite: site.url });
      call = await createCall(t, key, lead.id, { transcript: TRANSCRIPT, title: 'Discovery call' });
    });
    after(async () => {
      await t?.close();
      site?.server.close();
    });

    const post = (body: unknown, k = key) => t.api('POST', '/api/v1/runs', { key: k, body });

    it('answers 202 with the queued run, its four PENDING steps and a Location header', async () => {
      const startedBefore = Date.now();
      const res = await post({ leadId: lead.id, callId: call.id });
      assert.equal(res.status, 202, res.text);
      const run = res.json;
      assertQueuedRun(run, lead.id, call.id);
      assert.ok(Math.abs(Date.parse(run.startedAt) - startedBefore) < 60_000, 'startedAt is when the run was accepted');
      assert.equal(res.headers.get('location'), `/api/v1/runs/${run.id}`);
      assert.equal(run.traceUrl, `${t.deps.config.publicUrl}/runs/${run.id}/trace`, 'by default, the UI trace page under PUBLIC_URL');
      const read = await t.api('GET', res.headers.get('location')!, { key: readOnly });
      assert.equal(read.status, 200);
      assert.deepEqual(read.json, { data: run });
      // Runs started through the API are attributed to the workspace's admin user, and to the key.
      const row = await db(t).selectFrom('runs').select(['created_by_user_id', 'key_id']).where('id', '=', run.id).executeTakeFirstOrThrow();
      assert.equal(row.created_by_user_id, A.adminUserId);
      assert.equal(row.key_id, keyId);
    });

    const invalid: Array<[string, unknown, string[]]> = [
      ['an empty body', {}, ['leadId', 'callId']],
      ['no callId', { leadId: randomUUID() }, ['callId']],
      ['no leadId', { callId: randomUUID() }, ['leadId']],
      ['a leadId that is not a UUID', { leadId: 'nope', callId: randomUUID() }, ['leadId']],
      ['a callId that is not a UUID', { leadId: randomUUID(), callId: '123' }, ['callId']],
      ['a numeric leadId', { leadId: 42, callId: randomUUID() }, ['leadId']],
      ['null ids', { leadId: null, callId: null }, ['leadId', 'callId']],
      ['an unknown field', { leadId: randomUUID(), callId: randomUUID(), priority: 'high' }, ['priority']],
      ['an array body', [], []],
    ];
    for (const [what, body, fields] of invalid) {
      it(`refuses ${what} with 400`, async () => {
        assertInvalid(await post(body), fields, what);
      });
    }

    it('answers 404 naming leadId or callId when a reference does not resolve, and starts nothing', async () => {
      const before = await countRows(t, 'runs');
      const otherLead = await createLead(t, key, { name: 'Other lead' });
      const otherCall = await createCall(t, key, otherLead.id, { transcript: 'Other: hi' });
      const theirLead = await createLead(t, keyB, { name: 'Their lead' });
      const theirCall = await createCall(t, keyB, theirLead.id, { transcript: 'Them: hi' });
      const cases: Array<[string, unknown, string, string]> = [
        ['an unknown lead', { leadId: randomUUID(), callId: call.id }, 'leadId', key],
        ['an unknown call', { leadId: lead.id, callId: randomUUID() }, 'callId', key],
        ['a call of another lead', { leadId: lead.id, callId: otherCall.id }, 'callId', key],
        ["another workspace's lead and call", { leadId: lead.id, callId: call.id }, 'leadId', keyB],
        ["its own lead with another workspace's call", { leadId: theirLead.id, callId: call.id }, 'callId', keyB],
        ["another workspace's call for one's own lead", { leadId: lead.id, callId: theirCall.id }, 'callId', key],
      ];
      for (const [what, body, field, k] of cases) {
        const res = await post(body, k);
        assertProblem(res, 404, 'not_found', what);
        assert.ok(res.json.errors?.some((e: any) => e.field === field), `${what}: errors name ${field} (${res.text})`);
      }
      assert.equal(await countRows(t, 'runs'), before);
    });

    it('answers 404 for an unknown, malformed or other workspace\'s run id', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      assertProblem(await t.api('GET', `/api/v1/runs/${randomUUID()}`, { key }), 404, 'not_found');
      assertProblem(await t.api('GET', '/api/v1/runs/not-a-run', { key }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}`, { key: keyB }), 404, 'not_found');
    });

    describe('GET /api/v1/runs', () => {
      let W: { id: string };
      let wKey: string;
      let leads: any[];
      let runs: any[];
      before(async () => {
        W = await t.workspace('pro');
        wKey = (await t.key(W.id)).key;
        leads = [];
        runs = [];
        for (let l = 0; l < 2; l++) {
          const wl = await createLead(t, wKey, { name: `Runs lead ${l}` });
          const wc = await createCall(t, wKey, wl.id, { transcript: TRANSCRIPT });
          leads.push(wl);
          for (let i = 0; i < (l === 0 ? 17 : 9); i++) runs.push(await startRun(t, wKey, wl.id, wc.id));
        }
      });
      const ids = (list: any[]) => newestFirst(list, (r) => r.startedAt, (r) => r.id).map((r) => r.id);

      it('lists runs newest first, 20 by default, with a Link to the next page', async () => {
        const res = await t.api('GET', '/api/v1/runs', { key: wKey });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.json), ['data']);
        assert.deepEqual(res.json.data.map((r: any) => r.id), ids(runs).slice(0, 20));
        for (const item of res.json.data) assert.deepEqual(item, runs.find((r) => r.id === item.id), 'list items are the full runs');
        assert.ok(nextLink(res));
      });

      it('pages through every run exactly once', async () => {
        const { items } = await walkPages(t, wKey, '/api/v1/runs?limit=4');
        assert.deepEqual(items.map((r) => r.id), ids(runs));
      });

      it('filters by leadId, and the Link header keeps the filter', async () => {
        const mine = runs.filter((r) => r.leadId === leads[0].id);
        const first = await t.api('GET', `/api/v1/runs?leadId=${leads[0].id}&limit=5`, { key: wKey });
        assert.match(nextLink(first) ?? '', new RegExp(`[?&]leadId=${leads[0].id}(&|$)`));
        const { items } = await walkPages(t, wKey, `/api/v1/runs?leadId=${leads[0].id}&limit=5`);
        assert.deepEqual(items.map((r) => r.id), ids(mine));
        assert.deepEqual((await t.api('GET', `/api/v1/runs?leadId=${randomUUID()}`, { key: wKey })).json, { data: [] });
      });

      it('filters by status', async () => {
        const queued = await walkPages(t, wKey, '/api/v1/runs?status=QUEUED&limit=100');
        assert.deepEqual(queued.items.map((r) => r.id), ids(runs));
        const done = await t.api('GET', '/api/v1/runs?status=AWAITING_APPROVAL', { key: wKey });
        assert.deepEqual(done.json, { data: [] });
      });

      for (const [what, query, field] of [
        ['a leadId that is not a UUID', 'leadId=nope', 'leadId'],
        ['an unknown status', 'status=DONE', 'status'],
        ['limit=0', 'limit=0', 'limit'],
        ['limit=101', 'limit=101', 'limit'],
        ['a cursor it did not give out', 'cursor=garbage', 'cursor'],
      ]) {
        it(`refuses ${what} with 400`, async () => {
          assertInvalid(await t.api('GET', `/api/v1/runs?${query}`, { key: wKey }), [field!]);
        });
      }
    });

    describe('with a worker', () => {
      let done: any;

      it('is polled to AWAITING_APPROVAL with four COMPLETED steps, their outputs and a draft', async () => {
        const created = await startRun(t, key, lead.id, call.id);
        await t.startWorker({ allowPrivateHosts: true });
        const run = await waitForRun(t, readOnly, created.id, (r) => TERMINAL.includes(r.status));
        done = run;
        assert.equal(run.status, 'AWAITING_APPROVAL', JSON.stringify(run.error));
        assert.deepEqual(Object.keys(run).sort(), RUN_FIELDS);
        assert.equal(run.id, created.id);
        assert.equal(run.startedAt, created.startedAt, 'startedAt stays the time the run was accepted');
        assert.match(run.completedAt, ISO_MS);
        assert.ok(run.completedAt >= run.startedAt);
        assert.equal(run.traceUrl, created.traceUrl);

        assert.deepEqual(run.steps.map((s: any) => s.node), STEP_ORDER);
        let previousEnd = run.startedAt;
        for (const step of run.steps) {
          assert.equal(step.status, 'COMPLETED', step.node);
          assert.ok(step.attempts >= 1, `${step.node} attempts`);
          assert.match(step.startedAt, ISO_MS);
          assert.match(step.completedAt, ISO_MS);
          assert.ok(step.startedAt >= previousEnd && step.completedAt >= step.startedAt, `${step.node} runs after the step before it`);
          previousEnd = step.completedAt;
          assertStepOutput(step.node, step.output);
        }
        const [research, analysis, strategy, writer] = run.steps.map((s: any) => s.output);

        // RESEARCH {website: {url, fetched, title, description, summary}, facts, sources}
        assert.equal(research.website.url, site.url);
        assert.equal(research.website.fetched, true);
        assert.match(research.website.title, /Analytical Engines/);
        assert.equal(typeof research.website.description, 'string');
        assert.equal(typeof research.website.summary, 'string');
        assert.ok(research.facts.length > 0, 'facts from the page');
        for (const fact of research.facts) assert.ok(research.sources.includes(fact.source), 'every fact names a source that was read');
        assert.ok(research.sources.includes(site.url));
        // ANALYSIS {painPoints, objections, buyingSignals, nextSteps, sentiment}
        for (const field of ['painPoints', 'objections', 'buyingSignals', 'nextSteps']) assert.ok(strings(analysis[field]), field);
        assert.ok(['positive', 'neutral', 'negative'].includes(analysis.sentiment));
        assert.ok(analysis.painPoints.some((p: string) => /month-end|reporting|four days/i.test(p)), 'the pain point from the call');
        assert.ok(analysis.objections.some((o: string) => /price/i.test(o)), 'the price objection from the call');
        // STRATEGY {angle, valuePropositions, callToAction, tone}
        assert.equal(typeof strategy.angle, 'string');
        assert.ok(strings(strategy.valuePropositions));
        assert.equal(typeof strategy.callToAction, 'string');
        assert.equal(typeof strategy.tone, 'string');
        // WRITER {subject, body}, which the draft carries
        assert.ok(writer.subject.trim().length > 0 && writer.body.trim().length > 0);

        const draft = run.emailDraft;
        assert.deepEqual(Object.keys(draft).sort(), ['body', 'delivery', 'editedAt', 'grounding', 'id', 'origin', 'status', 'subject', 'to', 'version']);
        assert.equal(draft.delivery, null, 'no delivery before approval');
        assert.match(draft.id, UUID);
        assert.equal(draft.status, 'DRAFT');
        assert.equal(draft.subject, writer.subject);
        assert.equal(draft.body, writer.body);
        assert.equal(draft.to, 'ada@analytical.example');
        assert.equal(draft.version, 1);
        assert.match(`${draft.subject}\n${draft.body}`, /Analytical Engines/, 'the draft names the company');
        assert.match(draft.body, /month-end|reporting|four days/i, 'the draft takes up a concern from the transcript');
        const drafts = await db(t).selectFrom('email_drafts').select('id').where('run_id', '=', run.id).execute();
        assert.deepEqual(drafts.map((d) => d.id), [draft.id], 'one draft for the run');

        const listed = await t.api('GET', `/api/v1/runs?status=AWAITING_APPROVAL&leadId=${lead.id}`, { key });
        assert.ok(listed.json.data.some((r: any) => r.id === run.id), 'listed under its new status');
        assert.ok(listed.json.data.every((r: any) => r.status === 'AWAITING_APPROVAL'));
        // GET /api/v1/runs/{id} sends the JSON PostgreSQL wrote; the list goes through the response schema: the same run.
        assert.deepEqual(listed.json.data.find((r: any) => r.id === run.id), run);
      });

      it('answers GET /api/v1/runs/{id} in compact JSON, without the spaces PostgreSQL writes', async () => {
        assert.ok(done, 'the run of the test before');
        const res = await t.api('GET', `/api/v1/runs/${done.id}`, { key });
        assert.equal(res.status, 200);
        assert.ok(!res.text.includes('" : '), 'no `"key" : ` of json_build_object');
        assert.ok(!res.text.includes('}, \n {'), 'no line break of json_agg');
        assert.equal(res.text, JSON.stringify(JSON.parse(res.text)));
        assert.ok(done.steps.every((s: any) => s.output !== null), 'the step outputs (jsonb) are in it');
      });
    });
  });

  describe(`${kind} with TRACE_URL_TEMPLATE`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(kind, { config: { traceUrlTemplate: 'https://trace.example/t/{traceId}?run={runId}' } });
    });
    after(() => t?.close());

    it('gives every run the templated trace address, in the 202, on GET and in the list', async () => {
      const W = await t.workspace('pro');
      const key = (await t.key(W.id)).key;
      const lead = await createLead(t, key);
      const call = await createCall(t, key, lead.id);
      const run = await startRun(t, key, lead.id, call.id);
      const row = await db(t).selectFrom('runs').select('trace_id').where('id', '=', run.id).executeTakeFirstOrThrow();
      assert.match(row.trace_id, /^[0-9a-f]{32}$/);
      const expected = `https://trace.example/t/${row.trace_id}?run=${run.id}`;
      assert.equal(run.traceUrl, expected);
      assert.equal((await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.traceUrl, expected);
      assert.equal((await t.api('GET', '/api/v1/runs', { key })).json.data[0].traceUrl, expected);
      const other = await startRun(t, key, lead.id, call.id);
      assert.notEqual(other.traceUrl, expected, 'each run has its own trace');
    });
  });

  describe(`${kind} on the Free plan`, () => {
    const LIMIT = 2;
    let t: TestApp;
    before(async () => {
      t = await startTestApp(kind, { config: { freePlanMonthlyRuns: LIMIT } });
    });
    after(() => t?.close());

    it(`starts ${LIMIT} runs a month, then answers 402 with limit, used and resetsAt`, async () => {
      const F = await t.workspace('free');
      const key = (await t.key(F.id)).key;
      const lead = await createLead(t, key);
      const call = await createCall(t, key, lead.id);
      for (let i = 0; i < LIMIT; i++) await startRun(t, key, lead.id, call.id);
      const res = await t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: call.id } });
      assertProblem(res, 402, 'run_limit_reached');
      assert.equal(res.json.limit, LIMIT);
      assert.equal(res.json.used, LIMIT);
      const now = new Date();
      assert.equal(res.json.resetsAt, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
      assert.equal(await countRows(t, 'runs', F.id), LIMIT);

      // Order of checks: validate (400) → resolve references (404) → plan limit (402).
      assertInvalid(await t.api('POST', '/api/v1/runs', { key, body: { leadId: 'nope', callId: call.id } }), ['leadId']);
      assertProblem(await t.api('POST', '/api/v1/runs', { key, body: { leadId: randomUUID(), callId: call.id } }), 404, 'not_found');
      assertProblem(await t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: randomUUID() } }), 404, 'not_found');
    });

    it(`lets exactly ${LIMIT} of 8 simultaneous starts through`, async () => {
      const F = await t.workspace('free');
      const key = (await t.key(F.id)).key;
      const lead = await createLead(t, key);
      const call = await createCall(t, key, lead.id);
      const answers = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: call.id } })));
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [...Array(LIMIT).fill(202), ...Array(8 - LIMIT).fill(402)]);
      assert.equal(await countRows(t, 'runs', F.id), LIMIT);
    });

    it('does not limit a PRO workspace', async () => {
      const P = await t.workspace('pro');
      const key = (await t.key(P.id)).key;
      const lead = await createLead(t, key);
      const call = await createCall(t, key, lead.id);
      for (let i = 0; i < LIMIT + 2; i++) await startRun(t, key, lead.id, call.id);
    });
  });
}

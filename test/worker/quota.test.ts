// The Free plan's monthly run limit (DESIGN §3 Plans): exact under concurrency, per calendar month in UTC, and a
// refused start leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.ts';
import { monthUsage } from '../../src/domain/runs/start.ts';
import { workspaceUsage } from '../../src/domain/workspaces/usage.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { count, createProspect, type Prospect } from './support.ts';

async function usage(t: TestApp, workspaceId: string) {
  // month::text: the two drivers hand a DATE back differently (text from pg, a Date from PGlite).
  return t.database.db.selectFrom('run_usage').select([sql<string>`month::text`.as('month'), 'runs'])
    .where('workspace_id', '=', workspaceId).orderBy('run_usage.month').execute();
}

function assertLimitProblem(res: { status: number; json: any; headers: Headers; text: string }, expected: { limit: number; used: number; resetsAt: string }) {
  assert.equal(res.status, 402, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(res.json.code, 'run_limit_reached');
  assert.equal(res.json.status, 402);
  assert.equal(typeof res.json.detail, 'string');
  assert.equal(typeof res.json.requestId, 'string');
  assert.equal(res.json.limit, expected.limit);
  assert.equal(res.json.used, expected.used);
  assert.equal(res.json.resetsAt, expected.resetsAt);
}

for (const kind of BACKENDS) {
  describe(`${kind}: Free-plan run limit`, () => {
    let t: TestApp;
    const clock = new ManualClock('2026-01-31T23:59:59.000Z');

    before(async () => {
      t = await startTestApp(kind, { clock, config: { freePlanMonthlyRuns: 5 } });
    });
    after(async () => {
      await t?.close();
    });

    it('lets exactly five of fifty simultaneous starts through, and refuses the rest with 402', async () => {
      clock.set('2026-03-10T08:00:00.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);

      const answers = await Promise.all(Array.from({ length: 50 }, () => t.api('POST', '/api/v1/runs', { key, body: prospect })));

      const accepted = answers.filter((r) => r.status === 202);
      const refused = answers.filter((r) => r.status !== 202);
      assert.equal(accepted.length, 5, `statuses: ${answers.map((r) => r.status).join(',')}`);
      assert.equal(refused.length, 45);
      for (const res of refused) assertLimitProblem(res, { limit: 5, used: 5, resetsAt: '2026-04-01T00:00:00.000Z' });
      for (const res of accepted) {
        assert.equal(res.json.status, 'QUEUED');
        assert.equal(res.headers.get('location'), `/api/v1/runs/${res.json.id}`);
      }
      assert.equal(new Set(accepted.map((r) => r.json.id)).size, 5);

      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-03-01', runs: 5 }]);
      assert.equal(await count(t.database.db, 'runs', workspace.id), 5);
      assert.equal(await count(t.database.db, 'run_steps', workspace.id), 20);
      const listed = await t.api('GET', '/api/v1/runs?limit=100', { key });
      assert.equal(listed.json.data.length, 5);
    });

    it('never limits a PRO workspace', async () => {
      clock.set('2026-03-10T08:00:00.000Z');
      const workspace = await t.workspace('pro');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      const answers = await Promise.all(Array.from({ length: 12 }, () => t.api('POST', '/api/v1/runs', { key, body: prospect })));
      assert.deepEqual(answers.map((r) => r.status), Array(12).fill(202));
      assert.equal(await count(t.database.db, 'runs', workspace.id), 12);
    });

    it('writes no usage row for a PRO workspace, whose month is counted from its runs', async () => {
      clock.set('2026-03-31T23:59:00.000Z');
      const workspace = await t.workspace('pro');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      for (let i = 0; i < 2; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      clock.set('2026-04-01T00:00:00.000Z');
      for (let i = 0; i < 7; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      assert.deepEqual(await usage(t, workspace.id), [], 'no row for the starts of an unlimited plan to queue on');
      const shown = await workspaceUsage(t.database.db, workspace.id, 5, clock);
      assert.deepEqual({ plan: shown.plan, limit: shown.limit, used: shown.used }, { plan: 'PRO', limit: null, used: 7 });
      assert.deepEqual(shown.days, [{ date: '2026-04-01', runs: 7 }]);
      assert.equal(await monthUsage(t.database.db, workspace.id, new Date('2026-03-15T00:00:00.000Z'), 'PRO'), 2);
    });

    it('counts the runs a workspace started as PRO when it moves to the Free plan in mid-month', async () => {
      clock.set('2026-06-10T10:00:00.000Z');
      const workspace = await t.workspace('pro');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      for (let i = 0; i < 4; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      await t.database.db.updateTable('workspaces').set({ plan: 'FREE' }).where('id', '=', workspace.id).execute();
      assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202, 'the fifth run of the month fits');
      assertLimitProblem(await t.api('POST', '/api/v1/runs', { key, body: prospect }), { limit: 5, used: 5, resetsAt: '2026-07-01T00:00:00.000Z' });
      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-06-01', runs: 5 }]);
      assert.equal((await workspaceUsage(t.database.db, workspace.id, 5, clock)).used, 5);
    });

    it('resets at the first instant of the next month (UTC)', async () => {
      clock.set('2026-01-31T23:59:59.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);

      for (let i = 0; i < 5; i++) {
        const res = await t.api('POST', '/api/v1/runs', { key, body: prospect });
        assert.equal(res.status, 202, res.text);
      }
      clock.set('2026-01-31T23:59:59.999Z');
      assertLimitProblem(await t.api('POST', '/api/v1/runs', { key, body: prospect }), { limit: 5, used: 5, resetsAt: '2026-02-01T00:00:00.000Z' });

      clock.set('2026-02-01T00:00:00.000Z');
      const next = await t.api('POST', '/api/v1/runs', { key, body: prospect });
      assert.equal(next.status, 202, next.text);
      assert.equal(next.json.startedAt, '2026-02-01T00:00:00.000Z');

      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-01-01', runs: 5 }, { month: '2026-02-01', runs: 1 }]);
      assert.equal(await count(t.database.db, 'runs', workspace.id), 6);
    });

    it('counts a month in UTC, not in the server\'s local time zone', async () => {
      // 2026-12-31T23:30 UTC is already January in UTC+1 and still December in UTC-5: only UTC matters.
      clock.set('2026-12-31T23:30:00.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      for (let i = 0; i < 5; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      assertLimitProblem(await t.api('POST', '/api/v1/runs', { key, body: prospect }), { limit: 5, used: 5, resetsAt: '2027-01-01T00:00:00.000Z' });
      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-12-01', runs: 5 }]);
    });

    it('a 402 creates no run, no steps, no draft and leaves the count alone', async () => {
      clock.set('2026-05-05T05:05:05.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      for (let i = 0; i < 5; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      const before = {
        runs: await count(t.database.db, 'runs'),
        steps: await count(t.database.db, 'run_steps'),
        drafts: await count(t.database.db, 'email_drafts'),
      };
      for (let i = 0; i < 3; i++) {
        assertLimitProblem(await t.api('POST', '/api/v1/runs', { key, body: prospect }), { limit: 5, used: 5, resetsAt: '2026-06-01T00:00:00.000Z' });
      }
      assert.deepEqual({
        runs: await count(t.database.db, 'runs'),
        steps: await count(t.database.db, 'run_steps'),
        drafts: await count(t.database.db, 'email_drafts'),
      }, before);
      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-05-01', runs: 5 }]);
    });

    it('a replayed request (same Idempotency-Key) is not counted again', async () => {
      clock.set('2026-08-08T08:00:00.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      const headers = { 'idempotency-key': 'start-run-once' };
      const first = await t.api('POST', '/api/v1/runs', { key, body: prospect, headers });
      assert.equal(first.status, 202, first.text);
      for (let i = 0; i < 6; i++) {
        const again = await t.api('POST', '/api/v1/runs', { key, body: prospect, headers });
        assert.equal(again.status, 202, again.text);
        assert.equal(again.json.id, first.json.id);
      }
      assert.deepEqual(await usage(t, workspace.id), [{ month: '2026-08-01', runs: 1 }]);
      assert.equal(await count(t.database.db, 'runs', workspace.id), 1);
      for (let i = 0; i < 4; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      assertLimitProblem(await t.api('POST', '/api/v1/runs', { key, body: prospect }), { limit: 5, used: 5, resetsAt: '2026-09-01T00:00:00.000Z' });
    });

    it('checks the references before the plan: an unknown lead is 404 even at the limit', async () => {
      clock.set('2026-07-01T00:00:00.000Z');
      const workspace = await t.workspace('free');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key);
      for (let i = 0; i < 5; i++) assert.equal((await t.api('POST', '/api/v1/runs', { key, body: prospect })).status, 202);
      const res = await t.api('POST', '/api/v1/runs', { key, body: { ...prospect, leadId: '00000000-0000-4000-8000-000000000000' } });
      assert.equal(res.status, 404, res.text);
    });
  });

  describe(`${kind}: Free plan with FREE_PLAN_MONTHLY_RUNS=0`, () => {
    let t: TestApp;
    let prospect: Prospect;
    let key: string;
    let workspaceId: string;

    before(async () => {
      t = await startTestApp(kind, { config: { freePlanMonthlyRuns: 0 } });
      workspaceId = (await t.workspace('free')).id;
      key = (await t.key(workspaceId)).key;
      prospect = await createProspect(t, key);
    });
    after(async () => {
      await t?.close();
    });

    it('refuses the very first run, and creates nothing', async () => {
      const res = await t.api('POST', '/api/v1/runs', { key, body: prospect });
      const now = new Date();
      const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
      assertLimitProblem(res, { limit: 0, used: 0, resetsAt });
      assert.equal(await count(t.database.db, 'runs', workspaceId), 0);
      assert.equal(await count(t.database.db, 'run_steps', workspaceId), 0);
    });

    it('still lets a PRO workspace start runs', async () => {
      const pro = await t.workspace('pro');
      const proKey = (await t.key(pro.id)).key;
      const res = await t.api('POST', '/api/v1/runs', { key: proKey, body: await createProspect(t, proKey) });
      assert.equal(res.status, 202, res.text);
    });
  });
}

// Two `leadrun worker` processes share the queue; one is killed with SIGKILL while its steps are in flight. Every
// run still reaches AWAITING_APPROVAL with four completed steps and one draft, and the event log shows that no
// step completed twice and none was started again after it completed. PostgreSQL only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { spawnLeadrun, type LeadrunProcess } from '../cli/support.ts';
import { createProspect, eventually, startRunViaApi, startWebsite, type Website } from './support.ts';

const RUNS = 8;

describe('postgres: two worker processes, one killed mid-step', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let t: TestApp;
  let site: Website;
  let key: string;
  const children: LeadrunProcess[] = [];

  const worker = () => {
    const child = spawnLeadrun(['worker'], {
      DATABASE_URL: t.databaseUrl!,
      RESEARCH_ALLOW_PRIVATE_HOSTS: 'true',
      RUN_LEASE_SECONDS: '1',
      WORKER_CONCURRENCY: '2',
      STEP_RETRY_BASE_MS: '10',
      LOG_LEVEL: 'warn',
    });
    children.push(child);
    return child;
  };

  before(async () => {
    t = await startTestApp('postgres');
    site = await startWebsite('<!doctype html><html><head><title>Analytical Engines</title></head>'
      + '<body><main><p>Analytical Engines helps 1,200 finance teams close their books in one day.</p></main></body></html>');
    key = (await t.key((await t.workspace('pro')).id)).key;
  });
  after(async () => {
    for (const child of children.splice(0)) await child.kill('SIGKILL');
    await site?.close();
    await t?.close();
  });

  it('finishes every run once, whatever the killed worker was doing', async (ctx) => {
    const db = t.database.db;
    site.hold();
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) runIds.push(await startRunViaApi(t, key, await createProspect(t, key, site.url)));

    const doomed = worker();
    const survivor = worker();
    // Both workers are in the middle of RESEARCH: each holds two runs whose website has not answered yet.
    const owners = await eventually('both workers to be mid-step on two runs each', async () => {
      doomed.assertAlive();
      survivor.assertAlive();
      const running = await db.selectFrom('runs').select(['id', 'lease_owner']).where('status', '=', 'RUNNING').where('lease_owner', 'is not', null).execute();
      const byPid = (pid: number) => running.filter((r) => r.lease_owner?.includes(`:${pid}:`)).map((r) => r.id);
      const mine = byPid(doomed.pid);
      return site.held() >= 4 && mine.length === 2 && byPid(survivor.pid).length === 2 ? { doomed: mine } : undefined;
    }, 30_000);

    await doomed.kill('SIGKILL');
    const killedAt = Date.now();
    site.release();

    await eventually('every run to await approval', async () => {
      survivor.assertAlive();
      const rows = await db.selectFrom('runs').select('status').where('id', 'in', runIds).execute();
      return rows.every((r) => r.status === 'AWAITING_APPROVAL');
    }, 60_000, 50);
    ctx.diagnostic(`all ${RUNS} runs finished ${Date.now() - killedAt} ms after the kill`);

    for (const runId of runIds) {
      const steps = await db.selectFrom('run_steps').select(['node', 'status', 'attempts']).where('run_id', '=', runId).orderBy('position').execute();
      assert.deepEqual(steps.map((s) => s.status), ['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED'], `run ${runId}`);
      const drafts = await db.selectFrom('email_drafts').select('id').where('run_id', '=', runId).execute();
      assert.equal(drafts.length, 1, `run ${runId} has one draft`);

      const events = await db.selectFrom('run_events').select(['type', 'node']).where('run_id', '=', runId).orderBy('id').execute();
      for (const node of ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER']) {
        const mine = events.filter((e) => e.node === node);
        assert.equal(mine.filter((e) => e.type === 'step.completed').length, 1, `${node} of ${runId} completed once`);
        const completedAt = mine.findIndex((e) => e.type === 'step.completed');
        assert.equal(mine.slice(completedAt + 1).filter((e) => e.type === 'step.started').length, 0, `${node} of ${runId} not started again`);
      }
      // Only the killed worker's RESEARCH attempts were lost, and each was counted.
      const research = steps[0]!;
      assert.equal(research.attempts, owners.doomed.includes(runId) ? 2 : 1, `RESEARCH attempts of ${runId}`);
      assert.deepEqual(steps.slice(1).map((s) => s.attempts), [1, 1, 1]);
    }
  });
});

// A real worker process killed with SIGKILL (DESIGN §2): its run is taken over by another `leadrun worker` once the
// lease runs out, resumes at the step that was in progress, never repeats a completed step and yields one draft.
// PostgreSQL only: several processes share one database only there.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import pg from 'pg';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { spawnLeadrun, waitForLine, type LeadrunProcess } from '../cli/support.ts';
import { assertFinishedOnce, createProspect, eventually, runRow, startRunViaApi, startWebsite, stepOf, type Website } from './support.ts';

const TITLE = 'Analytical Engines | Computing for the finance team';

describe('postgres: a worker process killed mid-run', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let t: TestApp;
  let site: Website;
  let key: string;
  const children: LeadrunProcess[] = [];

  /** A worker whose lease lasts `leaseSeconds`: 1 s, so that a killed worker's run is taken over quickly. */
  function worker(leaseSeconds = 1): LeadrunProcess {
    const child = spawnLeadrun(['worker'], {
      DATABASE_URL: t.databaseUrl!,
      RESEARCH_ALLOW_PRIVATE_HOSTS: 'true',
      RUN_LEASE_SECONDS: String(leaseSeconds),
      LOG_LEVEL: 'info',
      STEP_RETRY_BASE_MS: '10',
    });
    children.push(child);
    return child;
  }

  before(async () => {
    t = await startTestApp('postgres');
    site = await startWebsite(`<!doctype html><html><head><title>${TITLE}</title>
      <meta name="description" content="Analytical Engines builds month-end reporting tools for finance teams."></head>
      <body><main><h1>Month-end close in one day</h1>
      <p>Analytical Engines helps finance teams close the books in one day instead of four.</p></main></body></html>`);
    const workspace = await t.workspace('pro');
    key = (await t.key(workspace.id)).key;
  });
  afterEach(async () => {
    for (const child of children.splice(0)) await child.kill('SIGKILL');
    // A test that failed leaves no run for the next one's workers to take (and its website to count).
    await t.database.db.updateTable('runs').set({ status: 'CANCELLED', lease_owner: null, lease_expires_at: null })
      .where('status', 'in', ['QUEUED', 'RUNNING']).execute();
  });
  after(async () => {
    for (const child of children.splice(0)) await child.kill('SIGKILL');
    await site?.close();
    await t?.close();
  });

  it('is taken over within the lease: the run finishes with four completed steps and one draft', async (ctx) => {
    site.hold();
    const prospect = await createProspect(t, key, site.url);
    const runId = await startRunViaApi(t, key, prospect);
    const db = t.database.db;

    const first = worker();
    await eventually('the first worker to start RESEARCH and ask the website', async () => {
      first.assertAlive();
      return site.held() > 0 && (await stepOf(db, runId, 'RESEARCH')).status === 'RUNNING';
    }, 60_000);
    await first.kill('SIGKILL');
    const killedAt = Date.now();
    assert.equal(first.signal, 'SIGKILL');
    site.release();

    const interrupted = await runRow(db, runId);
    assert.equal(interrupted.status, 'RUNNING');
    assert.ok(interrupted.lease_owner, 'the dead worker still holds the lease');

    // Timed from when the second worker is up (a process's start takes seconds on a loaded machine), or the kill.
    const second = worker();
    const upAt = waitForLine(second, /"msg":"job runner started"/).then(() => Date.now(), () => Date.now());
    await eventually('the second worker to finish the run', async () => {
      second.assertAlive();
      return (await runRow(db, runId)).status === 'AWAITING_APPROVAL';
    }, 60_000, 50);
    const tookMs = Date.now() - Math.max(await upAt, killedAt);
    assert.ok(tookMs < 15_000, `taken over and finished ${tookMs} ms after the second worker was up`);
    ctx.diagnostic(`run finished ${tookMs} ms after the second worker was up, ${Date.now() - killedAt} ms after the kill (lease 1 s)`);

    // The interrupted RESEARCH attempt counts; the steps after it ran once.
    await assertFinishedOnce(db, runId, { RESEARCH: 2 });
    const research = await stepOf(db, runId, 'RESEARCH');
    assert.equal(research.output.website.fetched, true);
    assert.equal(research.output.website.title, TITLE);
    assert.notEqual((await runRow(db, runId)).lease_owner, interrupted.lease_owner);
    assert.match(second.output(), /"msg":"step completed"/);
  });

  it('several worker processes share one queue: each run is processed exactly once', async () => {
    site.release();
    const runIds: string[] = [];
    for (let i = 0; i < 12; i++) runIds.push(await startRunViaApi(t, key, await createProspect(t, key, i % 2 ? site.url : null)));
    // Nobody is killed here: a lease long enough that a busy machine's stall of a second or two, in a worker that is
    // starting, hands no run over (a takeover would count a second attempt, which this test is not about).
    const workers = [worker(15), worker(15), worker(15)];
    // Three processes start at once first: up to a minute on a loaded 2-core machine.
    for (const runId of runIds) {
      await eventually(`run ${runId} to finish`, async () => {
        for (const w of workers) w.assertAlive();
        return (await runRow(t.database.db, runId)).status === 'AWAITING_APPROVAL';
      }, 60_000, 50);
    }
    for (const runId of runIds) await assertFinishedOnce(t.database.db, runId);
  });

  it('a worker killed while its completion of ANALYSIS waits for a lock: the statement commits, no completed step is repeated', async () => {
    site.release();
    const prospect = await createProspect(t, key, site.url);
    const runId = await startRunViaApi(t, key, prospect);
    const db = t.database.db;
    const requestsBefore = site.requests();

    // Hold STRATEGY's step row: the worker commits RESEARCH's completion with ANALYSIS's start, works ANALYSIS, then
    // waits on this lock in the statement that completes ANALYSIS and starts STRATEGY.
    const blocker = new pg.Client({ connectionString: t.databaseUrl! });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM run_steps WHERE run_id = $1 AND node = 'STRATEGY' FOR UPDATE`, [runId]);

      const first = worker();
      const research = await eventually('RESEARCH to be committed', async () => {
        first.assertAlive();
        const step = await stepOf(db, runId, 'RESEARCH');
        return step.status === 'COMPLETED' ? step : undefined;
      }, 30_000);
      await eventually('the worker to wait on STRATEGY', async () => {
        const waiting = await blocker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return waiting.rows[0].n > 0;
      });
      await first.kill('SIGKILL');
      await blocker.query('ROLLBACK');
      const fetchesByFirst = site.requests() - requestsBefore;
      assert.ok(fetchesByFirst >= 1);
      // The dead worker's statement stood alone: it commits once the lock is free, as if the worker had died just
      // after. ANALYSIS's work is kept, and STRATEGY's attempt counts as one that ended with its worker.
      await eventually('the dead worker\'s statement to commit', async () => (await stepOf(db, runId, 'ANALYSIS')).status === 'COMPLETED');
      const analysis = await stepOf(db, runId, 'ANALYSIS');
      assert.deepEqual([(await stepOf(db, runId, 'STRATEGY')).status, (await stepOf(db, runId, 'STRATEGY')).attempts], ['RUNNING', 1]);

      const second = worker();
      await eventually('the second worker to finish the run', async () => {
        second.assertAlive();
        return (await runRow(db, runId)).status === 'AWAITING_APPROVAL';
      }, 20_000, 50);

      await assertFinishedOnce(db, runId, { STRATEGY: 2 });
      for (const [node, before] of [['RESEARCH', research], ['ANALYSIS', analysis]] as const) {
        const after = await stepOf(db, runId, node);
        assert.equal(after.attempts, 1, `${node} attempts`);
        assert.deepEqual(after.output, before.output, `${node} kept its first output`);
        assert.deepEqual(after.completed_at, before.completed_at);
      }
      assert.equal(site.requests() - requestsBefore, fetchesByFirst, 'the website was not read again');
    } finally {
      await blocker.end().catch(() => {});
    }
  });
});

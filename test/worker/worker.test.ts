// The run worker (DESIGN §2, §3): claim → steps → AWAITING_APPROVAL or FAILED, under a lease. Each step's output
// is committed as it completes, so a run is never processed twice, a dead worker's run is taken over at the next
// step, and a worker that lost its lease cannot write.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { ResearchOutput } from '../../src/schemas/outputs.ts';
import { LeaseLost } from '../../src/jobs/errors.ts';
import { claimNextRun } from '../../src/jobs/sql/run/claimRun.ts';
import { completeStep } from '../../src/jobs/sql/run/completeStep.ts';
import { loadSteps } from '../../src/jobs/sql/run/loadRun.ts';
import { renewLease } from '../../src/jobs/sql/run/renewRunLease.ts';
import { startStep } from '../../src/jobs/sql/run/startStep.ts';
import { MAX_ATTEMPTS } from '../../src/jobs/handlers/run.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import {
  assertFinishedOnce, createProspect, draftCount, engineWith, eventually, runReaches, runRow, setUp, startRunViaApi, stepOf, stepsOf,
} from './support.ts';
import { testOfflineEngine } from '../support/cpu.ts';

const offlineEngine = testOfflineEngine();

/** A RESEARCH output no real RESEARCH would write, so a test can tell whether the step was ever run again. */
const MARKED_RESEARCH: ResearchOutput = {
  engine: 'offline',
  website: { url: null, fetched: false, status: null, error: 'written by the dead worker', title: null, description: null, summary: null },
  facts: [{ text: 'The dead worker wrote this fact.', source: 'https://dead-worker.example/' }],
  sources: [],
};

/** A step result as a worker would complete it with the offline engine. */
const completed = (output: object) => ({ output, promptVersion: 'test', engine: 'offline' as const, model: null, usage: null, durationMs: 1 });

for (const kind of BACKENDS) {
  describe(`${kind}: worker`, () => {
    let t: TestApp;

    before(async () => {
      t = await startTestApp(kind);
    });
    after(async () => {
      await t?.close();
    });
    // Tests share the database: a run a test leaves unfinished must not be picked up by the next test's worker.
    afterEach(async () => {
      await t.database.db.updateTable('runs').set({ status: 'CANCELLED', lease_owner: null, lease_expires_at: null })
        .where('status', 'in', ['QUEUED', 'RUNNING']).execute();
    });

    it('takes a run to AWAITING_APPROVAL: four steps completed once, one draft', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const worker = await t.startWorker();
      try {
        const run = await waitForRun(t, key, runId, (r) => r.status !== 'QUEUED' && r.status !== 'RUNNING', 15_000);
        assert.equal(run.status, 'AWAITING_APPROVAL', JSON.stringify(run));
        assert.deepEqual(run.steps.map((s: any) => [s.node, s.status, s.attempts]), [
          ['RESEARCH', 'COMPLETED', 1], ['ANALYSIS', 'COMPLETED', 1], ['STRATEGY', 'COMPLETED', 1], ['WRITER', 'COMPLETED', 1],
        ]);
        for (const step of run.steps) {
          assert.ok(step.startedAt && step.completedAt, `${step.node} has its times`);
          assert.ok(step.output, `${step.node} has its output`);
        }
        assert.ok(run.completedAt);
        assert.equal(run.emailDraft.status, 'DRAFT');
        assert.equal(run.emailDraft.to, 'ada@example.com');
        await assertFinishedOnce(t.database.db, runId);
      } finally {
        await worker.stop();
      }
    });

    it('processes each of 20 runs exactly once with two workers in one process', async () => {
      const { key, prospect } = await setUp(t);
      const runIds: string[] = [];
      for (let i = 0; i < 20; i++) runIds.push(await startRunViaApi(t, key, prospect));
      const workers = [await t.startWorker({ concurrency: 3 }), await t.startWorker({ concurrency: 3 })];
      try {
        for (const runId of runIds) await runReaches(t.database.db, runId, 'AWAITING_APPROVAL', 30_000);
        for (const runId of runIds) await assertFinishedOnce(t.database.db, runId);
      } finally {
        for (const worker of workers) await worker.stop();
      }
    });

    it('takes over the run of a worker that died mid-run, after its lease, without repeating a completed step', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      const job = { runId, workspaceId: '', workerId: 'dead-worker' };

      // The dead worker: claims with a short lease, completes RESEARCH, starts ANALYSIS and is never heard of again.
      const claimed = await claimNextRun(db, 'dead-worker', new Date(), 300);
      assert.equal(claimed?.id, runId);
      job.workspaceId = claimed.workspaceId;
      assert.equal(await startStep(db, job, 'RESEARCH', 'offline', new Date()), 1);
      await completeStep(db, job, 'RESEARCH', completed(MARKED_RESEARCH), 1, new Date());
      assert.equal(await startStep(db, job, 'ANALYSIS', 'offline', new Date()), 1);
      const abandonedAt = Date.now();

      // Its own lease is the usual one: a 300 ms lease of its own, renewed every 100 ms, was lost once to a loaded
      // machine's stall (CI), and its other slot then took WRITER over, a second attempt this test does not mean.
      const worker = await t.startWorker();
      try {
        await runReaches(db, runId, 'AWAITING_APPROVAL', 10_000);
        const takenOverAfter = Date.now() - abandonedAt;
        assert.ok(takenOverAfter >= 250, `took over only after the lease ran out (${takenOverAfter} ms)`);
        await assertFinishedOnce(db, runId, { ANALYSIS: 2 });
        const research = await stepOf(db, runId, 'RESEARCH');
        assert.deepEqual(research.output, MARKED_RESEARCH, 'RESEARCH kept the output its first worker committed');
        const row = await runRow(db, runId);
        assert.notEqual(row.lease_owner, 'dead-worker');
      } finally {
        await worker.stop();
      }
    });

    it('a worker whose lease was taken cannot start or complete a step, and writes nothing', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      const now = new Date();
      const old = await claimNextRun(db, 'old-owner', now, 1_000);
      assert.equal(old?.id, runId);
      const job = { runId, workspaceId: old.workspaceId, workerId: 'old-owner' };
      await startStep(db, job, 'RESEARCH', 'offline', now);

      // Two seconds later (as the new owner's clock says) the old owner's lease has run out.
      const stolen = await claimNextRun(db, 'new-owner', new Date(now.getTime() + 2_000), 60_000);
      assert.equal(stolen?.id, runId);
      const before = await stepsOf(db, runId);

      await assert.rejects(completeStep(db, job, 'RESEARCH', completed(MARKED_RESEARCH), 1, new Date()), LeaseLost);
      await assert.rejects(startStep(db, job, 'ANALYSIS', 'offline', new Date()), LeaseLost);
      await assert.rejects(
        completeStep(db, job, 'WRITER', completed({ engine: 'offline', subject: 'Hi', body: 'Hello' }), 1, new Date(), { draft: { subject: 'Hi', body: 'Hello', to: null } }),
        LeaseLost,
      );
      assert.equal(await renewLease(db, runId, 'old-owner', new Date(), 60_000), false);

      assert.deepEqual(await stepsOf(db, runId), before, 'the old owner changed no step');
      assert.equal(await draftCount(db, runId), 0);
      const row = await runRow(db, runId);
      assert.equal(row.lease_owner, 'new-owner');
      assert.equal(row.status, 'RUNNING');

      // The new owner carries on from where the run is.
      assert.equal(await startStep(db, { ...job, workerId: 'new-owner' }, 'RESEARCH', 'offline', new Date()), 2);
      await completeStep(db, { ...job, workerId: 'new-owner' }, 'RESEARCH', completed(MARKED_RESEARCH), 2, new Date());
      assert.equal((await loadSteps(db, runId))[0]?.status, 'COMPLETED');
    });

    it("completes a step and starts the next in one commit; an endpoint added while the step worked hears of its completion", async () => {
      const { workspaceId, key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      const job = { runId, workspaceId, workerId: 'w' };
      assert.equal((await claimNextRun(db, 'w', new Date(), 60_000))?.id, runId);
      assert.equal(await startStep(db, job, 'RESEARCH', 'offline', new Date()), 1);

      // No endpoint when the run was loaded; one is added while RESEARCH works.
      const now = new Date();
      await db.insertInto('webhook_endpoints').values({
        id: crypto.randomUUID(), workspace_id: workspaceId, url: 'https://hooks.example/leadrun', secret: 'whsec_test', events: [], enabled: true,
        read_scopes: ['leads:read', 'runs:read'], created_at: now, updated_at: now,
      }).execute();
      const stepEvents = () => db.selectFrom('webhook_events').select('type').where('run_id', '=', runId).where('type', '=', 'run.step_completed').execute();

      const first = await completeStep(db, job, 'RESEARCH', completed(MARKED_RESEARCH), 1, new Date(), {
        next: { node: 'ANALYSIS', engine: 'offline' }, hasWebhooks: false,
      });
      assert.deepEqual(first, { nextAttempt: 1, hasWebhooks: true });
      assert.equal((await stepEvents()).length, 1, 'the new endpoint heard of RESEARCH');
      assert.deepEqual((await stepsOf(db, runId)).map((s) => [s.node, s.status, s.attempts]), [
        ['RESEARCH', 'COMPLETED', 1], ['ANALYSIS', 'RUNNING', 1], ['STRATEGY', 'PENDING', 0], ['WRITER', 'PENDING', 0],
      ]);
      const events = await db.selectFrom('run_events').select(['seq', 'type', 'node']).where('run_id', '=', runId).orderBy('seq').execute();
      assert.deepEqual(events.map((e) => [e.type, e.node]).slice(-2), [['step.completed', 'RESEARCH'], ['step.started', 'ANALYSIS']]);

      // With the endpoint gone, a completion that expected it writes without webhook events and says so.
      await db.updateTable('webhook_endpoints').set({ enabled: false }).where('workspace_id', '=', workspaceId).execute();
      const second = await completeStep(db, job, 'ANALYSIS', completed({ engine: 'offline' }), 1, new Date(), {
        next: { node: 'STRATEGY', engine: 'offline' }, hasWebhooks: true,
      });
      assert.deepEqual(second, { nextAttempt: 1, hasWebhooks: false });
      assert.equal((await stepEvents()).length, 1, 'a disabled endpoint hears nothing');
    });

    it('does not let a second worker claim a run whose lease is live', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      const now = new Date();
      assert.equal((await claimNextRun(db, 'first', now, 60_000))?.id, runId);
      assert.equal(await claimNextRun(db, 'second', new Date(now.getTime() + 59_000), 60_000), null);
      assert.equal((await runRow(db, runId)).lease_owner, 'first');
    });

    it("a worker's claim starts the first step that is not COMPLETED, unless its attempts are spent", async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      const start = { engine: 'offline', maxAttempts: MAX_ATTEMPTS } as const;
      let at = Date.now();
      const claim = async (worker: string) => {
        const claimed = await claimNextRun(db, worker, new Date(at), 100, start);
        assert.equal(claimed?.id, runId);
        return claimed;
      };

      const first = await claim('w-1');
      assert.deepEqual(first.started, { node: 'RESEARCH', attempt: 1 });
      assert.equal(first.loaded?.steps[0]?.status, 'PENDING', 'the steps as they were before the claim');
      const job = { runId, workspaceId: first.workspaceId, workerId: 'w-1' };
      await completeStep(db, job, 'RESEARCH', completed(MARKED_RESEARCH), 1, new Date(at));

      // Each next claim (the last lease ran out) starts ANALYSIS again, until three attempts are spent.
      for (let attempt = 1; attempt <= 3; attempt++) {
        at += 200;
        assert.deepEqual((await claim(`w-${attempt + 1}`)).started, { node: 'ANALYSIS', attempt });
      }
      at += 200;
      const spent = await claim('w-5');
      assert.equal(spent.started, null, 'no fourth attempt is started');
      assert.deepEqual((await stepsOf(db, runId)).map((s) => [s.node, s.status, s.attempts]), [
        ['RESEARCH', 'COMPLETED', 1], ['ANALYSIS', 'RUNNING', 3], ['STRATEGY', 'PENDING', 0], ['WRITER', 'PENDING', 0],
      ]);
      const events = await db.selectFrom('run_events').select(['type', 'node', 'attempt', 'engine']).where('run_id', '=', runId).orderBy('seq').execute();
      assert.deepEqual(events.map((e) => [e.type, e.node, e.attempt, e.engine]), [
        ['run.queued', null, null, null],
        ['step.started', 'RESEARCH', 1, 'offline'],
        ['step.completed', 'RESEARCH', 1, 'offline'],
        ['step.started', 'ANALYSIS', 1, 'offline'],
        ['step.started', 'ANALYSIS', 2, 'offline'],
        ['step.started', 'ANALYSIS', 3, 'offline'],
      ]);
    });

    it('retries a step that throws, with backoff, and completes the run', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const calls: number[] = [];
      const engine = engineWith({
        analyse: async (ctx) => {
          calls.push(Date.now());
          if (calls.length === 1) throw new Error('the model is overloaded');
          return offlineEngine.analyse(ctx);
        },
      });
      const worker = await t.startWorker({ engine, retryBaseMs: 150 });
      try {
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL');
        await assertFinishedOnce(t.database.db, runId, { ANALYSIS: 2 });
        assert.equal(calls.length, 2);
        const gap = calls[1]! - calls[0]!;
        assert.ok(gap >= 140, `the retry waited for its backoff (${gap} ms)`);
      } finally {
        await worker.stop();
      }
    });

    it('fails the run after three attempts of a step that always throws; the later steps are SKIPPED', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const calls: number[] = [];
      const engine = engineWith({
        analyse: async () => {
          calls.push(Date.now());
          throw new Error('the model is unreachable');
        },
      });
      const worker = await t.startWorker({ engine, retryBaseMs: 40 });
      try {
        const run = await waitForRun(t, key, runId, (r) => r.status === 'FAILED', 15_000);
        assert.equal(calls.length, MAX_ATTEMPTS);
        assert.equal(MAX_ATTEMPTS, 3);
        // Exponential backoff: 40 ms before the second attempt, 80 ms before the third.
        assert.ok(calls[1]! - calls[0]! >= 35, `first backoff ${calls[1]! - calls[0]!} ms`);
        assert.ok(calls[2]! - calls[1]! >= 75, `second backoff ${calls[2]! - calls[1]!} ms`);

        assert.ok(run.completedAt, 'a FAILED run has completedAt');
        assert.equal(run.emailDraft, null);
        const [research, analysis, strategy, writer] = run.steps;
        assert.equal(research.status, 'COMPLETED');
        assert.equal(research.attempts, 1);
        assert.equal(analysis.status, 'FAILED');
        assert.equal(analysis.attempts, 3);
        assert.equal(analysis.output, null);
        assert.match(analysis.error, /the model is unreachable/);
        assert.ok(analysis.completedAt);
        for (const step of [strategy, writer]) {
          assert.equal(step.status, 'SKIPPED');
          assert.equal(step.attempts, 0);
          assert.equal(step.output, null);
        }
        const row = await runRow(t.database.db, runId);
        assert.equal(row.lease_owner, null);
        assert.match(row.error ?? '', /ANALYSIS/);
        assert.equal(await draftCount(t.database.db, runId), 0);

        // A FAILED run is never picked up again.
        await new Promise((resolve) => setTimeout(resolve, 150));
        assert.equal(calls.length, 3);

        // FAILED is a run's dead letter: /metrics counts it with the other kinds' failures.
        const metrics = await t.api('GET', '/metrics');
        assert.match(metrics.text, /leadrun_jobs_dead\{kind="run"\} [1-9]/);
        assert.match(metrics.text, /leadrun_jobs_total\{kind="run",outcome="retried"\} [1-9]/);
        assert.match(metrics.text, /leadrun_jobs_total\{kind="run",outcome="dead"\} [1-9]/);
      } finally {
        await worker.stop();
      }
    });

    it('treats an output that fails its schema as a failed attempt and never stores it', async () => {
      const { key, prospect } = await setUp(t);
      const good = await startRunViaApi(t, key, prospect);
      let strategyCalls = 0;
      const once = engineWith({
        strategise: async (ctx) => {
          strategyCalls += 1;
          if (strategyCalls === 1) return {} as never;
          return offlineEngine.strategise(ctx);
        },
      });
      const first = await t.startWorker({ engine: once });
      try {
        await runReaches(t.database.db, good, 'AWAITING_APPROVAL');
        await assertFinishedOnce(t.database.db, good, { STRATEGY: 2 });
        const strategy = await stepOf(t.database.db, good, 'STRATEGY');
        assert.equal(typeof strategy.output.angle, 'string', 'the stored output is the valid one');
      } finally {
        await first.stop();
      }

      const bad = await startRunViaApi(t, key, prospect);
      const always = engineWith({ strategise: async () => ({}) as never });
      const second = await t.startWorker({ engine: always });
      try {
        await runReaches(t.database.db, bad, 'FAILED');
        const strategy = await stepOf(t.database.db, bad, 'STRATEGY');
        assert.equal(strategy.status, 'FAILED');
        assert.equal(strategy.attempts, 3);
        assert.equal(strategy.output, null, 'an invalid output is never stored');
        assert.match(strategy.error ?? '', /STRATEGY output does not match its schema/);
        assert.equal((await stepOf(t.database.db, bad, 'WRITER')).status, 'SKIPPED');
        assert.equal(await draftCount(t.database.db, bad), 0);
      } finally {
        await second.stop();
      }
    });

    it('gives up on a step whose three attempts all died with their workers, instead of looping forever', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      const db = t.database.db;
      // Three workers in turn: each claims the run once the last one's lease is over, starts ANALYSIS and dies.
      let at = Date.now();
      for (let i = 1; i <= 3; i++) {
        const worker = `dead-${i}`;
        const claimed = await claimNextRun(db, worker, new Date(at), 100);
        assert.equal(claimed?.id, runId);
        const job = { runId, workspaceId: claimed.workspaceId, workerId: worker };
        if (i === 1) {
          await startStep(db, job, 'RESEARCH', 'offline', new Date(at));
          await completeStep(db, job, 'RESEARCH', completed(MARKED_RESEARCH), 1, new Date(at));
        }
        assert.equal(await startStep(db, job, 'ANALYSIS', 'offline', new Date(at)), i);
        at += 200;
      }
      // The last lease ran out (its clock said so); a real worker finds three spent attempts.
      await eventually('the last lease to run out', async () => Date.now() > at);
      const calls: string[] = [];
      const worker = await t.startWorker({ engine: engineWith({ analyse: async (ctx) => { calls.push(ctx.runId); throw new Error('unreachable'); } }) });
      try {
        const row = await runReaches(db, runId, 'FAILED');
        assert.deepEqual(calls, [], 'no fourth attempt');
        assert.ok(row.completed_at);
        assert.match(row.error ?? '', /ANALYSIS/);
        const analysis = await stepOf(db, runId, 'ANALYSIS');
        assert.equal(analysis.status, 'FAILED');
        assert.equal(analysis.attempts, 3);
        assert.match(analysis.error ?? '', /3 attempts/);
        assert.deepEqual((await stepsOf(db, runId)).map((s) => s.status), ['COMPLETED', 'FAILED', 'SKIPPED', 'SKIPPED']);
      } finally {
        await worker.stop();
      }
    });

    it('stop() hands an in-progress run back at once, and another worker finishes it', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      let entered!: () => void;
      const inAnalysis = new Promise<void>((resolve) => { entered = resolve; });
      // ANALYSIS that only ends when the worker aborts it, as a model call would.
      const stuck = engineWith({
        analyse: (ctx) => new Promise((_resolve, reject) => {
          entered();
          ctx.signal?.addEventListener('abort', () => reject(ctx.signal?.reason), { once: true });
        }),
      });
      const first = await t.startWorker({ engine: stuck, leaseMs: 60_000, drainMs: 100 });
      await inAnalysis;
      assert.equal((await runRow(t.database.db, runId)).lease_owner, first.id);
      await first.stop();

      const released = await runRow(t.database.db, runId);
      assert.equal(released.status, 'RUNNING');
      assert.equal(released.lease_owner, null, 'the lease is cleared');
      assert.equal(released.lease_expires_at, null);

      // The lease was 60 s: only the hand-back lets a second worker take the run this soon.
      const second = await t.startWorker({ leaseMs: 60_000 });
      try {
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL', 5_000);
        await assertFinishedOnce(t.database.db, runId, { ANALYSIS: 2 });
      } finally {
        await second.stop();
      }
    });

    it('renews its lease while a step runs longer than the lease, so nobody takes the run over', async () => {
      const { key, prospect } = await setUp(t);
      const runId = await startRunViaApi(t, key, prospect);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      let entered = 0;
      const slow = engineWith({
        analyse: async (ctx) => {
          entered += 1;
          await gate;
          return offlineEngine.analyse(ctx);
        },
      });
      // A lease of 2 s, renewed every third of it: a busy machine may hold a renewal up a few hundred milliseconds,
      // which a shorter lease would not survive, and that is the machine's doing, not the worker's.
      const holder = await t.startWorker({ engine: slow, leaseMs: 2_000 });
      let rival: Awaited<ReturnType<typeof t.startWorker>> | null = null;
      try {
        await eventually('ANALYSIS to start', async () => (await stepOf(t.database.db, runId, 'ANALYSIS')).status === 'RUNNING');
        // The rival starts once the holder has the run (started together, either could have claimed it first).
        rival = await t.startWorker({ leaseMs: 2_000 });
        // Two and a half lease lengths pass while ANALYSIS runs; the rival polls every 50 ms all the while.
        const firstOwner = (await runRow(t.database.db, runId)).lease_owner;
        const until = Date.now() + 5_000;
        while (Date.now() < until) {
          assert.equal((await runRow(t.database.db, runId)).lease_owner, firstOwner);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        release();
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL');
        assert.equal(entered, 1);
        await assertFinishedOnce(t.database.db, runId);
      } finally {
        release();
        await holder.stop();
        await rival?.stop();
      }
    });

    it('wakes an idle worker with NOTIFY instead of waiting for its next poll', async () => {
      const { key, prospect } = await setUp(t);
      const worker = await t.startWorker({ pollMs: 60_000 });
      try {
        // Let the worker find the queue empty and go to sleep for its (long) poll.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const runId = await startRunViaApi(t, key, prospect);
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL', 5_000);
      } finally {
        await worker.stop();
      }
    });
  });
}

// Lead with a website on a private address and allowPrivateHosts false: RESEARCH says it could not read it and the
// run goes on (DESIGN §5), so a site problem is never a failed step.
for (const kind of BACKENDS) {
  describe(`${kind}: a website that cannot be read`, () => {
    let t: TestApp;
    before(async () => { t = await startTestApp(kind); });
    after(async () => { await t?.close(); });

    it('does not fail the run', async () => {
      const workspace = await t.workspace('pro');
      const { key } = await t.key(workspace.id);
      const prospect = await createProspect(t, key, 'http://127.0.0.1:9/');
      const runId = await startRunViaApi(t, key, prospect);
      const worker = await t.startWorker();
      try {
        await runReaches(t.database.db, runId, 'AWAITING_APPROVAL');
        await assertFinishedOnce(t.database.db, runId);
        const research = await stepOf(t.database.db, runId, 'RESEARCH');
        assert.equal(research.output.website.fetched, false);
        assert.equal(typeof research.output.website.error, 'string');
      } finally {
        await worker.stop();
      }
    });
  });
}

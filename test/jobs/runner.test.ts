// The job mechanism against both backends: a job enqueued in a transaction is claimed and run, retried with backoff,
// DEAD after a permanent error or its last attempt (its kind's policy's or fewer), periodic with `again`, waiting
// with `again` and `wait` without using an attempt; a kind runs at most its concurrency at a
// time; a runner that loses the lease is aborted and cannot finish the job; a job whose runner died is taken over;
// finished jobs are pruned after their retention by one hourly `jobs.prune` job; stop() ends every slot at once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DAY_MS, PRUNE_KIND, pruneHandler, schedulePruning } from '../../src/jobs/handlers/prune.ts';
import { enqueueJob } from '../../src/jobs/sql/enqueueJob.ts';
import { JOBS_CHANNEL, JobRunner } from '../../src/jobs/runner.ts';
import { PermanentError, RetryableError } from '../../src/jobs/errors.ts';
import type { ClaimedJob, JobHandler, JobSource } from '../../src/jobs/types.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import { ManualClock, systemClock, type Clock } from '../../src/clock.ts';
import { BACKENDS, createTestDatabase, silentLogger, testConfig, type TestDatabase } from '../helpers.ts';
import { testCpu } from '../support/cpu.ts';

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const kind of BACKENDS) {
  describe(`job runner (${kind})`, () => {
    let testDb: TestDatabase;
    const runners: JobRunner[] = [];
    const box = new SecretBox(randomBytes(32));

    before(async () => { testDb = await createTestDatabase(kind); });
    after(async () => {
      for (const runner of runners) await runner.stop();
      await testDb?.drop();
    });

    const db = () => testDb.database.db;
    const handler = (kindName: string, run: JobHandler['run'], extra: Partial<JobHandler> = {}): JobHandler => ({
      kind: kindName, retry: { maxAttempts: 3, delay: (_attempt, hint) => hint ?? 20 }, concurrency: 1, leaseMs: 2_000, run, ...extra,
    });
    async function start(handlers: JobHandler[], pollMs = 50, clock: Clock = systemClock): Promise<JobRunner> {
      const runner = new JobRunner({
        database: testDb.database, clock, config: testConfig(), secrets: () => box, cpu: testCpu(), logger: silentLogger, handlers, pollMs, drainMs: 500,
      });
      await runner.start();
      runners.push(runner);
      return runner;
    }
    const enqueue = (kindName: string, payload: unknown = {}, extra: { key?: string; maxAttempts?: number } = {}) =>
      db().transaction().execute((trx) => enqueueJob(trx, {
        kind: kindName, key: extra.key ?? null, workspaceId: null, payload, maxAttempts: extra.maxAttempts ?? 3, availableAt: new Date(),
      }));
    const job = (id: string) => db().selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('runs a job enqueued in a transaction, woken by NOTIFY rather than the poll, and marks it DONE', async () => {
      const seen = Promise.withResolvers<ClaimedJob>();
      // A poll of a minute: only the notice can wake the slot in time.
      const runner = await start([handler('t.notify', async (claimed) => { seen.resolve(claimed); })], 60_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { id } = await enqueue('t.notify', { hello: 'world' });
      const claimed = await seen.promise;
      assert.equal(claimed.id, id);
      assert.deepEqual(claimed.payload, { hello: 'world' });
      assert.equal(claimed.attempt, 1);
      await until(async () => (await job(id)).status === 'DONE', 'DONE');
      const row = await job(id);
      assert.equal(row.attempts, 1);
      assert.ok(row.finished_at);
      await runner.stop();
    });

    it('a key is unique among the live jobs of a kind: enqueueing it again answers the live job', async () => {
      const first = await enqueue('t.keyed', {}, { key: 'k1' });
      const second = await enqueue('t.keyed', {}, { key: 'k1' });
      assert.equal(first.created, true);
      assert.equal(second.created, false);
      assert.equal(second.id, first.id);
      const other = await enqueue('t.keyed-other', {}, { key: 'k1' });
      assert.equal(other.created, true, 'another kind may use the same key');
      // Once the job is no longer live, the key is free again.
      await db().updateTable('jobs').set({ status: 'DONE' }).where('id', '=', first.id).execute();
      const third = await enqueue('t.keyed', {}, { key: 'k1' });
      assert.equal(third.created, true);
      assert.notEqual(third.id, first.id);
    });

    it('retries a failed attempt after its backoff, with the error kept, until it succeeds', async () => {
      const attempts: number[] = [];
      const done = Promise.withResolvers<void>();
      const delays: number[] = [];
      await start([handler('t.retry', async (claimed) => {
        attempts.push(claimed.attempt);
        if (claimed.attempt < 3) throw new Error(`failure ${claimed.attempt}`);
        done.resolve();
      }, { retry: { maxAttempts: 3, delay: (attempt, hint) => { delays.push(attempt); return hint ?? 30; } } })]);
      const { id } = await enqueue('t.retry');
      await done.promise;
      await until(async () => (await job(id)).status === 'DONE', 'DONE');
      assert.deepEqual(attempts, [1, 2, 3]);
      assert.deepEqual(delays, [1, 2], 'the retry policy is asked with the failed attempt');
      const row = await job(id);
      assert.equal(row.attempts, 3);
      assert.equal(row.last_error, 'failure 2');
    });

    it('RetryableError.retryAfterMs replaces the backoff', async () => {
      let first = 0;
      await start([handler('t.retry-after', async (claimed) => {
        if (claimed.attempt === 1) {
          first = Date.now();
          throw new RetryableError('later, please', 60_000);
        }
      }, { retry: { maxAttempts: 3, delay: (_attempt, hint) => hint ?? 1 } })]);
      const { id } = await enqueue('t.retry-after');
      await until(async () => (await job(id)).last_error === 'later, please', 'the retry');
      const row = await job(id);
      assert.equal(row.status, 'QUEUED');
      assert.ok(row.available_at.getTime() - first >= 55_000, 'due a minute later, not after the backoff');
    });

    it('a PermanentError makes the job DEAD at once, and onDead records it in the same transaction', async () => {
      const dead: Array<{ id: string; message: string }> = [];
      let runs = 0;
      await start([handler('t.permanent', async () => {
        runs += 1;
        throw new PermanentError('550 no such user');
      }, {
        onDead: async (trx, claimed, error) => {
          assert.equal((await trx.selectFrom('jobs').select('status').where('id', '=', claimed.id).executeTakeFirstOrThrow()).status, 'DEAD');
          dead.push({ id: claimed.id, message: error.message });
        },
      })]);
      const { id } = await enqueue('t.permanent');
      await until(async () => (await job(id)).status === 'DEAD', 'DEAD');
      assert.equal(runs, 1);
      assert.deepEqual(dead, [{ id, message: '550 no such user' }]);
      assert.equal((await job(id)).last_error, '550 no such user');
    });

    it('after its last attempt a job is DEAD with onDead called once', async () => {
      const dead: string[] = [];
      await start([handler('t.exhausted', async (claimed) => { throw new Error(`no luck ${claimed.attempt}`); }, {
        onDead: async (_trx, _claimed, error) => { dead.push(error.message); },
      })]);
      const { id } = await enqueue('t.exhausted', {}, { maxAttempts: 2 });
      await until(async () => (await job(id)).status === 'DEAD', 'DEAD');
      const row = await job(id);
      assert.equal(row.attempts, 2);
      assert.deepEqual(dead, ['no luck 2']);
    });

    it('runs at most `concurrency` jobs of a kind at a time, and uses every slot', async () => {
      let running = 0;
      let most = 0;
      const release = Promise.withResolvers<void>();
      let started = 0;
      await start([handler('t.concurrency', async () => {
        running += 1;
        started += 1;
        most = Math.max(most, running);
        await release.promise;
        running -= 1;
      }, { concurrency: 2 })]);
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await enqueue('t.concurrency')).id);
      await until(() => started >= 2, 'two jobs running');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(running, 2, 'two slots busy, no third');
      release.resolve();
      await until(async () => {
        const rows = await db().selectFrom('jobs').select('status').where('kind', '=', 't.concurrency').execute();
        return rows.every((r) => r.status === 'DONE');
      }, 'all DONE');
      assert.equal(most, 2);
      assert.equal(started, 5);
    });

    it('a runner that loses its lease is aborted, and cannot finish the job', async () => {
      const aborted = Promise.withResolvers<unknown>();
      let finished: boolean | null = null;
      await start([handler('t.lease', async (claimed, ctx) => {
        // Another runner takes the job over (as after a stall past the lease).
        // Its lease outlasts the test: this runner's slot, free again, must not take the job back from it.
        await db().updateTable('jobs').set({ lease_owner: 'someone-else', lease_expires_at: new Date(Date.now() + 60_000) })
          .where('id', '=', claimed.id).execute();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted.resolve(ctx.signal.reason);
        finished = await ctx.db.transaction().execute((trx) => ctx.finish(trx));
        throw ctx.signal.reason;
      }, { leaseMs: 300 })]);
      const { id } = await enqueue('t.lease');
      const reason = await aborted.promise;
      assert.match(String((reason as Error).message), /lease/);
      await until(() => finished !== null, 'finish answered');
      assert.equal(finished, false);
      const row = await job(id);
      assert.equal(row.status, 'RUNNING', 'left to the runner that holds it');
      assert.equal(row.lease_owner, 'someone-else');
    });

    it('takes over a job whose runner died (its lease ran out), counting the attempt', async () => {
      const { id } = await enqueue('t.takeover');
      await db().updateTable('jobs').set({
        status: 'RUNNING', attempts: 1, lease_owner: 'dead-runner', lease_expires_at: new Date(Date.now() - 1_000),
      }).where('id', '=', id).execute();
      const seen = Promise.withResolvers<number>();
      await start([handler('t.takeover', async (claimed) => { seen.resolve(claimed.attempt); })]);
      assert.equal(await seen.promise, 2);
      await until(async () => (await job(id)).status === 'DONE', 'DONE');
    });

    it('gives up on a job whose runners died on every attempt', async () => {
      const { id } = await enqueue('t.crashes', {}, { maxAttempts: 2 });
      await db().updateTable('jobs').set({
        status: 'RUNNING', attempts: 2, lease_owner: 'dead-runner', lease_expires_at: new Date(Date.now() - 1_000),
      }).where('id', '=', id).execute();
      let ran = false;
      const dead: string[] = [];
      await start([handler('t.crashes', async () => { ran = true; }, { onDead: async (_t, _j, e) => { dead.push(e.message); } })]);
      await until(async () => (await job(id)).status === 'DEAD', 'DEAD');
      assert.equal(ran, false);
      assert.match(dead[0] ?? '', /gave up after 2 attempts/);
    });

    it('`again` queues a periodic job for its next time with its attempts counted afresh', async () => {
      const next = new Date(Date.now() + 3_600_000);
      await start([handler('t.again', async () => ({ again: next }))]);
      const { id } = await enqueue('t.again');
      await until(async () => (await job(id)).available_at.getTime() === next.getTime(), 'rescheduled');
      const row = await job(id);
      assert.equal(row.status, 'QUEUED');
      assert.equal(row.attempts, 0);
      assert.equal(row.lease_owner, null);
    });

    it('`again` with `wait` is no attempt: the failed attempts before it and the policy\'s schedule go on', async () => {
      // Fails, waits twice (as a webhook delivery waits behind an earlier one), fails, waits, then fails for good:
      // the waits neither use an attempt nor count the failed ones afresh.
      const seen: number[] = [];
      const asked: number[] = [];
      let calls = 0;
      await start([handler('t.wait', async (claimed) => {
        calls += 1;
        seen.push(claimed.attempt);
        if (calls === 2 || calls === 3 || calls === 5) return { again: new Date(Date.now() + 10), wait: true };
        throw new Error(`failure ${claimed.attempt}`);
      }, { retry: { maxAttempts: 3, delay: (attempt) => { asked.push(attempt); return 10; } } })]);
      const { id } = await enqueue('t.wait');
      await until(async () => (await job(id)).status === 'DEAD', 'DEAD');
      assert.deepEqual(seen, [1, 2, 2, 2, 3, 3]);
      assert.deepEqual(asked, [1, 2], 'the policy is asked after each failed attempt, never after a wait');
      const row = await job(id);
      assert.equal(row.attempts, 3);
      assert.equal(row.last_error, 'failure 3');
    });

    it('a job is given the lesser of its kind\'s policy\'s attempts and those it was queued with', async () => {
      const tried: number[] = [];
      await start([handler('t.policy-bound', async (claimed) => {
        tried.push(claimed.attempt);
        assert.equal(claimed.maxAttempts, 2);
        throw new Error('no luck');
      }, { retry: { maxAttempts: 2, delay: () => 10 } })]);
      const { id } = await enqueue('t.policy-bound', {}, { maxAttempts: 21 });
      await until(async () => (await job(id)).status === 'DEAD', 'DEAD');
      assert.deepEqual(tried, [1, 2]);
      assert.equal((await job(id)).attempts, 2);
    });

    it('stop() hands a job in progress back without counting its attempt', async () => {
      const began = Promise.withResolvers<void>();
      const runner = await start([handler('t.stop', async (_claimed, ctx) => {
        began.resolve();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw ctx.signal.reason;
      })]);
      const { id } = await enqueue('t.stop');
      await began.promise;
      await runner.stop();
      const row = await job(id);
      assert.equal(row.status, 'QUEUED');
      assert.equal(row.attempts, 0);
      assert.equal(row.lease_owner, null);
    });

    it('stop() ends at once a slot that was looking for work as it began, however long its poll', async () => {
      // A source whose first claim answers only when the test says: the slot is asking for work when stop() begins,
      // then hears there is none. It must end, not sleep through its minute-long poll.
      const claiming = Promise.withResolvers<void>();
      const answer = Promise.withResolvers<null>();
      const source: JobSource<{ id: string }> = {
        channel: JOBS_CHANNEL,
        wakes: () => 0,
        claim: () => { claiming.resolve(); return answer.promise; },
        renew: async () => true,
        release: async () => {},
        stats: async () => [],
      };
      const runner = new JobRunner({
        database: testDb.database, clock: systemClock, config: testConfig(), secrets: () => box, cpu: testCpu(), logger: silentLogger,
        handlers: [{ kind: 't.stop-while-claiming', concurrency: 1, leaseMs: 2_000, source, work: async () => 'done' }],
        pollMs: 60_000, drainMs: 500,
      });
      await runner.start();
      await claiming.promise;
      const stopped = runner.stop().then(() => 'stopped');
      answer.resolve(null);
      const timer = new Promise<string>((resolve) => setTimeout(resolve, 10_000, 'still asleep after 10 s').unref());
      assert.equal(await Promise.race([stopped, timer]), 'stopped');
    });

    it('jobs.prune deletes DONE jobs after a week and DEAD ones after a month, hourly, one job for the installation', async () => {
      const clock = new ManualClock(new Date());
      /** A job of `status` that ended `daysAgo` days before the clock's now (unfinished ones were made then). */
      const aged = async (status: 'QUEUED' | 'RUNNING' | 'DONE' | 'DEAD', daysAgo: number) => {
        const at = new Date(clock.now().getTime() - daysAgo * DAY_MS);
        const { id } = await enqueue('t.aged');
        await db().updateTable('jobs')
          .set({ status, available_at: at, created_at: at, updated_at: at, finished_at: status === 'DONE' || status === 'DEAD' ? at : null })
          .where('id', '=', id).execute();
        return id;
      };
      const kept = [await aged('DONE', 6), await aged('DEAD', 29), await aged('QUEUED', 90), await aged('RUNNING', 90)];
      const pruned = [await aged('DONE', 8), await aged('DEAD', 31)];

      assert.equal(await schedulePruning(db(), clock.now()), true);
      assert.equal(await schedulePruning(db(), clock.now()), false, 'every worker asks for it at start: the live one answers');
      const pruneJobs = () => db().selectFrom('jobs').selectAll().where('kind', '=', PRUNE_KIND).execute();
      assert.equal((await pruneJobs()).length, 1);

      await start([pruneHandler], 20, clock);
      const hourLater = clock.now().getTime() + 3_600_000;
      await until(async () => (await pruneJobs())[0]!.available_at.getTime() === hourLater, 'the prune job queued again for an hour later');
      const left = new Set((await db().selectFrom('jobs').select('id').where('kind', '=', 't.aged').execute()).map((r) => r.id));
      for (const id of kept) assert.ok(left.has(id), `${id} kept`);
      for (const id of pruned) assert.ok(!left.has(id), `${id} pruned`);
      const [job] = await pruneJobs();
      assert.equal(job!.status, 'QUEUED');
      assert.equal(job!.attempts, 0);

      // An hour on, the same job runs again: what has since passed its retention goes.
      const stale = await aged('DONE', 7.5);
      clock.advance(3_600_000);
      await until(async () => (await pruneJobs())[0]!.available_at.getTime() === hourLater + 3_600_000, 'the second pruning');
      assert.equal(await db().selectFrom('jobs').select('id').where('id', '=', stale).executeTakeFirst(), undefined);
      assert.equal((await pruneJobs()).length, 1, 'still one prune job');
    });
  });
}

// The model-call limiter on its own, over a real database: two limiters on one database are two worker processes
// of one installation. A clock the test moves decides when each reads the shared state again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ModelCallDeferred } from '../../src/agent/engine.ts';
import { createModelCallLimiter, shareOf, type CallSlot } from '../../src/agent/engines/limiter.ts';
import { BACKENDS, createTestDatabase, silentLogger, type TestDatabase } from '../helpers.ts';

const START = Date.parse('2026-03-02T09:00:00Z');

for (const kind of BACKENDS) {
  describe(`model-call limiter (${kind})`, () => {
    let testDb: TestDatabase;
    let time = START;
    const clock = { now: () => new Date(time) };
    let endpoints = 0;

    before(async () => { testDb = await createTestDatabase(kind); });
    after(async () => { await testDb?.drop(); });

    /** Limiters of one endpoint, each as another worker process would make it; a new endpoint for each test. */
    const processesOf = (max: number, maxWaitMs = 50) => {
      endpoints += 1;
      const model = `model-${endpoints}`;
      return () => createModelCallLimiter({ db: testDb.database.db, clock, baseUrl: 'http://127.0.0.1:9/v1/', model, max, logger: silentLogger, maxWaitMs });
    };
    const row = (model: string) => testDb.database.db.selectFrom('model_endpoints').selectAll().where('endpoint', '=', `http://127.0.0.1:9/v1 ${model}`).executeTakeFirstOrThrow();
    const deferred = (error: unknown) => error instanceof ModelCallDeferred;

    it('lets a process have its share of the limit in flight, and a waiting call the slot freed', async () => {
      const worker = processesOf(3)();
      const slots = [await worker.acquire(), await worker.acquire(), await worker.acquire()];
      const fourth = worker.acquire();
      let waiting = true;
      fourth.then(() => { waiting = false; }, () => {});
      // Only promise callbacks run before the release: no timer can fire, so a loaded machine cannot let the fourth
      // call's 50 ms wait run out first. A call given a slot at once would have it by then.
      for (let tick = 0; tick < 20; tick++) await Promise.resolve();
      assert.equal(waiting, true, 'a fourth call waits');
      await slots[0]!.release('answered');
      const granted = await fourth;
      assert.equal(await slots[0]!.release('answered'), null, 'a second release changes nothing');
      await assert.rejects(worker.acquire(), deferred, 'with three in flight again, a call waits its most and is put off');
      for (const slot of [...slots.slice(1), granted]) await slot.release('failed');
      await (await worker.acquire()).release('answered');
    });

    it('splits the limit among the processes calling the endpoint', async () => {
      const spawn = processesOf(4);
      const [a, b] = [spawn(), spawn()];
      const first = await a.acquire(); // alone: a may have all four
      time += 1_100;
      const ofB = [await b.acquire(), await b.acquire()];
      await assert.rejects(b.acquire(), deferred, 'b sees a: its share is two');
      time += 1_100;
      const second = await a.acquire(); // a reads again and sees b
      await assert.rejects(a.acquire(), deferred, 'a\'s share is two as well');
      for (const slot of [first, second, ...ofB]) await slot.release('answered');
      assert.deepEqual([shareOf(5, 2, 0), shareOf(5, 2, 1), shareOf(1, 3, 2), shareOf(16, 1, 0)], [3, 2, 1, 16]);
    });

    it('pauses every process until the Retry-After, halves the limit at most once in 5 s, and adds one back per answer', async () => {
      const spawn = processesOf(8);
      const model = `model-${endpoints}`;
      const [a, b] = [spawn(), spawn()];
      const calls = [await a.acquire(), await a.acquire()];
      await b.acquire().then((slot) => slot.release('answered'));
      const pausedUntil = await calls[0]!.release({ rateLimitedForMs: 2_000 });
      assert.deepEqual(pausedUntil, new Date(time + 2_000), 'the step that got the 429 comes back when the pause ends');
      assert.deepEqual(await calls[1]!.release({ rateLimitedForMs: 1_000 }), pausedUntil, 'a shorter Retry-After does not shorten the pause');
      let state = await row(model);
      assert.equal(state.limit_now, 4, 'halved once for the burst of 429s');
      assert.deepEqual(state.paused_until, pausedUntil);

      time += 1_100; // b's view is older than a second: it reads the pause
      await assert.rejects(b.acquire(), (error: unknown) => deferred(error) && (error as ModelCallDeferred).retryAt.getTime() === pausedUntil!.getTime());
      await assert.rejects(a.acquire(), deferred, 'the process that got the 429 does not call either');

      time = pausedUntil!.getTime() + 3_000; // 5 s after the halving
      const again = await a.acquire();
      await again.release({ rateLimitedForMs: null });
      state = await row(model);
      assert.equal(state.limit_now, 2, 'a 429 5 s later halves again');
      assert.deepEqual(state.paused_until, pausedUntil, 'a 429 without Retry-After pauses nothing');
      for (let i = 0; i < 3; i++) await (await a.acquire()).release('answered');
      time += 1_100;
      await (await a.acquire()).release('failed'); // reads again: the answers are added to the shared limit
      assert.equal((await row(model)).limit_now, 5);
    });

    it('puts the refused step off even when sharing the pause took longer than the pause', async () => {
      const slot = await processesOf(2)().acquire();
      const heardAt = time;
      const released = slot.release({ rateLimitedForMs: 1_000 });
      time += 5_000; // a loaded database answers after the Retry-After has run out
      assert.deepEqual(await released, new Date(heardAt + 1_000), 'due at once, but put off: a 429 is not a failed attempt');
    });

    it('stops waiting when the run is cancelled, and gives the slot to the next call', async () => {
      const worker = processesOf(1, 10_000)();
      const held = await worker.acquire();
      const cancel = new AbortController();
      const waiting = worker.acquire(cancel.signal);
      cancel.abort(new Error('the run was cancelled'));
      await assert.rejects(waiting, /the run was cancelled/);
      await assert.rejects(worker.acquire(AbortSignal.abort(new Error('already gone'))), /already gone/);
      const next = worker.acquire();
      await held.release('answered');
      await (await next).release('answered');
    });

    it('caps a hostile Retry-After at two minutes', async () => {
      const spawn = processesOf(2);
      const slot: CallSlot = await spawn().acquire();
      const pausedUntil = await slot.release({ rateLimitedForMs: 30 * 24 * 3600_000 });
      assert.deepEqual(pausedUntil, new Date(time + 120_000));
      assert.deepEqual((await row(`model-${endpoints}`)).paused_until, pausedUntil);
      time += 120_001;
      await (await spawn().acquire()).release('answered');
    });
  });
}

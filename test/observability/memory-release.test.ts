// src/observability/memory-release.ts: the last-resort collection runs once the event loop is quiet after being busy, and not
// again until it has been busy again. What it decides is checked on given readings of the loop's utilization, at
// intervals of a mocked clock; the loop's own readings once, on a spell of real work.
// npm test: in a process of its own (it judges the whole event loop: another file's leftover work would be busy).
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { releaseMemoryWhenQuiet } from '../../src/observability/memory-release.ts';

// An interval counts as busy from 5 % of it spent running code, by the clock. On a loaded machine a timer's callback
// that the system took the core from in its middle reached that, 2 ms of 40, then 10 ms of 200, 25 ms of 500 under a
// whole `npm test` on a slow day: a quiet spell read as busy. Only the test of real work reads the real loop.
const INTERVAL_MS = 500;

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* keep the event loop busy */ }
}

function recordingGc() {
  const calls: unknown[] = [];
  let notify: () => void = () => {};
  const gc = ((options: unknown) => { calls.push(options); notify(); }) as NodeJS.GCFunction;
  const next = () => new Promise<void>((resolve) => { notify = resolve; });
  return { gc, calls, next };
}

/** Intervals of a mocked clock, each reading the next of `readings` as the loop's utilization over it. */
function scripted(t: TestContext, readings: number[]) {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { gc, calls } = recordingGc();
  const release = releaseMemoryWhenQuiet(INTERVAL_MS, gc, () => readings.shift() ?? 0);
  t.after(() => release.stop());
  /** Runs `n` intervals; the collections made by then. */
  const intervals = (n: number) => {
    t.mock.timers.tick(INTERVAL_MS * n);
    return calls.length;
  };
  return { calls, intervals };
}

describe('releaseMemoryWhenQuiet', () => {
  it('collects once after start-up, then once after each busy spell that goes quiet', (t) => {
    const { calls, intervals } = scripted(t, [0, 0, 0, 0, 0, 0.5, 0.02, 0.03, 0, 0, 0.2, 0.005]);
    assert.equal(intervals(1), 1, 'start-up counts as busy: the first quiet interval collects');
    assert.deepEqual(calls, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    assert.equal(intervals(4), 1, 'quiet for four intervals: nothing more to hand back');
    assert.equal(intervals(1), 1, 'busy (50 %)');
    assert.equal(intervals(2), 1, 'neither busy nor quiet (2-3 %): not yet');
    assert.equal(intervals(1), 2, 'quiet after the busy spell: a collection');
    assert.equal(intervals(1), 2, 'still quiet');
    assert.equal(intervals(2), 3, 'busy (20 %), then quiet (0.5 %)');
  });

  it('never collects while the loop stays busy', (t) => {
    const { intervals } = scripted(t, [1, 0.5, 0.05, 0.9, 0.3, 0.06]);
    assert.equal(intervals(6), 0);
  });

  it("reads the loop's own utilization: a spell of real work, then quiet, makes a collection", async () => {
    const { gc, calls, next } = recordingGc();
    let called = next();
    const release = releaseMemoryWhenQuiet(INTERVAL_MS, gc);
    try {
      await called;
      called = next();
      const before = calls.length;
      spin(INTERVAL_MS * 2);
      await called;
      assert.ok(calls.length > before);
    } finally {
      release.stop();
    }
  });

  it('does nothing without gc (node started without --expose-gc)', () => {
    const release = releaseMemoryWhenQuiet(INTERVAL_MS, undefined);
    release.stop();
  });
});

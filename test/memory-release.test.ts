// src/memory-release.ts: the last-resort collection runs once the event loop is quiet after being busy, and not
// again until it has been busy again.
// npm test: in a process of its own (it judges the whole event loop: another file's leftover work would be busy).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { releaseMemoryWhenQuiet } from '../src/memory-release.ts';

// An interval counts as busy from 5 % of it spent running code, by the clock. At 40 ms that was 2 ms, which a timer's
// callback reached once on a loaded machine that took the core away in the middle of it: a busy interval, then a
// quiet one, and a second collection while the test slept. At 200 ms it was 10 ms, reached the same way under a whole
// `npm test` on a slow day. At 500 ms it is 25 ms.
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

describe('releaseMemoryWhenQuiet', () => {
  it('collects once after start-up, then once after each busy spell that goes quiet', async () => {
    const { gc, calls, next } = recordingGc();
    let called = next();
    const release = releaseMemoryWhenQuiet(INTERVAL_MS, gc);
    try {
      await called;
      assert.deepEqual(calls, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
      // Quiet for several intervals: nothing more to hand back. (Waiting for a thing not to happen needs a sleep.)
      await sleep(INTERVAL_MS * 4);
      assert.equal(calls.length, 1);
      called = next();
      spin(INTERVAL_MS * 2);
      await called;
      assert.equal(calls.length, 2);
    } finally {
      release.stop();
    }
  });

  it('never collects while the loop stays busy', async () => {
    const { gc, calls } = recordingGc();
    const release = releaseMemoryWhenQuiet(INTERVAL_MS, gc);
    try {
      for (let i = 0; i < 6; i++) {
        spin(INTERVAL_MS);
        await sleep(1);
      }
      assert.equal(calls.length, 0);
    } finally {
      release.stop();
    }
  });

  it('does nothing without gc (node started without --expose-gc)', () => {
    const release = releaseMemoryWhenQuiet(INTERVAL_MS, undefined);
    release.stop();
  });
});

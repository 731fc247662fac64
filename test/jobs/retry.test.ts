// The retry policies of the job kinds (src/jobs/retry.ts): how long after each failed attempt a job runs again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exponentialBackoff, retrySchedule } from '../../src/jobs/retry.ts';
import { stepRetry } from '../../src/jobs/handlers/run.ts';
import { MAX_RETRY_AFTER_MS } from '../../src/agent/engine.ts';

describe('retry policies', () => {
  it('doubles from the first delay up to the cap; what the other side asked replaces it, 0 included', () => {
    const policy = exponentialBackoff(100, 60_000, 15 * 60_000);
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => policy.delay(a, null)), [60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);
    assert.equal(policy.delay(3, 0), 0, 'settings mended: at once');
    assert.equal(policy.maxAttempts, 100);
  });

  it('follows a schedule, its last delay for every later attempt', () => {
    const policy = retrySchedule(6, [30_000, 120_000, 600_000]);
    assert.deepEqual([1, 2, 3, 4, 9].map((a) => policy.delay(a, null)), [30_000, 120_000, 600_000, 600_000, 600_000]);
    assert.equal(policy.delay(1, 5_000), 5_000);
  });

  it("retries a step after its backoff, or after the model endpoint's Retry-After when longer, within its bound", () => {
    const policy = stepRetry(1_000);
    assert.equal(policy.maxAttempts, 3);
    assert.equal(policy.delay(2, null), 2_000);
    assert.equal(policy.delay(1, 30_000), 30_000);
    assert.equal(policy.delay(1, 10 * MAX_RETRY_AFTER_MS), MAX_RETRY_AFTER_MS, 'a hostile Retry-After cannot hold a run for hours');
  });
});

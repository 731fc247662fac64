// The "Pipeline time" the Runs page and the run page show: what the steps took, not the wait for a person.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pipelineMs } from '../../web/src/lib/pipeline.ts';

const at = (seconds: number) => new Date(Date.UTC(2026, 2, 10, 9, 0, 0) + seconds * 1000).toISOString();
const step = (from: number | null, to: number | null) => ({ startedAt: from === null ? null : at(from), completedAt: to === null ? null : at(to) });

describe('pipelineMs', () => {
  it('adds up the time each step ran, leaving out the queue and the gaps between steps', () => {
    // Queued for 5 s, then the four steps with half a second between each.
    assert.equal(pipelineMs([step(5, 7), step(7.5, 8.5), step(9, 9.25), step(9.75, 10.5)]), 4000);
  });

  it('does not count the time a draft waited for review before it was written again', () => {
    // The first draft was ready at 4 s; an hour later a person asked for another, which WRITER wrote in 2 s.
    // The run's own startedAt → completedAt would read as an hour.
    const regenerated = [step(0, 1), step(1, 2), step(2, 3), step(3600, 3602)];
    assert.equal(pipelineMs(regenerated), 5000);
  });

  it('counts a retried step from its first start to its end, backoff included', () => {
    assert.equal(pipelineMs([step(0, 6.5), step(6.5, 7), step(7, 7.5), step(7.5, 8)]), 8000);
  });

  it('counts only steps that have ended; null when none has', () => {
    assert.equal(pipelineMs([step(0, 2), step(2, null), step(null, null), step(null, null)]), 2000);
    assert.equal(pipelineMs([step(0, null), step(null, null)]), null);
    assert.equal(pipelineMs([]), null);
  });
});

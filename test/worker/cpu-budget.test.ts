// A step whose CPU work runs over its budget (DESIGN §10): the page that cannot be read in time makes RESEARCH
// report the site as unreadable and the pipeline goes on; an engine step over its budget fails the run at once,
// with a clear error and without repeating the same work.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOfflineEngine } from '../../src/agent/engines/offline.ts';
import { createCpuPool, type CpuPool } from '../../src/cpu/pool.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createProspect, startRunViaApi, startWebsite, type Website } from './support.ts';

const PAGE = `<html><head><title>Kestrel</title></head><body><main>${'<p>Kestrel plans delivery routes for 400 carriers in 12 countries.</p>'.repeat(12_000)}</main></body></html>`;

const kind = BACKENDS.includes('pglite') ? 'pglite' : BACKENDS[0]!;

describe(`${kind}: a step over its CPU budget`, () => {
  let t: TestApp;
  let site: Website;
  let cpu: CpuPool;

  before(async () => {
    t = await startTestApp(kind);
    site = await startWebsite(PAGE);
    // No page of a megabyte is read, and no transcript analysed, in a millisecond.
    cpu = createCpuPool({ budgetMs: 1, threads: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await cpu?.close();
  });

  it('RESEARCH reports the site unreadable; ANALYSIS fails the run after one attempt', async () => {
    const workspace = await t.workspace('pro');
    const { key } = await t.key(workspace.id);
    const prospect = await createProspect(t, key, site.url);
    const runId = await startRunViaApi(t, key, prospect);
    await t.startWorker({ cpu, engine: createOfflineEngine(cpu), allowPrivateHosts: true });
    const run = await waitForRun(t, key, runId, (r) => r.status === 'FAILED' || r.status === 'AWAITING_APPROVAL', 30_000);

    assert.equal(run.status, 'FAILED');
    const [research, analysis, strategy, writer] = run.steps;
    assert.equal(research.status, 'COMPLETED');
    assert.equal(research.output.website.fetched, false);
    assert.match(research.output.website.error, /^The page at http:\/\/127\.0\.0\.1:\d+\/ could not be read: the work took longer than its CPU budget of 1 ms/);
    assert.deepEqual(research.output.facts, []);
    assert.equal(analysis.status, 'FAILED');
    assert.equal(analysis.attempts, 1, 'the same work is not tried again');
    assert.match(analysis.error, /took longer than its CPU budget of 1 ms \(CPU_BUDGET_MS\)/);
    assert.deepEqual([strategy.status, writer.status], ['SKIPPED', 'SKIPPED']);
  });
});

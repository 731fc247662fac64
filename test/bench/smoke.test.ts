// The benchmark harness (bench/run.ts), run small as a correctness check: every workload runs a few hundred
// requests against real `leadrun serve` processes and the baseline, every answer is 2xx and the report has every
// row. Never timed: the figures are the benchmark's business (npm run bench, docs/PERFORMANCE.md), not a test's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatReport, runBench } from '../../bench/run.ts';
import { BACKENDS } from '../helpers.ts';
import { seedDataDir } from '../support/templates.ts';

describe('npm run bench, small', { skip: !BACKENDS.includes('postgres') && 'the benchmark needs PostgreSQL' }, () => {
  it('runs every workload with only 2xx answers and reports every row', { timeout: 300_000 }, async () => {
    const report = await runBench({
      workspaces: 3,
      leadsPerWorkspace: 60,
      connections: 4,
      durationSec: 20,
      warmupSec: 0,
      rounds: 1,
      maxRequests: 150,
      runs: 12,
      batchRounds: 2,
      searchLeads: 1000,
      importRows: 300,
      sequenceEnrolments: 2_000,
      // The memory workload's waits are for src/observability/memory-release.ts to act, the key check's two seconds for a steady
      // figure; here each is only checked to run.
      memorySettleSec: 1,
      keyCheckSec: 0.2,
      // Its embedded databases start as copies of the migrated test template, as the other tests' do.
      prepareDataDir: seedDataDir,
      log: () => {},
    });

    const rows = report.rows.map((r) => `${r.workload} ${r.server} ${r.backend}`);
    assert.deepEqual(rows, [
      'GET /api/v1/leads?limit=50 baseline postgres',
      'GET /api/v1/leads?limit=50 leadrun postgres',
      'GET /api/v1/runs/{id} baseline postgres',
      'GET /api/v1/runs/{id} leadrun postgres',
      'POST /api/v1/leads baseline postgres',
      'POST /api/v1/leads leadrun postgres',
      'GET /api/v1/leads?limit=50 leadrun pglite',
    ]);
    for (const row of report.rows) {
      assert.equal(row.requests, 150, `${row.workload} (${row.server}, ${row.backend}) made its 150 requests`);
      assert.equal(row.non2xx, 0, `${row.workload} (${row.server}, ${row.backend}) answered only 2xx`);
      assert.equal(row.errors, 0, `${row.workload} (${row.server}, ${row.backend}) had no errors or timeouts`);
    }

    const runs = report.runs;
    assert.ok(runs, 'the runs workload is reported');
    assert.equal(runs.post.requests, 12);
    assert.equal(runs.post.non2xx + runs.post.errors, 0, 'every POST /api/v1/runs answered 202');
    assert.equal(runs.started, 12);
    assert.equal(runs.finished, 12, 'every run reached AWAITING_APPROVAL');
    assert.ok(Number.isFinite(runs.dbMsPerRun) && Number.isFinite(runs.runsPerSecond));

    const batch = report.batch;
    assert.ok(batch, 'the batch workload is reported');
    assert.equal(batch.non202, 0, 'every batch and single start answered 202');
    assert.equal(batch.size, 100);
    for (const figure of [batch.batch, batch.sequential, batch.single]) assert.ok(figure.median > 0 && figure.p95 >= figure.median);
    const search = report.search;
    assert.ok(search, 'the search workload is reported');
    assert.deepEqual(search.rows.map((r) => r.workload), [
      'GET /api/v1/leads?limit=50 (no q)', 'GET /api/v1/leads?limit=50&q= (one word)', 'GET /api/v1/leads?limit=50&q= (three words)',
      'GET /api/v1/leads/count?q= (one word)', 'GET /api/v1/leads?limit=50&q= (one word, 2 connections)',
      'GET /api/v1/leads?limit=50&q= (three words, 2 connections)',
    ]);
    for (const row of search.rows) {
      assert.equal(row.requests, 150, `${row.workload} made its 150 requests`);
      assert.equal(row.non2xx + row.errors, 0, `${row.workload} answered only 2xx`);
      assert.ok(Number.isFinite(row.p95));
    }
    assert.equal(search.plans.length, 4);
    for (const { plan } of search.plans) assert.match(plan, /Execution Time/);
    assert.equal(search.export.leads, 1000, 'the export held every lead');

    assert.ok(report.keyCheck && Number.isFinite(report.keyCheck.microsPerCheck), 'the key check is measured');
    assert.ok(report.memory.postgresAfterReadsMiB && report.memory.pgliteAfterReadsMiB, 'serve memory is read on both backends');

    assert.deepEqual(report.imports.map((f) => [f.backend, f.kind, f.created, f.updated]), [
      ['postgres', 'create', 300, 0], ['postgres', 'dedupe', 0, 300], ['pglite', 'create', 300, 0], ['pglite', 'dedupe', 0, 300],
    ], 'each import created, then updated, every row');
    for (const f of report.imports) assert.ok(f.probes >= 0 && Number.isFinite(f.slowestProbeMs) && f.seconds > 0);
    assert.ok(report.imports.filter((f) => f.kind === 'create').every((f) => f.baselineSeconds !== null && f.baselineSeconds > 0), 'the bare INSERT baseline ran');

    assert.deepEqual(report.sequences.map((f) => [f.copy, f.enrolments, f.claimed]), [['leadrun', 1_000, 50], ['leadrun', 2_000, 50]],
      'a scheduler tick at both sizes claims the same due work');

    const table = formatReport(report);
    for (const line of ['GET /api/v1/leads?limit=50', 'GET /api/v1/runs/{id}', 'POST /api/v1/leads', 'runs end to end', 'POST /api/v1/runs/batch', 'search, 1000 leads', 'export of 1000 leads', 'key check', 'resident memory', 'lead import', 'follow-up scheduler tick']) {
      assert.ok(table.includes(line), `the printed table has ${line}`);
    }
  });

  it('runs the model workload, uncapped and capped, with every run finished', { timeout: 120_000 }, async () => {
    const report = await runBench({
      only: ['model'], modelRuns: 6, modelConcurrency: 4, modelLatencyMs: 100, modelCapPerMinute: 240, rounds: 1, log: () => {},
    });
    assert.deepEqual(report.model.map((m) => [m.variant, m.runs, m.finished, m.failed]), [['uncapped', 6, 6, 0], ['capped', 6, 6, 0]]);
    for (const m of report.model) {
      assert.equal(m.calls - m.refused, 18, `${m.variant}: three answered calls a run`);
      assert.equal(m.retriedSteps, m.refused, `${m.variant}: a step put off for each 429, none retried otherwise`);
      assert.ok(m.mostInFlight <= 4 && m.runsPerMinute > 0 && m.boundPerMinute > 0 && Number.isFinite(m.leadrunCores));
    }
    assert.equal(report.model[0]!.refused, 0, 'the uncapped endpoint refuses nothing');
    assert.ok(formatReport(report).includes('| 6/6 runs, capped |'));
  });
});

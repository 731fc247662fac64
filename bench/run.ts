// `npm run bench`: leadrun against a bare node:http + pg baseline (bench/baseline.ts), on the same freshly seeded
// PostgreSQL database, with the same load generator and concurrency, in the same run; then runs end to end, a batch
// of 100 runs against 100 single starts, and the read workload on embedded PGlite. Prints the table that
// docs/PERFORMANCE.md records. Not part of `npm test` (test/bench/smoke.test.ts runs it small, as a correctness check
// only).
//
//   npm run bench                         every workload below, the model-bound runs and the peers included (about
//                                         25 minutes; the first run also installs the peers)
//   npm run bench -- --duration 5 --only leads.get,runs
//   npm run bench -- --only search        lead search at 100,000 leads in one workspace (--search-leads N)
//   npm run bench -- --json report.json   also write every figure as JSON
//   npm run bench -- --only batch --batch-rounds 30
//   npm run bench -- --rounds 1           each server measured once (by default three times, in turns; medians)
//   npm run bench -- --variant ../copy    another copy of leadrun measured in the same turns (an A/B of a change;
//                                         repeat --variant for more copies)
//   npm run bench -- --only import        POST /api/v1/leads/import of 50,000 rows on both backends (--import-rows N)
//   npm run bench -- --only model         runs bound by the model provider: 1,000 runs at 2 s a call, uncapped and at
//                                         600 requests a minute (--model-runs N, --model-concurrency K); about 9
//                                         minutes
//   npm run bench -- --only memory        serve's memory idle and after 20 s of reads, on both backends (under 2 minutes)
//   npm run bench -- --only sequences     a follow-up scheduler tick at 1,000 and at 100,000 active enrolments
//                                         (--sequence-enrolments N), 50 touches due at both (bench/sequences.ts)
//   npm run bench -- --only peers         leadrun beside Directus (lead reads and writes) and DBOS Transact (the runs'
//                                         four steps as a durable workflow), with leads.get, leads.post and runs.
//                                         Installs both from the npm registry into
//                                         node_modules/.cache/leadrun-bench-peers the first time (a few minutes) and
//                                         fails with a message saying so when the registry cannot be reached
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { RunContext } from '../src/agent/engine.ts';
import { openDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { KeyVerifier, LastUsedRecorder } from '../src/domain/keys/keys.ts';
import { leadsPageStatement } from '../src/domain/leads/leads.ts';
import { loadRun } from '../src/jobs/sql/run/loadRun.ts';
import { load, type LoadRequest, type LoadResult } from './load.ts';
import { cpuMs, residentMiB, ROOT, startBaseline, startServe, startWorker, stopAll, type Child } from './processes.ts';
import { createBenchDatabase, PG_ADMIN_URL, prospects, seed, seedSearch, type Seeded } from './seed.ts';
import { formatImports, importWorkload, type ImportFigures } from './import.ts';
import { formatModel, modelWorkload, type ModelFigures } from './model.ts';
import { formatMemory, memoryWorkload, SETTLE_MS, type MemoryFigures } from './memory.ts';
import { formatSequences, sequencesWorkload, type SequenceFigures } from './sequences.ts';
import { formatPeers, installPeers, PEER_VERSIONS, runDbos, startDirectus, type DbosFigures, type Directus, type PeerRow } from './peers.ts';
import { startSites } from './sites.ts';

export const WORKLOADS = ['leads.get', 'leads.post', 'runs.get', 'runs', 'batch', 'keycheck', 'pglite', 'search', 'import', 'memory', 'sequences', 'model', 'peers'] as const;
export type Workload = (typeof WORKLOADS)[number];
/**
 * What runBench measures unless told (the smoke test in `npm test`): the model workload takes minutes of waiting on
 * purpose, and the peers workload installs other projects from the registry. `npm run bench` measures them too.
 */
const DEFAULT_WORKLOADS = WORKLOADS.filter((w) => w !== 'model' && w !== 'peers');
/** The workloads of leadrun that the peers are compared with, measured whenever the peers are. */
const PEER_WORKLOADS: readonly Workload[] = ['leads.get', 'leads.post', 'runs'];

export interface BenchOptions {
  workspaces: number;
  leadsPerWorkspace: number;
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Caps every measured load run at this many requests (the smoke test's few hundred); the duration still applies. */
  maxRequests: number;
  /** Runs started in the end-to-end workload. */
  runs: number;
  /** Measured rounds of the batch workload: one POST /api/v1/runs/batch of 100 runs against 100 POST /api/v1/runs. */
  batchRounds: number;
  /** Leads of the one workspace the search workload searches. */
  searchLeads: number;
  /** Rows of the file the import workload sends. */
  importRows: number;
  /** Active enrolments of the sequences workload's larger size (its smaller is 1,000, or this when less). */
  sequenceEnrolments: number;
  /** The model workload: runs per variant, LLM_MAX_CONCURRENCY, the endpoint's latency and the capped variant's rate. */
  modelRuns: number;
  modelConcurrency: number;
  modelLatencyMs: number;
  modelCapPerMinute: number;
  /** Seconds of GET /api/v1/leads after which the memory workload samples serve again. */
  memoryLoadSec: number;
  /** Seconds the memory workload leaves serve alone before its idle and its quiet samples. */
  memorySettleSec: number;
  /** Seconds of API key checks the key check workload times, after its warm-up. */
  keyCheckSec: number;
  /** Separate `leadrun worker` processes for the runs workload; 0 works runs inside `serve`. */
  workerProcesses: number;
  workerConcurrency: number;
  logLevel: string;
  /** Extra environment for every leadrun process (e.g. a pool size under test). */
  env: Record<string, string>;
  only: readonly Workload[];
  /** Other copies of leadrun (directories) measured beside this one on the PostgreSQL workloads: an A/B of a change. */
  variants: string[];
  /**
   * Each PostgreSQL workload measured this many times, the servers taking turns (baseline, leadrun, variants, then
   * again), so that a slow spell of a shared machine falls on all of them; rows report the medians.
   */
  rounds: number;
  /**
   * Makes an embedded DATA_DIR migrated already, in place of a new database and its migrations (the smoke test gives
   * a copy of its migrated template); null migrates.
   */
  prepareDataDir: ((dataDir: string) => Promise<void>) | null;
  log: (line: string) => void;
}

export const DEFAULTS: BenchOptions = {
  workspaces: 100,
  leadsPerWorkspace: 1000,
  connections: 64,
  durationSec: 10,
  warmupSec: 5,
  maxRequests: 1_000_000,
  runs: 1500,
  batchRounds: 30,
  searchLeads: 100_000,
  importRows: 50_000,
  sequenceEnrolments: 100_000,
  modelRuns: 1000,
  modelConcurrency: 32,
  modelLatencyMs: 2000,
  modelCapPerMinute: 600,
  memoryLoadSec: 20,
  memorySettleSec: SETTLE_MS / 1000,
  keyCheckSec: 2,
  workerProcesses: 0,
  workerConcurrency: 16,
  logLevel: 'info',
  env: {},
  only: DEFAULT_WORKLOADS,
  variants: [],
  rounds: 3,
  prepareDataDir: null,
  log: (line) => process.stderr.write(`${line}\n`),
};

export interface Row {
  workload: string;
  /** baseline, leadrun, or `variant N` (the Nth --variant). */
  server: string;
  backend: 'postgres' | 'pglite';
  requests: number;
  non2xx: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of the server process per request, ms. */
  serverCpuMs: number | null;
  /** CPU time of the PostgreSQL sessions serving it per request, ms. */
  dbCpuMs: number | null;
  /** Throughput and p99 against the row it is compared with (the baseline; for PGlite, leadrun on PostgreSQL). */
  vs: { of: string; rps: number; p99: number } | null;
}

export interface RunsFigures {
  started: number;
  finished: number;
  failed: number;
  runsPerSecond: number;
  /** From the claim (first step started) to AWAITING_APPROVAL, ms. */
  p50: number;
  p99: number;
  post: LoadResult;
  dbMsPerRun: number;
  transactionsPerRun: number;
  leadrunCpuMsPerRun: number;
  /** CPU time of the database sessions per run (from /proc), ms. */
  dbCpuMsPerRun: number;
  /** Resident memory of serve and the workers once every run is done, MiB. */
  residentMiB: number;
  setup: string;
}

/** Milliseconds: the median, the 95th percentile and the slowest of a workload's rounds. */
export interface Latency { median: number; p95: number; max: number }

export interface BatchFigures {
  rounds: number;
  /** How many runs one request of the batch starts. */
  size: number;
  /** One POST /api/v1/runs/batch of `size` runs. */
  batch: Latency;
  /** `size` POST /api/v1/runs one after another, over one connection: the same runs started without the batch. */
  sequential: Latency;
  /** One POST /api/v1/runs among those. */
  single: Latency;
  /** Answers that were not 202 (must be none). */
  non202: number;
}

/** One request of the search workload, measured: the medians of its rounds. */
export interface SearchRow {
  workload: string;
  requests: number;
  non2xx: number;
  errors: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  serverCpuMs: number;
  dbCpuMs: number | null;
  /** p95 against the list without q, the median of each round's ratio. */
  p95VsList: number | null;
}

export interface SearchFigures {
  leads: number;
  seedSeconds: number;
  connections: number;
  rows: SearchRow[];
  /** EXPLAIN (ANALYZE, BUFFERS) of a page of a search, as leadrun plans it. */
  plans: Array<{ what: string; plan: string }>;
  /** Every lead of the workspace exported once: time, size, and serve's resident memory sampled meanwhile. */
  export: { leads: number; seconds: number; mebibytes: number; residentBeforeMiB: number; residentPeakMiB: number };
}

export interface BenchReport {
  options: Omit<BenchOptions, 'log'>;
  seeded: { workspaces: number; leads: number; calls: number; seedSeconds: number };
  rows: Row[];
  runs: RunsFigures | null;
  batch: BatchFigures | null;
  search: SearchFigures | null;
  keyCheck: { microsPerCheck: number; requestCpuMicros: number; share: number } | null;
  memory: { postgresAfterReadsMiB: number | null; pgliteAfterReadsMiB: number | null };
  imports: ImportFigures[];
  sequences: SequenceFigures[];
  model: ModelFigures[];
  /** The memory workload: serve idle and after the read load, before and after a full collection. */
  heap: MemoryFigures[];
  /** The peers workload: each peer beside leadrun, and DBOS's own figures. */
  peers: PeerRow[];
  dbos: DbosFigures[];
}

// ---------------------------------------------------------------------------------------------------------------

/** A connection to the `postgres` database, so that the harness's own statistics queries never count against the bench database. */
async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  return client;
}

async function backendPids(admin: pg.Client, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
  return rows.map((r) => r.pid);
}

/** Waits until no session is left on the database, so that every session has flushed its statistics. */
async function waitForNoSessions(admin: pg.Client, database: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await backendPids(admin, database)).length > 0) {
    if (Date.now() > deadline) throw new Error(`sessions are still open on ${database}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function databaseStats(admin: pg.Client, database: string): Promise<{ activeMs: number; commits: number }> {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ active_time: number; xact_commit: string }>(
    'SELECT active_time, xact_commit FROM pg_stat_database WHERE datname = $1', [database]);
  return { activeMs: Number(rows[0]?.active_time ?? 0), commits: Number(rows[0]?.xact_commit ?? 0) };
}

interface Measured {
  result: LoadResult;
  serverCpuMs: number;
  dbCpuMs: number | null;
}

/** A warm-up, then the measured run, with the CPU the server and its database sessions spent on it. */
async function measure(
  options: BenchOptions, label: string, server: Child & { url: string }, requests: LoadRequest[],
  db: { admin: pg.Client; name: string } | null, connections = options.connections, warmUp = true,
): Promise<Measured> {
  const base = { url: server.url, requests, connections };
  if (warmUp && options.warmupSec > 0) await load({ ...base, durationSec: options.warmupSec, maxRequests: options.maxRequests });
  const pids = db ? await backendPids(db.admin, db.name) : [];
  const dbBefore = new Map(pids.map((pid) => [pid, cpuMs(pid)]));
  const before = cpuMs(server.pid);
  const result = await load({ ...base, durationSec: options.durationSec, maxRequests: options.maxRequests });
  const serverCpuMs = (cpuMs(server.pid) - before) / Math.max(1, result.requests);
  // Sessions that ended during the run (an idle pool connection closing) are left out: /proc no longer has them.
  // Sessions opened during the run (a pool replacing the connections it closed while idle) count whole.
  let dbSpent = 0;
  for (const pid of db ? await backendPids(db.admin, db.name) : []) {
    const now = cpuMs(pid);
    if (now > 0) dbSpent += now - (dbBefore.get(pid) ?? 0);
  }
  const dbCpuMs = db ? dbSpent / Math.max(1, result.requests) : null;
  options.log(`  ${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, `
    + `${result.requests} requests (${JSON.stringify(result.statusCodes)}, ${result.errors} errors)`);
  return { result, serverCpuMs, dbCpuMs };
}

/** A server to measure in turns: its name, the requests it answers, and its database's sessions to count (or null). */
type Turn = [name: string, server: Child & { url: string }, requests: LoadRequest[], db: { admin: pg.Client; name: string } | null];

/**
 * Each server measured `rounds` times, taking turns round after round under the same conditions, and warmed up in the
 * first round only: by name, its rounds.
 */
async function inTurns(options: BenchOptions, servers: Turn[], rounds: number): Promise<Map<string, Measured[]>> {
  const measured = new Map<string, Measured[]>(servers.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    if (rounds > 1) options.log(`  round ${round + 1} of ${rounds}`);
    for (const [name, server, requests, db] of servers) {
      measured.get(name)!.push(await measure(options, name, server, requests, db, options.connections, round === 0));
    }
  }
  return measured;
}

function row(workload: string, server: Row['server'], backend: Row['backend'], m: Measured, against?: Row): Row {
  return {
    workload, server, backend,
    requests: m.result.requests, non2xx: m.result.non2xx, errors: m.result.errors,
    rps: m.result.rps, p50: m.result.p50, p99: m.result.p99,
    serverCpuMs: m.serverCpuMs, dbCpuMs: m.dbCpuMs,
    vs: against ? { of: `${against.server} (${against.backend})`, rps: m.result.rps / against.rps, p99: m.result.p99 / against.p99 } : null,
  };
}

const median = (values: number[]): number => {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * One row from several rounds of the same server: the median of each figure, and against another server the
 * median of the ratios of each round (each taken within seconds of the other).
 */
function medianRow(workload: string, server: Row['server'], rounds: Measured[], against?: { row: Row; rounds: Measured[] }): Row {
  const of = (pick: (m: Measured) => number) => median(rounds.map(pick));
  const dbCpu = rounds.map((m) => m.dbCpuMs);
  return {
    workload, server, backend: 'postgres',
    requests: of((m) => m.result.requests), non2xx: of((m) => m.result.non2xx), errors: of((m) => m.result.errors),
    rps: of((m) => m.result.rps), p50: of((m) => m.result.p50), p99: of((m) => m.result.p99),
    serverCpuMs: of((m) => m.serverCpuMs), dbCpuMs: dbCpu.every((v) => v !== null) ? median(dbCpu as number[]) : null,
    vs: against
      ? {
        of: `${against.row.server} (${against.row.backend})`,
        rps: median(rounds.map((m, i) => m.result.rps / against.rounds[i]!.result.rps)),
        p99: median(rounds.map((m, i) => m.result.p99 / against.rounds[i]!.result.p99)),
      }
      : null,
  };
}

function leadrunEnv(options: BenchOptions, extra: Record<string, string | undefined>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: options.logLevel,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    RESEARCH_ALLOW_PRIVATE_HOSTS: 'true',
    WORKER_CONCURRENCY: String(options.workerConcurrency),
    DATABASE_URL: undefined,
    DATA_DIR: undefined,
    ...options.env,
    ...extra,
  };
  return env;
}

const auth = (w: Seeded['workspaces'][number]) => ({ authorization: `Bearer ${w.key}`, 'x-workspace-id': w.id });

// ---------------------------------------------------------------------------------------------------------------

/** An embedded database in `dataDir`, migrated (or made by `prepareDataDir`). */
async function openEmbedded(dataDir: string, options: BenchOptions) {
  await options.prepareDataDir?.(dataDir);
  const embedded = await openDatabase({ databaseUrl: null, dataDir });
  try {
    if (!options.prepareDataDir) await embedded.migrate();
  } catch (error) {
    await embedded.close();
    throw error;
  }
  return embedded;
}

export async function runBench(partial: Partial<BenchOptions> = {}): Promise<BenchReport> {
  const options: BenchOptions = { ...DEFAULTS, ...partial };
  const wants = (w: Workload) => options.only.includes(w) || (options.only.includes('peers') && PEER_WORKLOADS.includes(w));
  const { log } = options;
  const { log: _log, ...reported } = options;
  const report: BenchReport = {
    options: reported,
    seeded: { workspaces: 0, leads: 0, calls: 0, seedSeconds: 0 },
    rows: [],
    runs: null,
    batch: null,
    search: null,
    keyCheck: null,
    memory: { postgresAfterReadsMiB: null, pgliteAfterReadsMiB: null },
    imports: [],
    sequences: [],
    model: [],
    heap: [],
    peers: [],
    dbos: [],
  };

  // Before anything else, so that a machine without the registry fails at once.
  const peersDir = wants('peers') ? await installPeers(log) : null;
  const sites = await startSites();
  const admin = await adminClient();
  const created = await createBenchDatabase();
  const dbRef = { admin, name: created.name };
  const peerDatabases: Array<Awaited<ReturnType<typeof createBenchDatabase>>> = [];
  let pgliteDir: string | null = null;
  let importDir: string | null = null;
  try {
    // --- Seed -------------------------------------------------------------------------------------------------
    const seedsMain = options.only.some((w) => w !== 'search' && w !== 'pglite' && w !== 'model' && w !== 'sequences');
    log(`database ${created.name}: migrating${seedsMain ? ` and seeding ${options.workspaces} workspaces × ${options.leadsPerWorkspace} leads` : ''}`);
    const seedStart = performance.now();
    const database = await openDatabase({ databaseUrl: created.url });
    let seeded: Seeded = { workspaces: [], leads: 0, calls: 0 };
    let prospectsByWorkspace: Awaited<ReturnType<typeof prospects>> = new Map();
    try {
      await database.migrate();
      // The search workload and PGlite seed databases of their own.
      if (seedsMain) {
        seeded = await seed(database.db, { workspaces: options.workspaces, leadsPerWorkspace: options.leadsPerWorkspace, siteUrl: sites.url });
        prospectsByWorkspace = await prospects(database.db, 3);
      }
    } finally {
      await database.close();
    }
    report.seeded = { workspaces: seeded.workspaces.length, leads: seeded.leads, calls: seeded.calls, seedSeconds: (performance.now() - seedStart) / 1000 };
    log(`  seeded in ${report.seeded.seedSeconds.toFixed(1)} s`);

    // --- Runs end to end (first, so that the run reads below have finished runs to read) ----------------------
    if (wants('runs') || wants('runs.get')) {
      report.runs = await runsWorkload(options, dbRef, created.url, seeded, prospectsByWorkspace);
    }
    if (peersDir && report.runs) {
      const { context, outputs } = await finishedRun(created.url);
      const dbosRun = async (mode: 'direct' | 'queue', work: 'stored' | 'leadrun') => {
        const database = await createBenchDatabase();
        peerDatabases.push(database);
        log(`DBOS Transact ${PEER_VERSIONS.dbos} (${mode}, ${work} steps): ${options.runs} workflows of four steps, ${options.workerConcurrency} at a time`);
        const dbos = await runDbos(peersDir, {
          systemDatabaseUrl: database.url, mode, work, workflows: options.runs, concurrency: options.workerConcurrency, context, outputs,
        });
        log(`  ${dbos.workflows} workflows in ${dbos.seconds.toFixed(1)} s: ${(dbos.workflows / dbos.seconds).toFixed(0)} workflows/s, `
          + `${dbos.recordedSteps} step outputs recorded; CPU ${dbos.cpuMsPerWorkflow.toFixed(1)} ms/workflow; RSS ${dbos.rssMiB.toFixed(0)} MiB`);
        if (dbos.recordedSteps !== 4 * dbos.workflows) throw new Error(`DBOS recorded ${dbos.recordedSteps} step outputs for ${dbos.workflows} workflows`);
        report.dbos.push(dbos);
        return dbos;
      };
      const what = (dbos: DbosFigures, work: 'stored' | 'leadrun', mode: 'direct' | 'queue', runs: RunsFigures) =>
        `${dbos.workflows} workflows of 4 steps ${work === 'stored' ? 'handing back a run\'s stored outputs' : 'working leadrun\'s own steps'}, `
        + `${mode === 'direct' ? `${dbos.concurrency} callers` : `a queue of workerConcurrency ${dbos.concurrency}`} · `
        + `${runs.finished} runs end to end (POST /api/v1/runs, WORKER_CONCURRENCY=${options.workerConcurrency})`;

      // The same work on both sides (leadrun's steps), in turns: leadrun's runs, then DBOS's workflows, `--rounds`
      // times, so that a slow spell of this shared machine falls on both; the first round's runs are those above.
      const pairs: Array<{ runs: RunsFigures; dbos: DbosFigures }> = [];
      for (let round = 1; round <= options.rounds; round++) {
        if (options.rounds > 1) log(`leadrun's runs and DBOS with leadrun's steps, in turns: round ${round} of ${options.rounds}`);
        const runs = round === 1 ? report.runs : await runsWorkload(options, dbRef, created.url, seeded, prospectsByWorkspace);
        pairs.push({ runs, dbos: await dbosRun('direct', 'leadrun') });
      }
      const rateOf = (dbos: DbosFigures) => dbos.workflows / dbos.seconds;
      const middle = <T>(items: T[], by: (item: T) => number): T => items.toSorted((x, y) => by(x) - by(y))[Math.floor((items.length - 1) / 2)]!;
      const runs = middle(pairs.map((p) => p.runs), (r) => r.runsPerSecond);
      for (const [mode, work] of [['direct', 'stored'], ['queue', 'stored']] as const) {
        const dbos = await dbosRun(mode, work);
        report.peers.push({
          peer: `DBOS Transact ${PEER_VERSIONS.dbos}`, what: what(dbos, work, mode, runs),
          peerRate: rateOf(dbos), leadrunRate: runs.runsPerSecond, ratio: runs.runsPerSecond / rateOf(dbos),
          peerP99: dbos.p99, leadrunP99: runs.p99, peerRssMiB: dbos.rssMiB, leadrunRssMiB: runs.residentMiB,
        });
      }
      const dbos = middle(pairs.map((p) => p.dbos), rateOf);
      const rounds = pairs.length > 1
        ? ` · in turns, ${pairs.length} rounds (leadrun ${pairs.map((p) => p.runs.runsPerSecond.toFixed(0)).join('/')} runs/s, `
          + `DBOS ${pairs.map((p) => rateOf(p.dbos).toFixed(0)).join('/')} workflows/s), medians`
        : '';
      report.peers.push({
        peer: `DBOS Transact ${PEER_VERSIONS.dbos}`, what: `${what(dbos, 'leadrun', 'direct', runs)}${rounds}`,
        peerRate: rateOf(dbos), leadrunRate: runs.runsPerSecond, ratio: median(pairs.map((p) => p.runs.runsPerSecond / rateOf(p.dbos))),
        peerP99: dbos.p99, leadrunP99: runs.p99, peerRssMiB: dbos.rssMiB, leadrunRssMiB: runs.residentMiB,
      });
    }

    // --- Reads and writes on PostgreSQL, against the baseline -------------------------------------------------
    if (wants('leads.get') || wants('leads.post') || wants('runs.get') || wants('keycheck')) {
      const env = leadrunEnv(options, { DATABASE_URL: created.url });
      const serve = await startServe({ env, worker: false });
      const baseline = await startBaseline({ ...process.env, DATABASE_URL: created.url, POOL_SIZE: options.env.PG_POOL_SIZE ?? '10' });
      const variants: Array<[string, Child & { url: string }]> = [];
      for (const [i, root] of options.variants.entries()) variants.push([`variant ${i + 1}`, await startServe({ env, worker: false, root })]);
      let directus: { server: Directus; db: typeof dbRef } | null = null;
      if (peersDir) {
        const database = await createBenchDatabase();
        peerDatabases.push(database);
        log(`Directus ${PEER_VERSIONS.directus} on database ${database.name}: bootstrapping, the leads collection, ${seeded.leads} leads`);
        directus = { server: await startDirectus(peersDir, database.url, seeded.leads, sites.url), db: { admin, name: database.name } };
      }
      // Directus's rows wait for its resident memory, read once it has taken every load.
      const directusRows: Array<Omit<PeerRow, 'peerRssMiB' | 'leadrunRssMiB'>> = [];
      const peerHeaders = (d: Directus) => ({ authorization: `Bearer ${d.token}`, 'content-type': 'application/json' });
      // The baseline, leadrun, the variants and Directus (when there are some) take turns, round after round, under
      // the same conditions; each is warmed up in the first round only. Directus answers its own requests for the
      // same job (`peer`), on its own database.
      const compare = async (workload: string, requests: LoadRequest[], peer?: { what: string; requests: LoadRequest[] }) => {
        const servers: Turn[] = [
          ['baseline', baseline, requests, dbRef], ['leadrun', serve, requests, dbRef],
          ...variants.map(([name, server]): Turn => [name, server, requests, dbRef]),
          ...(directus && peer ? [['directus', directus.server, peer.requests, directus.db] satisfies Turn] : []),
        ];
        const rounds = await inTurns(options, servers, options.rounds);
        const base = medianRow(workload, 'baseline', rounds.get('baseline')!);
        report.rows.push(base);
        for (const [name] of servers.slice(1)) {
          report.rows.push(medianRow(workload, name, rounds.get(name)!, { row: base, rounds: rounds.get('baseline')! }));
        }
        const peerRounds = rounds.get('directus');
        if (directus && peer && peerRounds) {
          const ours = rounds.get('leadrun')!;
          const of = (measured: Measured[], pick: (m: Measured) => number) => median(measured.map(pick));
          directusRows.push({
            peer: `Directus ${PEER_VERSIONS.directus}`, what: `${peer.what} · ${workload}`,
            peerRate: of(peerRounds, (m) => m.result.rps), leadrunRate: of(ours, (m) => m.result.rps),
            ratio: median(ours.map((m, i) => m.result.rps / peerRounds[i]!.result.rps)),
            peerP99: of(peerRounds, (m) => m.result.p99), leadrunP99: of(ours, (m) => m.result.p99),
          });
        }
      };
      try {
        if (wants('leads.get')) {
          log('GET /api/v1/leads?limit=50');
          const requests = seeded.workspaces.map((w) => ({ method: 'GET' as const, path: '/api/v1/leads?limit=50', headers: auth(w) }));
          const peer = directus
            ? { what: 'GET /items/leads?limit=50', requests: [{ method: 'GET' as const, path: '/items/leads?limit=50', headers: peerHeaders(directus.server) }] }
            : undefined;
          await compare('GET /api/v1/leads?limit=50', requests, peer);
        }
        if (wants('runs.get')) {
          log('GET /api/v1/runs/{id}');
          const finished = await finishedRuns(created.url, 200);
          const keyOf = new Map(seeded.workspaces.map((w) => [w.id, w]));
          const requests = finished.map((r) => ({ method: 'GET' as const, path: `/api/v1/runs/${r.id}`, headers: auth(keyOf.get(r.workspaceId)!) }));
          if (requests.length === 0) throw new Error('no finished run to read');
          await compare('GET /api/v1/runs/{id}', requests);
        }
        report.memory.postgresAfterReadsMiB = residentMiB(serve.pid);
        log(`  serve resident after the reads: ${report.memory.postgresAfterReadsMiB.toFixed(0)} MiB`);
        for (const [name, variant] of variants) log(`  ${name} resident after the reads: ${residentMiB(variant.pid).toFixed(0)} MiB`);
        if (wants('keycheck')) {
          const getLeads = report.rows.find((r) => r.server === 'leadrun' && r.workload.startsWith('GET /api/v1/leads'));
          report.keyCheck = await keyCheck(created.url, seeded, getLeads?.serverCpuMs ?? null, options.keyCheckSec, log);
        }
        if (wants('leads.post')) {
          log('POST /api/v1/leads');
          const body = JSON.stringify({ name: 'Grace Hopper', email: 'grace@example.com', companyName: 'Compilers Inc', companyWebsite: 'https://example.com' });
          const requests = seeded.workspaces.map((w) => ({
            method: 'POST' as const, path: '/api/v1/leads', headers: { ...auth(w), 'content-type': 'application/json' }, body,
          }));
          const peer = directus
            ? {
              what: 'POST /items/leads',
              requests: [{
                method: 'POST' as const, path: '/items/leads', headers: peerHeaders(directus.server),
                body: JSON.stringify({ name: 'Grace Hopper', email: 'grace@example.com', company_name: 'Compilers Inc', company_website: 'https://example.com', status: 'DISCOVERY' }),
              }],
            }
            : undefined;
          await compare('POST /api/v1/leads', requests, peer);
        }
        if (directus) {
          const [peerRss, ourRss] = [residentMiB(directus.server.pid), residentMiB(serve.pid)];
          log(`  resident after the loads: Directus ${peerRss.toFixed(0)} MiB, leadrun serve ${ourRss.toFixed(0)} MiB`);
          report.peers.push(...directusRows.map((r) => ({ ...r, peerRssMiB: peerRss, leadrunRssMiB: ourRss })));
        }
      } finally {
        await directus?.server.stop();
        await serve.stop();
        await baseline.stop();
        for (const [, variant] of variants) await variant.stop();
      }
    }

    // --- Many runs in one request, against as many single requests ---------------------------------------------
    if (wants('batch')) report.batch = await batchWorkload(options, created.url, seeded);

    // --- Lead search at 100,000 leads in one workspace, in a database of its own -------------------------------
    if (wants('search')) report.search = await searchWorkload(options, admin);
    // --- Lead import on PostgreSQL and on PGlite ---------------------------------------------------------------
    if (wants('import')) {
      log(`POST /api/v1/leads/import of ${options.importRows} rows`);
      const [into, other] = seeded.workspaces;
      if (!into || !other) throw new Error('the import workload needs two workspaces');
      report.imports.push(...await importWorkload({
        backend: 'postgres',
        env: leadrunEnv(options, { DATABASE_URL: created.url }),
        workspace: into,
        baselineWorkspaceId: other.id,
        open: async () => {
          const database = await openDatabase({ databaseUrl: created.url });
          return { db: database.db, close: () => database.close() };
        },
      }, options.importRows, log));
      importDir = await mkdtemp(path.join(tmpdir(), 'leadrun-bench-import-'));
      const embedded = await openEmbedded(importDir, options);
      let workspaces: Seeded['workspaces'];
      try {
        workspaces = (await seed(embedded.db, { workspaces: 2, leadsPerWorkspace: 0, siteUrl: sites.url })).workspaces;
      } finally {
        await embedded.close();
      }
      const dir = importDir;
      report.imports.push(...await importWorkload({
        backend: 'pglite',
        env: leadrunEnv(options, { DATA_DIR: dir }),
        workspace: workspaces[0]!,
        baselineWorkspaceId: workspaces[1]!.id,
        open: async () => {
          const database = await openDatabase({ databaseUrl: null, dataDir: dir });
          return { db: database.db, close: () => database.close() };
        },
      }, options.importRows, log));
    }

    // --- Runs bound by the model provider, each variant on a database of its own --------------------------------
    if (wants('model')) {
      report.model = await modelWorkload({
        runs: options.modelRuns, concurrency: options.modelConcurrency, latencyMs: options.modelLatencyMs, capPerMinute: options.modelCapPerMinute,
        siteUrl: sites.url, env: leadrunEnv(options, {}), log,
      });
    }

    // --- The read workload on embedded PGlite -----------------------------------------------------------------
    let embeddedSeed: Seeded = { workspaces: [], leads: 0, calls: 0 };
    if (wants('pglite') || wants('memory')) {
      log(`PGlite: seeding ${options.workspaces} workspaces × ${options.leadsPerWorkspace} leads`);
      pgliteDir = await mkdtemp(path.join(tmpdir(), 'leadrun-bench-'));
      const embedded = await openEmbedded(pgliteDir, options);
      try {
        embeddedSeed = await seed(embedded.db, { workspaces: options.workspaces, leadsPerWorkspace: options.leadsPerWorkspace, siteUrl: sites.url });
      } finally {
        await embedded.close();
      }
    }
    const readLeads = (workspaces: Seeded['workspaces']) => workspaces.map((w) => ({ method: 'GET' as const, path: '/api/v1/leads?limit=50', headers: auth(w) }));
    if (wants('pglite')) {
      const variantDirs: string[] = [];
      const variants: Array<[string, Child & { url: string }]> = [];
      let serve: (Child & { url: string }) | undefined;
      try {
        // An embedded database is one process's: each variant serves a copy of the seeded one, taken before any server
        // opens it, and removed below even when a later step fails.
        for (const _ of options.variants) {
          const copy = await mkdtemp(path.join(tmpdir(), 'leadrun-bench-'));
          variantDirs.push(copy);
          await cp(pgliteDir!, copy, { recursive: true });
        }
        serve = await startServe({ env: leadrunEnv(options, { DATA_DIR: pgliteDir! }), worker: false });
        for (const [i, root] of options.variants.entries()) {
          variants.push([`variant ${i + 1}`, await startServe({ env: leadrunEnv(options, { DATA_DIR: variantDirs[i]! }), worker: false, root })]);
        }
        log('GET /api/v1/leads?limit=50 on PGlite');
        const requests = readLeads(embeddedSeed.workspaces);
        const onPostgres = report.rows.find((r) => r.server === 'leadrun' && r.workload.startsWith('GET /api/v1/leads'));
        // leadrun and the variants take turns, round after round, as on PostgreSQL.
        const servers = [['leadrun', serve] as const, ...variants].map(([name, server]): Turn => [name, server, requests, null]);
        const rounds = await inTurns(options, servers, variants.length ? options.rounds : 1);
        if (variants.length === 0) report.rows.push(row('GET /api/v1/leads?limit=50', 'leadrun', 'pglite', rounds.get('leadrun')![0]!, onPostgres));
        else {
          const ours: Row = { ...medianRow('GET /api/v1/leads?limit=50', 'leadrun', rounds.get('leadrun')!), backend: 'pglite' };
          report.rows.push(ours);
          for (const [name] of variants) {
            report.rows.push({ ...medianRow('GET /api/v1/leads?limit=50', name, rounds.get(name)!, { row: ours, rounds: rounds.get('leadrun')! }), backend: 'pglite' });
          }
        }
        report.memory.pgliteAfterReadsMiB = residentMiB(serve.pid);
        for (const [name, variant] of variants) log(`  ${name} resident after the reads: ${residentMiB(variant.pid).toFixed(0)} MiB`);
      } finally {
        await serve?.stop();
        for (const [, variant] of variants) await variant.stop();
        for (const dir of variantDirs) await rm(dir, { recursive: true, force: true });
      }
    }

    // --- The follow-up scheduler's tick at two sizes, each copy on databases of its own -------------------------
    if (wants('sequences')) {
      const copies = [{ name: 'leadrun', root: ROOT }, ...options.variants.map((root, i) => ({ name: `variant ${i + 1}`, root }))];
      report.sequences = await sequencesWorkload({ sizes: [Math.min(1_000, options.sequenceEnrolments), options.sequenceEnrolments], copies }, log);
    }

    // --- serve's memory, idle and after the reads, on both backends --------------------------------------------
    if (wants('memory')) {
      log(`memory: serve --no-worker idle, then after ${options.memoryLoadSec} s of GET /api/v1/leads?limit=50`);
      const common = { worker: false, connections: options.connections, durationSec: options.memoryLoadSec, maxRequests: options.maxRequests,
        settleMs: options.memorySettleSec * 1000 };
      report.heap.push(await memoryWorkload({
        ...common, backend: 'postgres', env: leadrunEnv(options, { DATABASE_URL: created.url }), requests: readLeads(seeded.workspaces),
      }, log));
      report.heap.push(await memoryWorkload({
        ...common, backend: 'pglite', env: leadrunEnv(options, { DATA_DIR: pgliteDir! }), requests: readLeads(embeddedSeed.workspaces),
      }, log));
    }
    return report;
  } finally {
    await stopAll();
    await admin.end().catch(() => {});
    await created.drop();
    for (const database of peerDatabases) await database.drop();
    await sites.close();
    if (pgliteDir) await rm(pgliteDir, { recursive: true, force: true });
    if (importDir) await rm(importDir, { recursive: true, force: true });
  }
}

/** One finished run as the worker loaded it (lead, call, sender) and its four step outputs in run order, for DBOS. */
async function finishedRun(url: string): Promise<{ context: RunContext; outputs: unknown[] }> {
  const database = await openDatabase({ databaseUrl: url });
  try {
    const run = await database.db.selectFrom('runs')
      .select(['id', 'workspace_id', 'lead_id', 'call_id', 'created_by_user_id'])
      .where('status', '=', 'AWAITING_APPROVAL').orderBy('completed_at').limit(1).executeTakeFirst();
    const loaded = run && await loadRun(database.db, {
      id: run.id, workspaceId: run.workspace_id, leadId: run.lead_id, callId: run.call_id, createdByUserId: run.created_by_user_id,
    });
    if (!loaded || loaded.steps.length !== 4) throw new Error('no finished run with its four steps to give DBOS');
    return { context: loaded.context, outputs: loaded.steps.map((step) => step.output) };
  } finally {
    await database.close();
  }
}

async function finishedRuns(url: string, limit: number): Promise<Array<{ id: string; workspaceId: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; workspace_id: string }>(
      `SELECT id, workspace_id FROM runs WHERE status = 'AWAITING_APPROVAL' ORDER BY completed_at LIMIT $1`, [limit]);
    return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
  } finally {
    await client.end();
  }
}

/**
 * Runs end to end: `amount` POST /api/v1/runs, then the worker until every run is AWAITING_APPROVAL. Database time
 * is PostgreSQL's own `active_time` of the bench database (time its sessions spent executing statements), from a
 * moment with no session open to one after every leadrun process has exited, less the harness's own polling.
 */
async function runsWorkload(
  options: BenchOptions, db: { admin: pg.Client; name: string }, url: string, seeded: Seeded,
  prospectsByWorkspace: Map<string, Array<{ leadId: string; callId: string }>>,
): Promise<RunsFigures> {
  const { log } = options;
  const setup = options.workerProcesses > 0
    ? `serve --no-worker + ${options.workerProcesses} × leadrun worker, WORKER_CONCURRENCY=${options.workerConcurrency}`
    : `serve with its worker, WORKER_CONCURRENCY=${options.workerConcurrency}`;
  log(`runs end to end: ${options.runs} runs (${setup})`);
  // What came before (an earlier round's runs) is not counted.
  const since = new Date();
  await waitForNoSessions(db.admin, db.name);
  const before = await databaseStats(db.admin, db.name);

  const env = leadrunEnv(options, { DATABASE_URL: url });
  const serve = await startServe({ env, worker: options.workerProcesses === 0 });
  const workers: Child[] = [];
  const monitor = new pg.Client({ connectionString: url });
  let monitorMs = 0;
  let result: LoadResult;
  let leadrunCpuMs = 0;
  let residentAfterMiB = NaN;
  let dbCpu = () => 0;
  let stopSampling = async () => {};
  try {
    for (let i = 0; i < options.workerProcesses; i++) workers.push(await startWorker(env));
    await monitor.connect();
    const processes = [serve, ...workers];
    const cpuBefore = processes.reduce((sum, p) => sum + cpuMs(p.pid), 0);
    const requests: LoadRequest[] = [];
    for (const w of seeded.workspaces) {
      for (const p of prospectsByWorkspace.get(w.id) ?? []) {
        requests.push({ method: 'POST', path: '/api/v1/runs', headers: { ...auth(w), 'content-type': 'application/json' }, body: JSON.stringify(p) });
      }
    }
    // The CPU of the database's sessions: sampled from /proc while the workload runs (sessions come and go).
    const sessionCpu = new Map<number, { first: number; last: number }>();
    const existing = new Set(await backendPids(db.admin, db.name));
    const sampleSessions = async () => {
      for (const pid of await backendPids(db.admin, db.name)) {
        const cpu = cpuMs(pid);
        const seen = sessionCpu.get(pid);
        if (seen) seen.last = Math.max(seen.last, cpu);
        else sessionCpu.set(pid, { first: existing.has(pid) ? cpu : 0, last: cpu });
      }
    };
    const sampler = setInterval(() => { void sampleSessions().catch(() => {}); }, 200);
    dbCpu = () => [...sessionCpu.values()].reduce((sum, s) => sum + s.last - s.first, 0);
    stopSampling = async () => { clearInterval(sampler); await sampleSessions().catch(() => {}); };
    const deadline = Date.now() + 60_000 + options.runs * 50;
    result = await load({ url: serve.url, requests, connections: Math.min(16, options.connections), durationSec: 60, maxRequests: options.runs });
    log(`  POST /api/v1/runs: ${result.requests} requests, ${JSON.stringify(result.statusCodes)}, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`);
    for (;;) {
      const began = performance.now();
      const { rows } = await monitor.query<{ open: string }>(`SELECT count(*) AS open FROM runs WHERE status IN ('QUEUED', 'RUNNING')`);
      monitorMs += performance.now() - began;
      if (Number(rows[0]?.open) === 0) break;
      if (Date.now() > deadline) throw new Error(`runs still open after the deadline: ${rows[0]?.open}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await stopSampling();
    leadrunCpuMs = processes.reduce((sum, p) => sum + cpuMs(p.pid), 0) - cpuBefore;
    residentAfterMiB = processes.reduce((sum, p) => sum + residentMiB(p.pid), 0);
  } finally {
    await stopSampling();
    await monitor.end().catch(() => {});
    for (const w of workers) await w.stop();
    await serve.stop();
  }
  await waitForNoSessions(db.admin, db.name);
  const after = await databaseStats(db.admin, db.name);

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ started: string; finished: string; failed: string; seconds: number; p50: number; p99: number }>(`
      WITH claimed AS (
        SELECT r.id, r.status, r.started_at, r.completed_at,
               (SELECT min(e.occurred_at) FROM run_events e WHERE e.run_id = r.id AND e.type = 'step.started') AS claimed_at
        FROM runs r WHERE r.started_at >= $1)
      SELECT count(*) AS started,
             count(*) FILTER (WHERE status = 'AWAITING_APPROVAL') AS finished,
             count(*) FILTER (WHERE status = 'FAILED') AS failed,
             extract(epoch FROM max(completed_at) - min(started_at))::float8 AS seconds,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - claimed_at) * 1000)::float8 AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - claimed_at) * 1000)::float8 AS p99
      FROM claimed`, [since]);
    const r = rows[0]!;
    const finished = Number(r.finished);
    const figures: RunsFigures = {
      started: Number(r.started),
      finished,
      failed: Number(r.failed),
      runsPerSecond: finished / Math.max(0.001, r.seconds),
      p50: r.p50,
      p99: r.p99,
      post: result,
      dbMsPerRun: (after.activeMs - before.activeMs - monitorMs) / Math.max(1, finished),
      transactionsPerRun: (after.commits - before.commits) / Math.max(1, finished),
      leadrunCpuMsPerRun: leadrunCpuMs / Math.max(1, finished),
      dbCpuMsPerRun: dbCpu() / Math.max(1, finished),
      residentMiB: residentAfterMiB,
      setup,
    };
    log(`  ${finished}/${figures.started} runs AWAITING_APPROVAL (${figures.failed} failed): ${figures.runsPerSecond.toFixed(0)} runs/s; `
      + `claim→draft p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms; database ${figures.dbMsPerRun.toFixed(2)} ms/run, `
      + `${figures.transactionsPerRun.toFixed(1)} transactions/run; PG CPU ${figures.dbCpuMsPerRun.toFixed(1)} ms/run; leadrun CPU ${figures.leadrunCpuMsPerRun.toFixed(1)} ms/run; `
      + `resident ${figures.residentMiB.toFixed(0)} MiB`);
    return figures;
  } finally {
    await client.end();
  }
}

const latencyOf = (values: number[]): Latency => {
  const sorted = values.toSorted((a, b) => a - b);
  return { median: median(sorted), p95: sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)]!, max: sorted.at(-1)! };
};

/**
 * POST /api/v1/runs/batch with 100 runs, against the same 100 runs started by 100 POST /api/v1/runs one after another
 * (what a client without the batch does), each round timing both in turn on one keep-alive connection, so that a slow
 * spell of the machine falls on both. `serve --no-worker`: the runs stay queued, and only the requests are measured.
 * Each round uses the next workspace, so no workspace's runs pile up.
 */
async function batchWorkload(options: BenchOptions, url: string, seeded: Seeded): Promise<BatchFigures> {
  const { log } = options;
  const size = 100;
  log(`POST /api/v1/runs/batch (${size} runs) against ${size} × POST /api/v1/runs in sequence, ${options.batchRounds} rounds`);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  let items: Awaited<ReturnType<typeof prospects>>;
  try {
    items = await prospects(db, size);
  } finally {
    await db.destroy();
  }
  const serve = await startServe({ env: leadrunEnv(options, { DATABASE_URL: url }), worker: false });
  const times = { batch: [] as number[], sequential: [] as number[], single: [] as number[] };
  let non202 = 0;
  const post = async (w: Seeded['workspaces'][number], path: string, body: unknown): Promise<number> => {
    const began = performance.now();
    const res = await fetch(`${serve.url}${path}`, { method: 'POST', headers: { ...auth(w), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    if (res.status !== 202) non202 += 1;
    return performance.now() - began;
  };
  try {
    const warmUp = 3;
    for (let round = 0; round < warmUp + options.batchRounds; round++) {
      const w = seeded.workspaces[round % seeded.workspaces.length]!;
      const mine = items.get(w.id) ?? [];
      if (mine.length === 0) throw new Error(`workspace ${w.id} has no call to start runs for`);
      const runs = Array.from({ length: size }, (_, i) => mine[i % mine.length]!);
      const batch = await post(w, '/api/v1/runs/batch', { runs });
      let sequential = 0;
      const singles: number[] = [];
      for (const run of runs) {
        const took = await post(w, '/api/v1/runs', run);
        singles.push(took);
        sequential += took;
      }
      if (round < warmUp) continue;
      times.batch.push(batch);
      times.sequential.push(sequential);
      times.single.push(...singles);
    }
  } finally {
    await serve.stop();
  }
  const figures: BatchFigures = {
    rounds: options.batchRounds, size, batch: latencyOf(times.batch), sequential: latencyOf(times.sequential), single: latencyOf(times.single), non202,
  };
  log(`  batch of ${size}: median ${figures.batch.median.toFixed(1)} ms, p95 ${figures.batch.p95.toFixed(1)} ms; ${size} single POSTs: `
    + `median ${figures.sequential.median.toFixed(1)} ms, p95 ${figures.sequential.p95.toFixed(1)} ms (one: median ${figures.single.median.toFixed(2)} ms); ${non202} not 202`);
  return figures;
}

const SEARCH_ONE_WORD = ['northwind', 'ångström', 'FABRIKAM', 'hopper', 'analytics', '48213'];
const SEARCH_THREE_WORDS = ['zoë ångström northwind', 'ada hopper labs', 'JÜRGEN müller globex', 'björn nguyen energy', 'emma rossi 1234'];

/**
 * Lead search on PostgreSQL: one workspace of `searchLeads` leads (names with accents, a company per lead), and
 * serve answering GET /api/v1/leads with a one-word and a three-word q (each a rotation of several searches, from a
 * word one lead in ten holds to one only one lead holds), the count of a one-word search, and beside them, in the
 * same rounds, the same list without q. Then the plans, and an export of every lead.
 */
async function searchWorkload(options: BenchOptions, admin: pg.Client): Promise<SearchFigures> {
  const { log } = options;
  const created = await createBenchDatabase();
  const dbRef = { admin, name: created.name };
  try {
    log(`search: seeding one workspace with ${options.searchLeads} leads (database ${created.name})`);
    const seedStart = performance.now();
    const database = await openDatabase({ databaseUrl: created.url });
    let w: Awaited<ReturnType<typeof seedSearch>>;
    try {
      await database.migrate();
      w = await seedSearch(database.db, options.searchLeads);
    } finally {
      await database.close();
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`  seeded in ${seedSeconds.toFixed(1)} s`);

    const connections = Math.min(8, options.connections);
    const get = (path: string): LoadRequest => ({ method: 'GET', path, headers: auth(w) });
    const q = (words: string) => encodeURIComponent(words);
    const oneWord = SEARCH_ONE_WORD.map((word) => get(`/api/v1/leads?limit=50&q=${q(word)}`));
    const threeWords = SEARCH_THREE_WORDS.map((words) => get(`/api/v1/leads?limit=50&q=${q(words)}`));
    // At `connections` the two cores are saturated and p95 is mostly the queue; at 2 (one request per core) it is
    // what one person typing in the search box waits.
    const workloads: Array<[string, LoadRequest[], number]> = [
      ['GET /api/v1/leads?limit=50 (no q)', [get('/api/v1/leads?limit=50')], connections],
      ['GET /api/v1/leads?limit=50&q= (one word)', oneWord, connections],
      ['GET /api/v1/leads?limit=50&q= (three words)', threeWords, connections],
      ['GET /api/v1/leads/count?q= (one word)', SEARCH_ONE_WORD.map((word) => get(`/api/v1/leads/count?q=${q(word)}`)), connections],
      ['GET /api/v1/leads?limit=50&q= (one word, 2 connections)', oneWord, Math.min(2, connections)],
      ['GET /api/v1/leads?limit=50&q= (three words, 2 connections)', threeWords, Math.min(2, connections)],
    ];
    const serve = await startServe({ env: leadrunEnv(options, { DATABASE_URL: created.url }), worker: false });
    const rounds = new Map<string, Measured[]>(workloads.map(([name]) => [name, []]));
    let exported: SearchFigures['export'];
    try {
      for (let round = 0; round < options.rounds; round++) {
        if (options.rounds > 1) log(`  round ${round + 1} of ${options.rounds}`);
        for (const [name, requests, clients] of workloads) {
          rounds.get(name)!.push(await measure(options, name, serve, requests, dbRef, clients, round === 0));
        }
      }
      exported = await exportOnce(serve, w, options.searchLeads, log);
    } finally {
      await serve.stop();
    }
    const list = rounds.get(workloads[0]![0])!;
    const rows = workloads.map(([name], i): SearchRow => {
      const measured = rounds.get(name)!;
      const of = (pick: (m: Measured) => number) => median(measured.map(pick));
      const dbCpu = measured.map((m) => m.dbCpuMs);
      return {
        workload: name, requests: of((m) => m.result.requests), non2xx: of((m) => m.result.non2xx), errors: of((m) => m.result.errors),
        rps: of((m) => m.result.rps), p50: of((m) => m.result.p50), p95: of((m) => m.result.p95), p99: of((m) => m.result.p99),
        serverCpuMs: of((m) => m.serverCpuMs), dbCpuMs: dbCpu.every((v) => v !== null) ? median(dbCpu as number[]) : null,
        p95VsList: i === 0 ? null : median(measured.map((m, r) => m.result.p95 / list[r]!.result.p95)),
      };
    });

    // The company stem northwind is in 1 lead of 40, the number 48213 in one address, the kind analytics in 1 lead of 10.
    const plans = [];
    for (const q of [SEARCH_ONE_WORD[0]!, SEARCH_ONE_WORD[5]!, SEARCH_THREE_WORDS[0]!, SEARCH_ONE_WORD[4]!]) {
      plans.push({ what: `q=${q}`, plan: await explainSearch(created.url, w.id, q) });
    }
    for (const { what, plan } of plans) log(`  EXPLAIN, ${what}:
${plan.replace(/^/gm, '    ')}`);
    return { leads: options.searchLeads, seedSeconds, connections, rows, plans, export: exported };
  } finally {
    await created.drop();
  }
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the page statement listLeadsJson runs for `q`, prepared and executed under the
 * plan_cache_mode of leadrun's pool (force_generic_plan): a search's words, workspace and LIMIT are in its text.
 */
async function explainSearch(url: string, workspaceId: string, q: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const compiler = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  try {
    const compiled = leadsPageStatement(workspaceId, { q, limit: 50 }).page.compile(compiler);
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE search_page AS ${compiled.sql}`);
    // EXECUTE in EXPLAIN takes no bound parameters: the values, if any, are written out.
    const args = compiled.parameters.map((v) => (typeof v === 'number' ? String(v) : client.escapeLiteral(String(v)))).join(', ');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE search_page${args ? `(${args})` : ''}`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
    await compiler.destroy();
  }
}

/** GET /api/v1/leads/export of every lead, once, with serve's resident memory sampled every 20 ms meanwhile. */
async function exportOnce(serve: Child & { url: string }, w: Seeded['workspaces'][number], leads: number, log: (line: string) => void): Promise<SearchFigures['export']> {
  const residentBeforeMiB = residentMiB(serve.pid);
  let residentPeakMiB = residentBeforeMiB;
  const sampler = setInterval(() => { residentPeakMiB = Math.max(residentPeakMiB, residentMiB(serve.pid)); }, 20);
  const began = performance.now();
  let bytes = 0;
  let lines = 0;
  try {
    const res = await fetch(`${serve.url}/api/v1/leads/export`, { headers: auth(w) });
    if (res.status !== 200) throw new Error(`the export answered ${res.status}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      for (const byte of chunk) if (byte === 10) lines++;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - began) / 1000;
  // The header and a row per lead, each ended by CRLF (no name of the seed holds a line break).
  if (lines !== leads + 1) throw new Error(`the export held ${lines - 1} leads, not ${leads}`);
  const figures = { leads, seconds, mebibytes: bytes / 1024 / 1024, residentBeforeMiB, residentPeakMiB };
  log(`  export of ${leads} leads: ${seconds.toFixed(2)} s, ${figures.mebibytes.toFixed(1)} MiB; serve resident ${residentBeforeMiB.toFixed(0)} MiB before, `
    + `${residentPeakMiB.toFixed(0)} MiB at most meanwhile`);
  return figures;
}

/**
 * What the key check costs a request: KeyVerifier.verify (format, checksum, SHA-256, the one-second cache, with a
 * database look-up per key per second) and LastUsedRecorder.record, timed in CPU over the benchmark's keys used in
 * turn, against the CPU serve spends on a whole GET /api/v1/leads request (measured above from /proc).
 */
async function keyCheck(url: string, seeded: Seeded, requestCpuMs: number | null, seconds: number, log: (line: string) => void): Promise<BenchReport['keyCheck']> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    const verifier = new KeyVerifier(db);
    const recorder = new LastUsedRecorder(db);
    const keys = seeded.workspaces.map((w) => w.key);
    // Warm up (fills the cache and compiles), then time `seconds` worth of checks.
    for (let i = 0; i < 20_000; i++) await verifier.verify(keys[i % keys.length]!);
    const cpu = process.cpuUsage();
    const until = performance.now() + seconds * 1000;
    let checks = 0;
    while (performance.now() < until) {
      for (let i = 0; i < 1000; i++, checks++) {
        const principal = await verifier.verify(keys[checks % keys.length]!);
        if (!principal) throw new Error('a seeded key did not verify');
        recorder.record(principal.keyId, new Date());
      }
    }
    const used = process.cpuUsage(cpu);
    await recorder.flush();
    const microsPerCheck = (used.user + used.system) / checks;
    const requestCpuMicros = (requestCpuMs ?? NaN) * 1000;
    log(`key check: ${microsPerCheck.toFixed(2)} µs of CPU per check; a GET /api/v1/leads costs serve ${requestCpuMicros.toFixed(0)} µs`);
    return { microsPerCheck, requestCpuMicros, share: microsPerCheck / requestCpuMicros };
  } finally {
    await db.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------------

const f = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));
const pct = (n: number | null | undefined) => (n === null || n === undefined || Number.isNaN(n) ? '–' : `${(n * 100).toFixed(0)} %`);

export function formatReport(report: BenchReport): string {
  const lines: string[] = [];
  lines.push(`| workload | server | req/s | p50 ms | p99 ms | req/s vs | p99 vs | server CPU ms/req | PG CPU ms/req |`);
  lines.push(`|---|---|--:|--:|--:|--:|--:|--:|--:|`);
  for (const r of report.rows) {
    lines.push(`| ${r.workload} | ${r.server} (${r.backend}) | ${f(r.rps)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | `
      + `${r.vs ? `${pct(r.vs.rps)} of ${r.vs.of}` : ''} | ${r.vs ? `${f(r.vs.p99, 2)}×` : ''} | ${f(r.serverCpuMs, 3)} | ${f(r.dbCpuMs, 3)} |`);
  }
  const runs = report.runs;
  if (runs) {
    lines.push('');
    lines.push(`| runs end to end | runs/s | claim→draft p50 ms | p99 ms | POST /runs p50 ms | p99 ms | DB time ms/run | PG CPU ms/run | transactions/run | leadrun CPU ms/run |`);
    lines.push(`|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|`);
    lines.push(`| ${runs.finished}/${runs.started} runs, ${runs.setup} | ${f(runs.runsPerSecond)} | ${f(runs.p50, 1)} | ${f(runs.p99, 1)} | `
      + `${f(runs.post.p50, 2)} | ${f(runs.post.p99, 2)} | ${f(runs.dbMsPerRun, 2)} | ${f(runs.dbCpuMsPerRun, 2)} | ${f(runs.transactionsPerRun, 1)} | ${f(runs.leadrunCpuMsPerRun, 1)} |`);
  }
  const batch = report.batch;
  if (batch) {
    lines.push('');
    lines.push(`| ${batch.size} runs started (${batch.rounds} rounds) | median ms | p95 ms | slowest ms |`);
    lines.push(`|---|--:|--:|--:|`);
    lines.push(`| one POST /api/v1/runs/batch | ${f(batch.batch.median, 1)} | ${f(batch.batch.p95, 1)} | ${f(batch.batch.max, 1)} |`);
    lines.push(`| ${batch.size} POST /api/v1/runs in sequence | ${f(batch.sequential.median, 1)} | ${f(batch.sequential.p95, 1)} | ${f(batch.sequential.max, 1)} |`);
    lines.push(`| one POST /api/v1/runs of those | ${f(batch.single.median, 2)} | ${f(batch.single.p95, 2)} | ${f(batch.single.max, 2)} |`);
  }
  const search = report.search;
  if (search) {
    lines.push('');
    lines.push(`| search, ${search.leads} leads in one workspace, ${search.connections} connections unless named | req/s | p50 ms | p95 ms | p99 ms | p95 vs no q | server CPU ms/req | PG CPU ms/req |`);
    lines.push(`|---|--:|--:|--:|--:|--:|--:|--:|`);
    for (const r of search.rows) {
      lines.push(`| ${r.workload} | ${f(r.rps)} | ${f(r.p50, 2)} | ${f(r.p95, 2)} | ${f(r.p99, 2)} | ${r.p95VsList === null ? '' : `${f(r.p95VsList, 2)}×`} | `
        + `${f(r.serverCpuMs, 3)} | ${f(r.dbCpuMs, 3)} |`);
    }
    const e = search.export;
    lines.push(`export of ${e.leads} leads: ${f(e.seconds, 2)} s, ${f(e.mebibytes, 1)} MiB; serve resident ${f(e.residentBeforeMiB)} MiB before, ${f(e.residentPeakMiB)} MiB at most meanwhile`);
  }
  lines.push('');
  if (report.keyCheck) {
    lines.push(`key check: ${f(report.keyCheck.microsPerCheck, 2)} µs CPU per request = ${(report.keyCheck.share * 100).toFixed(1)} % `
      + `of serve's ${f(report.keyCheck.requestCpuMicros)} µs CPU per GET /api/v1/leads`);
  }
  if (report.imports.length > 0) {
    lines.push(...formatImports(report.imports), '');
  }
  if (report.sequences.length > 0) {
    lines.push(...formatSequences(report.sequences), '');
  }
  if (report.model.length > 0) {
    lines.push(...formatModel(report.model), '');
  }
  if (report.peers.length > 0) {
    lines.push(...formatPeers(report.peers), '');
  }
  lines.push(`serve resident memory after the reads: PostgreSQL ${f(report.memory.postgresAfterReadsMiB)} MiB, PGlite ${f(report.memory.pgliteAfterReadsMiB)} MiB`);
  if (report.heap.length > 0) lines.push('', ...formatMemory(report.heap));
  const o = report.options;
  const rounds = o.rounds > 1 ? `, the median of ${o.rounds} rounds taken in turns` : '';
  lines.push(`(${o.connections} connections, ${o.durationSec} s measured after ${o.warmupSec} s warm-up${rounds}; ${report.seeded.workspaces} workspaces × `
    + `${o.leadsPerWorkspace} leads; LOG_LEVEL=${o.logLevel}${Object.keys(o.env).length ? `; ${Object.entries(o.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''})`);
  return lines.join('\n');
}

function cliOptions(argv: string[]): Partial<BenchOptions> & { json?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, workspaces: { type: 'string' },
      leads: { type: 'string' }, runs: { type: 'string' }, workers: { type: 'string' }, 'worker-concurrency': { type: 'string' },
      'batch-rounds': { type: 'string' }, 'log-level': { type: 'string' }, only: { type: 'string' }, env: { type: 'string', multiple: true }, json: { type: 'string' },
      'search-leads': { type: 'string' },
      variant: { type: 'string', multiple: true }, rounds: { type: 'string' }, 'import-rows': { type: 'string' }, 'sequence-enrolments': { type: 'string' }, 'memory-load': { type: 'string' },
      'model-runs': { type: 'string' }, 'model-concurrency': { type: 'string' },
    },
    strict: true,
  });
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const out: Partial<BenchOptions> & { json?: string } = {};
  const set = <K extends keyof BenchOptions>(k: K, v: BenchOptions[K] | undefined) => { if (v !== undefined) out[k] = v; };
  set('durationSec', num(values.duration));
  set('warmupSec', num(values.warmup));
  set('connections', num(values.connections));
  set('workspaces', num(values.workspaces));
  set('leadsPerWorkspace', num(values.leads));
  set('runs', num(values.runs));
  set('batchRounds', num(values['batch-rounds']));
  set('searchLeads', num(values['search-leads']));
  set('workerProcesses', num(values.workers));
  set('workerConcurrency', num(values['worker-concurrency']));
  set('logLevel', values['log-level']);
  set('rounds', num(values.rounds));
  set('importRows', num(values['import-rows']));
  set('sequenceEnrolments', num(values['sequence-enrolments']));
  set('modelRuns', num(values['model-runs']));
  set('modelConcurrency', num(values['model-concurrency']));
  set('memoryLoadSec', num(values['memory-load']));
  // `npm run bench` is every workload, the model-bound ones and the peers included: one run prints every table. The
  // programmatic default (runBench, the smoke test) leaves out those two, which take minutes and the npm registry.
  out.only = WORKLOADS;
  if (values.only) {
    const only = values.only.split(',').map((s) => s.trim());
    for (const w of only) if (!(WORKLOADS as readonly string[]).includes(w)) throw new Error(`unknown workload ${w}; workloads: ${WORKLOADS.join(', ')}`);
    out.only = only as Workload[];
  }
  if (values.env) out.env = Object.fromEntries(values.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  if (values.json) out.json = values.json;
  if (values.variant) out.variants = values.variant.map((v) => path.resolve(v));
  return out;
}

if (import.meta.main) {
  const { json, ...options } = cliOptions(process.argv.slice(2));
  // Stopping the children makes the run fail, and its clean-up (dropping the database) still happens.
  const stop = () => {
    setTimeout(() => process.exit(130), 30_000).unref();
    void stopAll();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const started = performance.now();
  const report = await runBench(options);
  process.stdout.write(`\n${formatReport(report)}\n(the whole benchmark took ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  if (json) await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
}

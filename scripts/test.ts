// `npm test`: the type check, the project's own tests (on PostgreSQL and embedded PGlite) and the conformance suite of
// the interface contract when it is present beside the project (../shared/conformance), all at once.
//
// A test file run in a process of its own pays about a second of CPU before its first test (loading the app, compiling
// PGlite's WebAssembly, warming the JIT). So the files are dealt into groups, large ones to start with and small ones
// to end on, each group run by one `node --test --test-isolation=none` process, and TEST_CONCURRENCY groups (default 4
// on two cores, where 6 measured no faster: the machine is then busy) run side by side. A file runs alone when it sets
// top-level hooks (they would apply to every file of its process) or says `// npm test: in a process of its own` (it
// judges the whole process). The cost of a file is its duration in the last run, kept in
// node_modules/.cache/leadrun-test/durations.json (on a fresh clone, in scripts/test-durations.json), else its size. A
// group's output is printed whole when it ends.
import { spawn } from 'node:child_process';
import { existsSync, globSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WASM_TIERING_FLAG } from '../src/db/wasm-tiering.ts';

const root = path.resolve(import.meta.dirname, '..');
const node = process.execPath;
const cacheDir = path.join(root, 'node_modules/.cache/leadrun-test');
const durationsFile = path.join(cacheDir, 'durations.json');
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;
/** A file that judges its whole process (its event loop, say) says so on a line of its own, and runs alone. */
const OWN_PROCESS = /^\/\/ npm test: in a process of its own\b/m;

interface Job {
  title: string;
  command: string;
  args: string[];
  files: string[];
  cost: number;
  /** Mostly waits (for the servers it started, for their runs) rather than computes. */
  waits?: boolean;
}

interface Finished {
  job: Job;
  ok: boolean;
  seconds: number;
  counts: Record<string, number>;
}

const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? Math.max(2, os.availableParallelism() * 2)));
const filter = process.argv.slice(2);
const files = globSync('test/**/*.test.ts', { cwd: root }).sort()
  .filter((file) => filter.length === 0 || filter.some((f) => file.includes(f)));

// A fresh clone has no durations of its own yet: those of a whole run kept with the project (scripts/test-durations.json,
// refreshed by copying the cache file over it) stand in for them. Their sum does not matter, only their proportions.
const snapshot = path.join(root, 'scripts/test-durations.json');
const known: Record<string, number> = JSON.parse(readFileSync(existsSync(durationsFile) ? durationsFile : snapshot, 'utf8'));
// Without a duration, a file's size stands in for it: about a second of a test process for each 4 KB of test code.
const cost = (file: string): number => known[file] ?? statSync(path.join(root, file)).size / 4_000;

const alone = files.filter((file) => {
  const text = readFileSync(path.join(root, file), 'utf8');
  return TOP_LEVEL_HOOK.test(text) || OWN_PROCESS.test(text);
});
const shared = files.filter((file) => !alone.includes(file));

// Files that start processes (leadrun, Chromium, npm, Dovecot) are grouped apart from the others. A process's start
// copies the page tables of the one that starts it: 1 ms of CPU from a test process of 70 MB, 19 ms from one of 1 GB,
// which a process holding embedded databases soon is. Kept apart, the starting is done by small processes.
const STARTS_PROCESSES = /from 'node:child_process'|import \{[^}]*\bchromium\b[^}]*\} from 'playwright-core'|\b(runLeadrun|spawnLeadrun|startLeadrun|leadrunJson|launchBrowser|launchChromium|startDovecot|runBench|runModuleScript)\(/;
const starters = shared.filter((file) => STARTS_PROCESSES.test(readFileSync(path.join(root, file), 'utf8')));
const others = shared.filter((file) => !starters.includes(file));

// Longest first into the group furthest below its share. The shares taper, 1.8 down to 0.2 of an equal one, four groups
// for each running at once: the jobs are started costliest first, so that the last to start are short and fill the
// gaps left as the others end. A file's duration differs from run to run by a fifth or more, and with groups of equal
// cost the last few ran on alone for 10-20 s with a core idle (docs/PERFORMANCE.md).
const groupCount = Math.min(shared.length, concurrency * 4);
const totalCost = shared.reduce((sum, file) => sum + cost(file), 0);
const startersCost = starters.reduce((sum, file) => sum + cost(file), 0);
// No more groups than files on either side: a group without files would be `node --test` alone, which runs every test.
const starterGroups = starters.length === 0 ? 0 : others.length === 0 ? groupCount
  : Math.min(starters.length, groupCount - 1, Math.max(1, Math.round(groupCount * startersCost / totalCost)));
const groups: string[][] = [];
const groupCost: number[] = [];
const share: number[] = [];
for (const [list, count] of [[starters, starterGroups], [others, Math.min(others.length, groupCount - starterGroups)]] as const) {
  const first = groups.length;
  for (let i = 0; i < count; i++) groups.push([]), groupCost.push(0), share.push(count === 1 ? 1 : 1.8 - 1.6 * i / (count - 1));
  for (const file of [...list].sort((a, b) => cost(b) - cost(a))) {
    let i = first;
    for (let j = first + 1; j < groups.length; j++) if (groupCost[j]! / share[j]! < groupCost[i]! / share[i]!) i = j;
    groups[i]!.push(file);
    groupCost[i]! += cost(file);
  }
}

mkdirSync(cacheDir, { recursive: true });
let reports = 0;
// The spec reporter for people, and scripts/test-durations.ts into a file of the job's own for the next grouping.
// The test processes load TypeBox and Kysely as leadrun does (src/bundled-deps.ts), and start with its setting of V8 for
// PGlite (src/db/wasm-tiering.ts): the code Node compiles is kept for the servers and the tests alike.
const testArgs = (isolation: 'none' | 'process', list: string[]) => [
  WASM_TIERING_FLAG, '--import', './src/bundled-deps.ts', '--test', `--test-isolation=${isolation}`, '--test-timeout=180000',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/test-durations.ts', `--test-reporter-destination=${path.join(cacheDir, `durations-${++reports}.tsv`)}`,
  ...list,
];
const jobs: Job[] = [
  ...groups.map((list, i) => ({ title: `tests, group ${i + 1} of ${groups.length}`, command: node, args: testArgs('none', list), files: list, cost: groupCost[i]! })),
  ...alone.map((file) => ({ title: `tests, ${file}`, command: node, args: testArgs('process', [file]), files: [file], cost: cost(file) })),
];
if (filter.length === 0) {
  jobs.push({ title: 'type check', command: 'npm', args: ['run', '--silent', 'typecheck'], files: [], cost: 15 });
  const conformance = path.resolve(root, process.env.CONFORMANCE_DIR ?? '../shared/conformance');
  if (existsSync(conformance)) {
    const suite = readdirSync(conformance).filter((f) => f.endsWith('.test.mjs')).map((f) => path.join(conformance, f));
    // About 20 s, of which 5 s of CPU: the rest is waiting for the servers it starts and the runs it makes.
    jobs.push({ title: 'conformance suite', command: node, args: ['--test', ...suite], files: [], cost: 20, waits: true });
  } else {
    process.stdout.write(`conformance suite: not found at ${conformance}; skipped\n`);
  }
}
// A job that mostly waits goes first: beside groups that compute it costs the cores nothing, while last it would hold
// the run open with a core idle. Then the costliest first, so that the last to finish are short.
jobs.sort((a, b) => Number(b.waits ?? false) - Number(a.waits ?? false) || b.cost - a.cost);

const runStarted = performance.now();

// Compiled code of the project and its dependencies is kept between processes (as bin/leadrun does).
const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(root, 'node_modules/.cache/leadrun-compile') };

function run(job: Job): Promise<Finished> {
  const started = performance.now();
  const from = (started - runStarted) / 1000;
  return new Promise((resolve) => {
    const child = spawn(job.command, job.args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString('utf8');
      const seconds = (performance.now() - started) / 1000;
      const counts: Record<string, number> = {};
      for (const [, name, n] of text.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[name!] = Number(n);
      const ok = code === 0;
      process.stdout.write(`\n== ${job.title}${job.files.length > 1 ? ` (${job.files.length} files)` : ''}: ${ok ? 'passed' : 'FAILED'} in ${seconds.toFixed(1)} s (${from.toFixed(1)}-${(from + seconds).toFixed(1)} s)\n`);
      if (job.files.length > 1) process.stdout.write(`   ${job.files.join(' ')}\n`);
      process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
      resolve({ job, ok, seconds, counts });
    });
  });
}

const queue = [...jobs];
const finished: Finished[] = [];
await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
  for (let job = queue.shift(); job; job = queue.shift()) finished.push(await run(job));
}));

// Each file's duration (its top-level tests'), for the next run's grouping.
const durations: Record<string, number> = { ...known };
const measured: Record<string, number> = {};
for (let i = 1; i <= reports; i++) {
  const report = path.join(cacheDir, `durations-${i}.tsv`);
  if (!existsSync(report)) continue;
  for (const line of readFileSync(report, 'utf8').split('\n')) {
    const [file, ms] = line.split('\t');
    if (file && ms) measured[file] = (measured[file] ?? 0) + Number(ms) / 1000;
  }
  rmSync(report);
}
for (const [file, seconds] of Object.entries(measured)) durations[file] = Number(seconds.toFixed(2));
writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`);

const sum = (name: string, which = finished.filter((f) => f.job.files.length > 0)) => which.reduce((n, f) => n + (f.counts[name] ?? 0), 0);
const failed = finished.filter((f) => !f.ok);
const conformance = finished.find((f) => f.job.title === 'conformance suite');
process.stdout.write(`\n== summary: ${((performance.now() - runStarted) / 1000).toFixed(1)} s, ${concurrency} at a time\n`
  + `leadrun tests: ${sum('tests')} tests, ${sum('pass')} passed, ${sum('fail')} failed, ${sum('cancelled')} cancelled, ${sum('skipped')} skipped\n`
  + (conformance ? `conformance suite: ${conformance.counts.pass ?? 0} passed, ${conformance.counts.fail ?? 0} failed\n` : '')
  + (failed.length ? `FAILED: ${failed.map((f) => f.job.title).join('; ')}\n` : 'all passed\n'));
process.exit(failed.length ? 1 : 0);

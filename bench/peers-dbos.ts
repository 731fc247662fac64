// DBOS Transact's side of the peers workload (bench/peers.ts), run as a process of its own in the peers' folder: a
// workflow of four steps (research, analysis, strategy, writer), each step's output recorded by DBOS as it
// completes. Reads a DbosJob as JSON on stdin, works `workflows` workflows `concurrency` at a time, and writes a
// DbosResult as JSON on stdout.
//
// What a step does (`work`):
//   stored   hands back the output the same step of a finished leadrun run stored: DBOS's own cost alone;
//   leadrun  works leadrun's own step (src/agent/pipeline.ts, offline engine, CPU pool, the company site fetched),
//            on the context of that run: the same work as a leadrun run, with DBOS instead of leadrun around it.
// How workflows start (`mode`):
//   direct   `concurrency` callers each run one workflow after another (no polling: the fastest DBOS offers);
//   queue    every workflow enqueued at once on a DBOS queue of workerConcurrency `concurrency`, as leadrun queues runs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import type { RunContext } from '../src/agent/engine.ts';

export interface DbosJob {
  systemDatabaseUrl: string;
  mode: 'direct' | 'queue';
  work: 'stored' | 'leadrun';
  workflows: number;
  concurrency: number;
  /** The finished leadrun run: its context (lead, call, sender) and its four step outputs, in run order. */
  context: RunContext;
  outputs: unknown[];
}

export interface DbosResult {
  workflows: number;
  seconds: number;
  /** Each workflow from its call to its result (direct mode only), ms. */
  p50: number | null;
  p99: number | null;
  /** process.memoryUsage().rss once every workflow is done, MiB. */
  rssMiB: number;
  /** The process's CPU time per workflow, ms. */
  cpuMsPerWorkflow: number;
}

/** The little of the SDK used here, typed by hand: the SDK is installed beside, not a dependency. */
interface DbosSdk {
  setConfig(config: { name: string; systemDatabaseUrl: string; logLevel: string; applicationVersion: string }): void;
  launch(): Promise<void>;
  shutdown(): Promise<void>;
  registerWorkflow<A extends unknown[], R>(fn: (...args: A) => Promise<R>, config: { name: string }): (...args: A) => Promise<R>;
  runStep<R>(fn: () => Promise<R>, config: { name: string }): Promise<R>;
  registerQueue(name: string, options: { workerConcurrency: number }): Promise<unknown>;
  startWorkflow<A extends unknown[], R>(fn: (...args: A) => Promise<R>, params: { queueName: string }): (...args: A) => Promise<{ getResult(): Promise<R> }>;
}

const { DBOS } = createRequire(path.join(process.cwd(), 'package.json'))('@dbos-inc/dbos-sdk') as { DBOS: DbosSdk };
const job = JSON.parse(await text(process.stdin)) as DbosJob;
const STEPS = ['research', 'analysis', 'strategy', 'writer'] as const;

let work: (run: number) => Promise<void>;
let close = async () => {};
if (job.work === 'stored') {
  work = async () => {
    for (const [i, name] of STEPS.entries()) await DBOS.runStep(async () => job.outputs[i], { name });
  };
} else {
  // Loaded only here, so that the stored work's process holds nothing of leadrun.
  const { PIPELINE } = await import('../src/agent/pipeline.ts');
  const { createOfflineEngine } = await import('../src/agent/engines/offline.ts');
  const { createCpuPool, defaultThreadCount } = await import('../src/cpu/pool.ts');
  // As a `leadrun worker` process sets itself up (no HTTP to answer), with the default CPU_BUDGET_MS.
  const cpu = createCpuPool({ budgetMs: 10_000, threads: defaultThreadCount(false) });
  const deps = { engine: createOfflineEngine(cpu), cpu, allowPrivateHosts: true };
  const { call } = job.context;
  const context: RunContext = { ...job.context, call: { ...call, occurredAt: call.occurredAt === null ? null : new Date(call.occurredAt) } };
  work = async (run) => {
    const ctx: RunContext = { ...context, runId: `dbos-${run}` };
    for (const [i, step] of PIPELINE.entries()) {
      step.remember(ctx, await DBOS.runStep(async () => (await step.run(ctx, deps)).output, { name: STEPS[i]! }));
    }
  };
  close = () => cpu.close();
}

DBOS.setConfig({ name: 'leadrun-bench', systemDatabaseUrl: job.systemDatabaseUrl, logLevel: 'warn', applicationVersion: '1' });
const pipeline = DBOS.registerWorkflow(async (run: number) => {
  await work(run);
  return run;
}, { name: 'pipeline' });
await DBOS.launch();

const durations: number[] = [];
const cpuBefore = process.cpuUsage();
const began = performance.now();
if (job.mode === 'direct') {
  let next = 0;
  await Promise.all(Array.from({ length: job.concurrency }, async () => {
    while (next < job.workflows) {
      const run = next++;
      const start = performance.now();
      await pipeline(run);
      durations.push(performance.now() - start);
    }
  }));
} else {
  await DBOS.registerQueue('runs', { workerConcurrency: job.concurrency });
  const handles = [];
  for (let run = 0; run < job.workflows; run++) handles.push(await DBOS.startWorkflow(pipeline, { queueName: 'runs' })(run));
  await Promise.all(handles.map((handle) => handle.getResult()));
}
const seconds = (performance.now() - began) / 1000;
const used = process.cpuUsage(cpuBefore);
const rssMiB = process.memoryUsage().rss / 1024 / 1024;
await DBOS.shutdown();
await close();

const sorted = durations.toSorted((a, b) => a - b);
const at = (p: number) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
const result: DbosResult = {
  workflows: job.workflows, seconds, p50: at(0.5), p99: at(0.99), rssMiB, cpuMsPerWorkflow: (used.user + used.system) / 1000 / job.workflows,
};
process.stdout.write(`${JSON.stringify(result)}\n`);

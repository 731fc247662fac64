// The memory workload of `npm run bench`: what a `leadrun serve` holds idle (settled after its start, before its
// first request), right after the read load (GET /api/v1/leads), and once quiet again, on PostgreSQL and on embedded
// PGlite. Each time: the resident memory (/proc VmRSS) and V8's heap as the process reports it, then the same after
// a full garbage collection, which separates what is live from what V8 and malloc keep. serve runs with --expose-gc and an inspector on loopback,
// through which the harness collects garbage and reads process.memoryUsage(): nothing of it ships in leadrun.
import { freePort, startServe, type Child } from './processes.ts';
import { load, type LoadRequest } from './load.ts';

const MiB = 1024 * 1024;

/** process.memoryUsage() in MiB. */
export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface MemoryMoment {
  before: MemorySample;
  afterGc: MemorySample;
}

export interface MemoryFigures {
  backend: 'postgres' | 'pglite';
  /** serve's command line (`serve --no-worker` or `serve`). */
  serve: string;
  idle: MemoryMoment;
  loaded: MemoryMoment;
  /** `settleMs` after the load. */
  quiet: MemoryMoment;
  settleMs: number;
  /** Requests of the load, all 2xx unless `non2xx` says otherwise. */
  requests: number;
  non2xx: number;
}

export interface MemoryWorkload {
  backend: MemoryFigures['backend'];
  env: Record<string, string | undefined>;
  worker: boolean;
  requests: LoadRequest[];
  connections: number;
  durationSec: number;
  maxRequests: number;
  /** How long serve is left alone before the idle and the quiet samples (SETTLE_MS unless a smoke test hurries). */
  settleMs?: number;
}

/** A Chrome DevTools Protocol session with a process started with --inspect: enough to evaluate an expression. */
async function inspect(port: number): Promise<{ evaluate(expression: string): Promise<unknown>; close(): void }> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  if (!target) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', () => reject(new Error(`could not connect to the inspector on port ${port}`)), { once: true });
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: { result: { value: unknown }; exceptionDetails?: { text: string } } };
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting || !message.result) return;
    pending.delete(message.id!);
    if (message.result.exceptionDetails) waiting.reject(new Error(message.result.exceptionDetails.text));
    else waiting.resolve(message.result.result.value);
  });
  let next = 0;
  return {
    evaluate: (expression) => new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression, returnByValue: true } }));
    }),
    close: () => socket.close(),
  };
}

/**
 * How long serve is left alone before the idle and the quiet samples: long enough for src/observability/memory-release.ts to see
 * a whole quiet interval after a busy one (two of its 5 s intervals, and a margin).
 */
export const SETTLE_MS = 12_000;

// Two collections: the first runs the finalizers of what it frees, the second frees what those held.
const SAMPLE = `(() => {
  const mib = (usage) => Object.fromEntries(['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'].map((k) => [k, usage[k] / ${MiB}]));
  const before = mib(process.memoryUsage());
  gc(); gc();
  return { before, afterGc: mib(process.memoryUsage()) };
})()`;

/** serve idle, then under the read load for `durationSec`, then quiet again, sampled at each moment. */
export async function memoryWorkload(options: MemoryWorkload, log: (line: string) => void): Promise<MemoryFigures> {
  const port = await freePort();
  const nodeOptions = `${options.env.NODE_OPTIONS ?? ''} --expose-gc --inspect=127.0.0.1:${port}`.trim();
  const serve: Child & { url: string } = await startServe({ env: { ...options.env, NODE_OPTIONS: nodeOptions }, worker: options.worker });
  const command = options.worker ? 'serve' : 'serve --no-worker';
  const settleMs = options.settleMs ?? SETTLE_MS;
  const settle = () => new Promise((resolve) => setTimeout(resolve, settleMs));
  try {
    const session = await inspect(port);
    try {
      await settle();
      const idle = (await session.evaluate(SAMPLE)) as MemoryMoment;
      log(`  ${command} on ${options.backend}, idle: ${describe(idle)}`);
      const result = await load({
        url: serve.url, requests: options.requests, connections: options.connections, durationSec: options.durationSec, maxRequests: options.maxRequests,
      });
      const loaded = (await session.evaluate(SAMPLE)) as MemoryMoment;
      log(`  after ${result.requests} requests: ${describe(loaded)}`);
      await settle();
      const quiet = (await session.evaluate(SAMPLE)) as MemoryMoment;
      log(`  quiet again: ${describe(quiet)}`);
      return { backend: options.backend, serve: command, idle, loaded, quiet, settleMs, requests: result.requests, non2xx: result.non2xx + result.errors };
    } finally {
      session.close();
    }
  } finally {
    await serve.stop();
  }
}

function describe(moment: MemoryMoment): string {
  const f = (n: number) => n.toFixed(0);
  return `RSS ${f(moment.before.rss)} MiB (heap ${f(moment.before.heapUsed)} of ${f(moment.before.heapTotal)}, external ${f(moment.before.external)}), `
    + `after GC RSS ${f(moment.afterGc.rss)} MiB (heap ${f(moment.afterGc.heapUsed)} of ${f(moment.afterGc.heapTotal)}, external ${f(moment.afterGc.external)})`;
}

export function formatMemory(figures: MemoryFigures[]): string[] {
  const f = (n: number) => n.toFixed(0);
  const lines = [
    '| serve | backend | moment | RSS MiB | heap used / total MiB | external MiB | RSS after GC MiB | live heap after GC MiB | external after GC MiB |',
    '|---|---|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const figure of figures) {
    const moments = [
      ['idle', figure.idle], [`after ${figure.requests} GET /api/v1/leads`, figure.loaded], [`${figure.settleMs / 1000} s later`, figure.quiet],
    ] as const;
    for (const [moment, m] of moments) {
      lines.push(`| ${figure.serve} | ${figure.backend} | ${moment} | ${f(m.before.rss)} | ${f(m.before.heapUsed)} / ${f(m.before.heapTotal)} | ${f(m.before.external)} `
        + `| ${f(m.afterGc.rss)} | ${f(m.afterGc.heapUsed)} | ${f(m.afterGc.external)} |`);
    }
  }
  return lines;
}

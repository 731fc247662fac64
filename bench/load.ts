// One load run with autocannon on loopback: a list of prepared requests that every connection cycles through, each
// from its own place in the list (as many clients would, rather than all in step), for a duration or a number of
// requests (always both bounded). Latencies are kept at full precision (autocannon's own
// histogram rounds to whole milliseconds), so p50, p95 and p99 are exact over every response.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// autocannon ships no types; the little used here is typed by hand below.
const autocannon = require('autocannon') as (options: Record<string, unknown>) => AutocannonInstance;

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
}

interface AutocannonClient {
  setRequests(requests: Array<Record<string, unknown>>): void;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
}

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  url: string;
  requests: LoadRequest[];
  connections: number;
  /** Seconds; the run stops at this time at the latest. */
  durationSec: number;
  /** Requests; the run stops after this many at the latest. */
  maxRequests: number;
}

export interface LoadResult {
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  seconds: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const requests = options.requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) }));
  const connections = Math.min(options.connections, options.maxRequests);
  let clients = 0;
  const started = performance.now();
  const instance = autocannon({
    url: options.url,
    connections,
    duration: options.durationSec,
    maxOverallRequests: options.maxRequests,
    timeout: 10,
    requests,
    setupClient: (client: AutocannonClient) => {
      const start = Math.floor((clients++ * requests.length) / connections) % requests.length;
      client.setRequests([...requests.slice(start), ...requests.slice(0, start)]);
    },
  });
  instance.on('response', (_client, _status, _bytes, ms) => { latencies.push(ms); });
  // A guard beyond autocannon's own limits: the run ends within its duration and a grace period, whatever happens.
  const guard = setTimeout(() => instance.stop(), (options.durationSec + 15) * 1000);
  let result: AutocannonResult;
  try {
    result = await instance;
  } finally {
    clearTimeout(guard);
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count;
  const answered = latencies.length;
  return {
    requests: answered,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
    seconds,
    rps: answered / seconds,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
  };
}

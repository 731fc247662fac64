// Rate limits under load, on real `leadrun serve` processes (PostgreSQL, Redis):
//
//   quota       one key flooded over two processes sharing Redis: exactly RATE_LIMIT_PER_MINUTE answers pass in
//               the window, every other one is 429 rate_limited with Retry-After and RateLimit headers
//   neighbour   while that key floods, another key at a steady pace is never limited, and stays fast
//   bad keys    a flood of unknown keys: all 401 (never 429), and the steady key is not slowed down
//   store       what the shared store costs: the same read workload with the in-memory store and with Redis
//
//   node bench/security/rate-limit.ts [--duration 10] [--connections 32] [--limit 600]
//
// Prints a table and exits 1 when an invariant does not hold. Not part of `npm test` (test/security/rate-limit.test.ts
// proves the behaviour; this shows it holds under load and what it costs).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { generateKey } from '../../src/domain/keys/keys.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/leadrun');
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' }, limit: { type: 'string', default: '600' } },
});
const DURATION_MS = Number(args.duration) * 1000;
const CONNECTIONS = Number(args.connections);
const LIMIT = Number(args.limit);

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
const failures: string[] = [];

function check(ok: boolean, what: string): void {
  if (!ok) failures.push(what);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function leadrun(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`leadrun ${args.join(' ')}: ${err}`))));
  });
}

async function serve(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(BIN, ['serve', '--no-worker'], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return url;
    } catch { /* not yet */ }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('serve did not become ready');
}

interface Sample { status: number; ms: number; headers: Headers }

/** `connections` loops sending `next()`'s request until the deadline; every answer kept. */
async function flood(next: (i: number) => { url: string; key: string }, connections: number, durationMs: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const deadline = performance.now() + durationMs;
  let i = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const { url, key } = next(i++);
      const started = performance.now();
      const res = await fetch(`${url}/api/v1/leads?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      samples.push({ status: res.status, ms: performance.now() - started, headers: res.headers });
    }
  }));
  return samples;
}

/** One request every `everyMs` until `until` resolves. */
async function paced(url: string, key: string, everyMs: number, until: Promise<unknown>): Promise<Sample[]> {
  const samples: Sample[] = [];
  let done = false;
  void until.then(() => { done = true; });
  while (!done) {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/leads?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    samples.push({ status: res.status, ms: performance.now() - started, headers: res.headers });
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return samples;
}

function percentile(samples: Sample[], p: number): number {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

function count(samples: Sample[], status: number): number {
  return samples.filter((s) => s.status === status).length;
}

const rows: string[][] = [];
function row(scenario: string, samples: Sample[], note: string): void {
  const seconds = DURATION_MS / 1000;
  rows.push([scenario, String(samples.length), (samples.length / seconds).toFixed(0), String(count(samples, 200)), String(count(samples, 429)), String(count(samples, 401)),
    percentile(samples, 50).toFixed(1), percentile(samples, 99).toFixed(1), note]);
}

async function main(): Promise<void> {
  const name = `leadrun_bench_security_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  cleanups.push(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  const dbUrl = new URL(PG_ADMIN_URL);
  dbUrl.pathname = `/${name}`;
  const databaseUrl = dbUrl.toString();
  const prefix = `leadrun-bench:${randomBytes(5).toString('hex')}:`;
  const redis = new Redis(REDIS_URL);
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const env = { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: prefix };
  await leadrun(['migrate'], { DATABASE_URL: databaseUrl });
  const [a, b] = await Promise.all([serve(env), serve(env)]);
  const workspace = JSON.parse(await leadrun(['workspace', 'create', '--name', 'bench', '--plan', 'pro', '--json'], { DATABASE_URL: databaseUrl }));
  const newKey = async () => JSON.parse(await leadrun(['key', 'create', '--workspace', workspace.id, '--name', 'bench', '--scopes', 'leads:read', '--json'], { DATABASE_URL: databaseUrl })).key as string;
  const [flooder, steady, steady2] = [await newKey(), await newKey(), await newKey()];
  const servers = [a!, b!];

  // quota + neighbour: one key floods both processes; another keeps a steady pace beside it.
  const floodDone = flood((i) => ({ url: servers[i % 2]!, key: flooder }), CONNECTIONS, DURATION_MS);
  const steadySamples = await paced(a!, steady, 200, floodDone);
  const flooded = await floodDone;
  const passed = count(flooded, 200);
  check(passed === LIMIT, `quota: ${passed} answers passed, not exactly ${LIMIT}`);
  check(flooded.every((s) => s.status === 200 || s.status === 429), 'quota: only 200 and 429');
  for (const s of flooded.filter((x) => x.status === 429)) {
    if (!/^\d+$/.test(s.headers.get('retry-after') ?? '') || !/^"default";r=0;t=\d+$/.test(s.headers.get('ratelimit') ?? '')
      || s.headers.get('ratelimit-policy') !== `"default";q=${LIMIT};w=60`) {
      check(false, `quota: a 429 without its headers: ${[...s.headers].join(' ')}`);
      break;
    }
  }
  check(steadySamples.every((s) => s.status === 200), `neighbour: the steady key was refused ${steadySamples.filter((s) => s.status !== 200).length} times`);
  row('quota (1 key, 2 processes)', flooded, `${passed} passed of a quota of ${LIMIT}`);
  row('neighbour (steady key)', steadySamples, 'during the flood');

  // bad keys: unknown keys flood; a second steady key beside them.
  const badDone = flood(() => ({ url: servers[0]!, key: generateKey() }), CONNECTIONS, DURATION_MS);
  const steadyBeside = await paced(a!, steady2, 200, badDone);
  const bad = await badDone;
  check(bad.every((s) => s.status === 401), `bad keys: ${bad.filter((s) => s.status !== 401).length} answers were not 401`);
  check(steadyBeside.every((s) => s.status === 200), 'bad keys: the steady key was refused');
  row('unknown keys (flood)', bad, 'each costs one key look-up');
  row('neighbour (steady key)', steadyBeside, 'during the unknown-key flood');

  // store: the same reads with a quota nobody reaches, counted in memory and in Redis.
  const high = { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '1000000000' };
  const memory = await serve(high);
  const shared = await serve({ ...high, REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: prefix });
  const readKey = await newKey();
  for (const [label, url] of [['reads, in-memory store', memory], ['reads, Redis store', shared]] as const) {
    const samples = await flood(() => ({ url, key: readKey }), CONNECTIONS, DURATION_MS);
    check(samples.every((s) => s.status === 200), `${label}: not all 200`);
    row(label, samples, '');
  }

  const header = ['scenario', 'requests', 'req/s', '200', '429', '401', 'p50 ms', 'p99 ms', 'note'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\nRate limits: RATE_LIMIT_PER_MINUTE=${LIMIT}, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s a scenario\n`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  console.log(failures.length ? `\nFAILED:\n- ${failures.join('\n- ')}` : '\nEvery invariant held.');
}

async function shutdown(): Promise<void> {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((resolve) => c.once('close', resolve)) : null)));
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error('cleanup:', error));
}

process.once('SIGINT', () => void shutdown().then(() => process.exit(130)));
try {
  await main();
} catch (error) {
  failures.push(String(error));
  console.error(error);
} finally {
  await shutdown();
}
process.exit(failures.length ? 1 : 0);

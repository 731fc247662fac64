// What the security suites share: a fingerprint of every table (to prove a refused request changed nothing), a
// Redis key prefix of its own per test run (removed after), a private PostgreSQL cluster that a test may stop and start, and two `leadrun serve` processes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { Redis } from 'ioredis';
import type { DB } from '../../src/db/schema.ts';
import { freePort, spawnLeadrun, waitForReady, type LeadrunProcess } from '../cli/support.ts';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Columns that change on every use and are not what a request asked for: a key's lastUsedAt and a session's
 * last sight are written behind on any authenticated request, refused or not.
 */
const VOLATILE_COLUMNS = ['last_used_at', 'last_seen_at'];
/** Tables a refused request writes to on purpose: the audit entry of a refusal, a failed sign-in attempt. */
export const APPEND_ONLY_ON_REFUSAL = ['audit_log', 'sign_in_attempts'];

export interface Fingerprint {
  /** table → row count and what stands for its rows (the newest row version, or a digest without volatile columns). */
  tables: Record<string, string>;
  counts: Record<string, number>;
}

/** Every table of the schema, found in the catalogue so that a table added later is covered too. */
export async function tableNames(db: Kysely<DB>): Promise<string[]> {
  const result = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db);
  return result.rows.map((r) => r.table_name);
}

/** The tables with a column of VOLATILE_COLUMNS, read once per database. */
const volatileTablesOf = new WeakMap<Kysely<DB>, Promise<Set<string>>>();
function volatileTables(db: Kysely<DB>): Promise<Set<string>> {
  let found = volatileTablesOf.get(db);
  if (!found) {
    found = sql<{ table_name: string }>`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = ANY(${VOLATILE_COLUMNS})`.execute(db)
      .then((result) => new Set(result.rows.map((r) => r.table_name)));
    volatileTablesOf.set(db, found);
  }
  return found;
}

/**
 * One round trip (after the look-up of its volatile tables, once per database): every table's row count and what
 * stands for its content. Every INSERT or UPDATE gives the rows it writes the id of its transaction (`xmin`), newer
 * than any before it, and a DELETE lowers the count: so the count and the newest `xmin` change whenever a row does,
 * and are read from the rows' headers alone. A table with a volatile column is digested instead, row by row without
 * those columns, since they are written behind on any request.
 */
export async function fingerprint(db: Kysely<DB>, tables: string[]): Promise<Fingerprint> {
  const volatile = `ARRAY[${VOLATILE_COLUMNS.map((c) => `'${c}'`).join(',')}]`;
  const withVolatileColumns = await volatileTables(db);
  const parts = tables.map((t) => {
    const id = `"${t.replaceAll('"', '""')}"`;
    if (APPEND_ONLY_ON_REFUSAL.includes(t)) return `(SELECT count(*)::text || ':' FROM ${id}) AS ${id}`;
    if (!withVolatileColumns.has(t)) return `(SELECT count(*)::text || ':' || coalesce(max(xmin::text::bigint), 0) FROM ${id}) AS ${id}`;
    return `(SELECT count(*)::text || ':' || coalesce(md5(string_agg((to_jsonb(x) - ${volatile}::text[])::text, ',' ORDER BY (to_jsonb(x) - ${volatile}::text[])::text)), '') FROM ${id} x) AS ${id}`;
  });
  const result = await sql.raw<Record<string, string>>(`SELECT ${parts.join(', ')}`).execute(db);
  const row = result.rows[0]!;
  const counts: Record<string, number> = {};
  for (const t of tables) counts[t] = Number(row[t]!.split(':')[0]);
  return { tables: row, counts };
}

/** Asserts that `after` differs from `before` only by appended refusal records, at most `maxAppended` each. */
export function assertUnchanged(before: Fingerprint, after: Fingerprint, context: string, maxAppended = 0): void {
  for (const [table, value] of Object.entries(before.tables)) {
    if (APPEND_ONLY_ON_REFUSAL.includes(table)) {
      const added = (after.counts[table] ?? 0) - (before.counts[table] ?? 0);
      assert.ok(added >= 0 && added <= maxAppended, `${context}: ${table} grew by ${added} (at most ${maxAppended} allowed)`);
    } else {
      assert.equal(after.tables[table], value, `${context}: table ${table} changed`);
    }
  }
}

/** A Redis key prefix for this test run only; `cleanup` deletes every key under it and closes the client. */
export async function redisPrefix(label: string): Promise<{ prefix: string; redis: Redis; keys(): Promise<string[]>; cleanup(): Promise<void> }> {
  const prefix = `leadrun-test:${label}:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  await redis.connect();
  const keys = async () => {
    const found: string[] = [];
    let cursor = '0';
    for (let i = 0; i < 10_000; i++) {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
      if (cursor === '0') break;
    }
    return found;
  };
  return {
    prefix,
    redis,
    keys,
    async cleanup() {
      try {
        const found = await keys();
        if (found.length > 0) await redis.del(...found);
      } finally {
        redis.disconnect();
      }
    },
  };
}

const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

function run(file: string, args: string[], options: { timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/** `su postgres -c '…'`: the cluster's files belong to the postgres user, and the server refuses to run as root. */
function asPostgres(command: string, timeoutMs?: number) {
  if (process.getuid?.() === 0) return run('su', ['postgres', '-c', command], { timeoutMs });
  return run('sh', ['-c', command], { timeoutMs });
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export interface PrivateCluster {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres — trust authentication, loopback only. */
  readonly url: string;
  start(): Promise<void>;
  /** A fast shutdown: open sessions are ended, as when a database server goes away. */
  stop(): Promise<void>;
  isRunning(): Promise<boolean>;
  remove(): Promise<void>;
}

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory, on a free port: a test may stop and start it
 * without touching the shared server the other suites use.
 */
export async function createPrivateCluster(): Promise<PrivateCluster> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'leadrun-pg-'));
  const data = path.join(root, 'data');
  const socketDir = path.join(root, 'socket');
  await mkdir(socketDir);
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    for (const dir of [root, socketDir]) await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const port = await freePort();
  const log = path.join(root, 'server.log');
  let removed = false;
  const cluster: PrivateCluster = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres(`${PG_BIN}/pg_ctl -D ${quote(data)} -l ${quote(log)} -w -t 60 -o ${quote(`-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`)} start`, 90_000);
    },
    async stop() {
      await asPostgres(`${PG_BIN}/pg_ctl -D ${quote(data)} -w -t 60 -m fast stop`, 90_000);
    },
    async isRunning() {
      try {
        await asPostgres(`${PG_BIN}/pg_ctl -D ${quote(data)} status`);
        return true;
      } catch {
        return false;
      }
    },
    async remove() {
      if (removed) return;
      removed = true;
      try {
        if (await cluster.isRunning()) await asPostgres(`${PG_BIN}/pg_ctl -D ${quote(data)} -w -t 60 -m immediate stop`, 90_000);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
  try {
    await asPostgres(`${PG_BIN}/initdb -D ${quote(data)} -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8`, 120_000);
    await cluster.start();
  } catch (error) {
    await cluster.remove().catch(() => {});
    throw error;
  }
  return cluster;
}

export interface Serve {
  readonly url: string;
  readonly process: LeadrunProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `leadrun serve` on PostgreSQL at `databaseUrl` (or on the embedded database that `env` names), on a free loopback port, ready to answer. */
export async function startServe(databaseUrl: string | null, env: Record<string, string> = {}, args: string[] = []): Promise<Serve> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawnLeadrun(['serve', ...args], { ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), PORT: String(port), PUBLIC_URL: url, LOG_LEVEL: 'warn', ...env });
  try {
    await waitForReady(server, `${url}/readyz`);
  } catch (error) {
    await server.kill('SIGKILL');
    throw error;
  }
  return { url, process: server, stop: (signal = 'SIGTERM') => server.kill(signal) };
}

/** Polls until `probe` resolves truthy; no fixed sleeps, a bounded wait. */
export async function eventually<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A small company website on loopback whose pages take `delayMs` (changeable) to answer, to hold RESEARCH in flight. */
export async function startSlowSite(delayMs: number): Promise<{ url: string; delayMs: number; close(): Promise<void> }> {
  const site = {
    url: '',
    delayMs,
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const timer = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html><head><title>Northwind Freight</title></head><body><h1>Route planning</h1><p>Founded in 2014 in Rotterdam.</p><a href="/about">About</a></body></html>`);
    }, site.delayMs);
    req.on('close', () => { if (!res.writableEnded) clearTimeout(timer); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  site.url = `http://127.0.0.1:${port}/`;
  site.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return site;
}

// Test helpers: a fresh database on each backend (a real PostgreSQL database, or an in-memory PGlite), the app
// on a real loopback port, and shortcuts for workspaces, keys and requests.
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { runAdminCommand } from '../src/admin/commands.ts';
import { systemClock, type Clock } from '../src/clock.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { CpuPool } from '../src/cpu/pool.ts';
import { openDatabase, type Database, type DatabaseKind } from '../src/db/database.ts';
import { buildApp, createDeps } from '../src/http/app.ts';
import type { AppDeps, AppInstance } from '../src/http/app-instance.ts';
import { SCOPES, type Scope } from '../src/domain/keys/keys.ts';
import { setPasswordHashCostForTests } from '../src/domain/members/passwords.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { runHandler, type RunHandlerOptions } from '../src/jobs/handlers/run.ts';
import { testCpu, testOfflineEngine } from './support/cpu.ts';
import { asApiResponse, rawRequest } from './support/http.ts';
import { embeddedTestDatabase } from './support/embedded.ts';
import { postgresTestDatabase } from './support/recycled-postgres.ts';
import { workingDir } from './support/working-dir.ts';

export { BACKENDS, createMigratedPostgresDatabase, createPostgresDatabase, PG_ADMIN_URL } from './support/postgres.ts';

// Tests sign in hundreds of times: a password hash at 1/32 of the real cost (a hash keeps its cost, so checking it is
// the same code). test/domain/passwords.test.ts checks the real one; leadrun processes a test starts use the real one.
setPasswordHashCostForTests(2 ** 10);

export const ALL_SCOPES: Scope[] = [...SCOPES];
export const silentLogger = pino({ level: 'silent' });

export interface TestDatabase {
  database: Database;
  url: string | null;
  drop(): Promise<void>;
}

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') return { ...await embeddedTestDatabase(), url: null };
  const created = await postgresTestDatabase();
  const database = await openDatabase({ databaseUrl: created.url });
  return {
    database,
    url: created.url,
    drop: async () => {
      await database.close();
      await created.drop();
    },
  };
}

export function testConfig(overrides: Partial<Config> = {}, env: Record<string, string> = {}): Config {
  // Every e-mail carries a postal address in its footer (DESIGN §15): the installation's, unless a test sets its own.
  return {
    ...loadConfig({ LOG_LEVEL: 'silent', RESEARCH_ALLOW_PRIVATE_HOSTS: 'false', MAIL_POSTAL_ADDRESS: '1 Test Street, Testville', ...env }, workingDir()),
    ...overrides,
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  json: T;
  text: string;
}

export interface TestApp {
  kind: DatabaseKind;
  url: string;
  app: AppInstance;
  deps: AppDeps;
  database: Database;
  databaseUrl: string | null;
  workspace(plan?: 'free' | 'pro', name?: string): Promise<{ id: string; name: string; plan: string; adminUserId: string }>;
  key(workspaceId: string, scopes?: Scope[], name?: string): Promise<{ id: string; key: string; prefix: string; scopes: Scope[] }>;
  revoke(keyId: string): Promise<void>;
  api<T = any>(method: string, path: string, options?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  /** A job runner working runs alone, as a worker process's runner does among its kinds. */
  startWorker(options?: Partial<WorkerOptions>): Promise<JobRunner>;
  close(): Promise<void>;
}

export type WorkerOptions = RunHandlerOptions & { cpu: CpuPool; logger: Logger; pollMs: number; drainMs: number };

export async function startTestApp(kind: DatabaseKind, options: { clock?: Clock; config?: Partial<Config> } = {}): Promise<TestApp> {
  const testDb = await createTestDatabase(kind);
  const clock = options.clock ?? systemClock;
  const config = testConfig(options.config);
  const deps = createDeps(config, testDb.database, clock, () => {}, testCpu());
  const app = await buildApp(deps, { logger: silentLogger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
  const workers: JobRunner[] = [];
  const admin = { db: testDb.database.db, clock, migrate: () => testDb.database.migrate() };

  return {
    kind,
    url,
    app,
    deps,
    database: testDb.database,
    databaseUrl: testDb.url,
    async workspace(plan = 'pro', name = `Workspace ${randomBytes(3).toString('hex')}`) {
      return (await runAdminCommand(admin, {
        command: 'workspace.create', name, plan, adminEmail: `admin-${randomBytes(4).toString('hex')}@example.com`,
      })) as { id: string; name: string; plan: string; adminUserId: string };
    },
    async key(workspaceId, scopes = ALL_SCOPES, name = 'test key') {
      return (await runAdminCommand(admin, { command: 'key.create', workspace: workspaceId, name, scopes })) as {
        id: string; key: string; prefix: string; scopes: Scope[];
      };
    },
    async revoke(keyId) {
      await runAdminCommand(admin, { command: 'key.revoke', keyId });
    },
    async api(method, path, { key, body, raw, headers = {} } = {}) {
      const h: Record<string, string> = { ...headers };
      if (key !== undefined) h.authorization = `Bearer ${key}`;
      let payload: string | undefined;
      if (raw !== undefined) payload = raw;
      else if (body !== undefined) {
        payload = JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
      // No time limit of its own (a 50,000-row import takes long on a loaded machine): the test's applies.
      return asApiResponse(await rawRequest(url, method, path, { headers: h, ...(payload !== undefined ? { body: payload } : {}), timeoutMs: 0 }));
    },
    async startWorker(overrides = {}) {
      const { cpu, logger, pollMs, drainMs, ...options }: WorkerOptions = {
        engine: testOfflineEngine(),
        cpu: testCpu(),
        metrics: deps.metrics,
        concurrency: 2,
        // Long enough that a stall of a loaded machine never lets a slot of this process take over a run it still
        // works: a test of a takeover sets a short lease of its own.
        leaseMs: 10_000,
        retryBaseMs: 10,
        tokenBudget: 100_000,
        allowPrivateHosts: false,
        logger: silentLogger,
        pollMs: 50,
        drainMs: 2_000,
        ...overrides,
      };
      const worker = new JobRunner({
        database: testDb.database, clock, config, secrets: deps.secrets, cpu, logger, metrics: deps.metrics, handlers: [runHandler(options)],
        pollMs, drainMs,
      });
      await worker.start();
      workers.push(worker);
      return worker;
    },
    async close() {
      for (const worker of workers) await worker.stop();
      await app.close();
      await deps.lastUsed.flush();
      await testDb.drop();
    },
  };
}

/**
 * Polls a run until `until` holds (the worker runs in the same process; each poll is a real request). Soon at first,
 * then five times a second: the polls count against the key's 600 requests a minute, which polling every 25 ms used
 * up in 15 s, and a slow machine's batch of runs, waited for one after another, once took longer.
 */
export async function waitForRun(t: TestApp, key: string, runId: string, until: (run: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (let pauseMs = 25; ; pauseMs = Math.min(pauseMs * 2, 200)) {
    const res = await t.api('GET', `/api/v1/runs/${runId}`, { key });
    if (res.status !== 200) throw new Error(`GET run answered ${res.status}: ${res.text}`);
    if (until(res.json.data)) return res.json.data;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${res.json.data.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

export const TRANSCRIPT = [
  'Rep: Thanks for making time today, Ada.',
  'Ada: Happy to. Our month-end reporting takes four days and the finance team is exhausted.',
  'Rep: What have you tried so far?',
  'Ada: Spreadsheets, mostly. We looked at a tool last year but the price was too high for us.',
  'Ada: Budget is approved for Q3 if a pilot shows results.',
  'Rep: Great, I will send over a pilot plan next week.',
].join('\n');

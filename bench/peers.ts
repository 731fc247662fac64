// The peers of `npm run bench -- --only peers`: other tools that users pick for leadrun's jobs, measured in the same
// run on the same PostgreSQL. Directus (a headless CRUD server) answers the lead reads and writes; DBOS Transact (a
// durable-workflow library) works a four-step pipeline with the step outputs of a leadrun run. Neither is a
// dependency of leadrun: they are installed from the npm registry into a folder under node_modules/.cache, once per
// pinned version, and nothing of theirs ships.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { DbosJob, DbosResult } from './peers-dbos.ts';
import { freePort, ROOT, runToEnd, startProgram, type Child } from './processes.ts';

/**
 * Pinned with `npm view`: both declare engines that Node 24 satisfies (Directus node >=22, DBOS node >=20). Directus
 * 12.4.1 was not installable (its @directus/app@18.0.1 was missing from the registry), so 12.4.0.
 */
export const PEER_VERSIONS = { directus: '12.4.0', dbos: '5.3.0' } as const;

/**
 * Directus pins isolated-vm 5.0.3, whose native module does not compile against Node 24's V8 (its prebuilt binaries
 * come from GitHub); 6.2.0 ships one for Node 24 in its package. Directus loads it at start for sandboxed extensions
 * and flow scripts, neither used here.
 */
const OVERRIDES = { 'isolated-vm': '6.2.0' };

const DIRECTUS_ADMIN = { email: 'admin@example.com', password: 'bench-admin-password' };

/** The folder holding the peers, installed on first use: keyed by the versions and by Node's ABI (native modules). */
export async function installPeers(log: (line: string) => void): Promise<string> {
  const key = `directus-${PEER_VERSIONS.directus}_dbos-sdk-${PEER_VERSIONS.dbos}_node-abi${process.versions.modules}`;
  const dir = path.join(ROOT, 'node_modules/.cache/leadrun-bench-peers', key);
  const complete = path.join(dir, '.complete');
  if (existsSync(complete)) return dir;
  log(`peers: installing directus@${PEER_VERSIONS.directus} and @dbos-inc/dbos-sdk@${PEER_VERSIONS.dbos} into ${dir} (a few minutes, once)`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify({ private: true, overrides: OVERRIDES }, null, 2)}\n`);
  try {
    // The install scripts (native modules) must build for this node, not for another one first on PATH.
    await runToEnd('npm install', 'npm', [
      'install', '--prefix', dir, '--no-audit', '--no-fund', `directus@${PEER_VERSIONS.directus}`, `@dbos-inc/dbos-sdk@${PEER_VERSIONS.dbos}`,
    ], { cwd: dir, env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` } });
  } catch (error) {
    throw new Error(`the peers workload could not install Directus and DBOS from the npm registry into ${dir} `
      + `(it needs the registry, once; nothing else of the bench does; \`npm run bench -- --only …\` runs the other workloads): ${(error as Error).message}`);
  }
  await writeFile(complete, `${new Date().toISOString()}\n`);
  return dir;
}

// ---------------------------------------------------------------------------------------------------------------

/** Directus serving one `leads` collection, with the admin's static token. */
export interface Directus extends Child {
  url: string;
  token: string;
}

function directusEnv(databaseUrl: string, port: number): Record<string, string | undefined> {
  const url = new URL(databaseUrl);
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DB_CLIENT: 'pg',
    DB_HOST: url.hostname,
    DB_PORT: url.port || '5432',
    DB_USER: decodeURIComponent(url.username),
    DB_PASSWORD: decodeURIComponent(url.password),
    DB_DATABASE: url.pathname.slice(1),
    // As many connections as leadrun's pool.
    DB_POOL__MIN: '0',
    DB_POOL__MAX: '10',
    SECRET: 'leadrun-bench-directus-secret-0123456789abcdef',
    ADMIN_EMAIL: DIRECTUS_ADMIN.email,
    ADMIN_PASSWORD: DIRECTUS_ADMIN.password,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // What a fair comparison turns off: caches, rate limits, telemetry, the admin app, websockets; warnings only.
    TELEMETRY: 'false',
    CACHE_ENABLED: 'false',
    RATE_LIMITER_ENABLED: 'false',
    RATE_LIMITER_GLOBAL_ENABLED: 'false',
    SERVE_APP: 'false',
    WEBSOCKETS_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    LOG_STYLE: 'raw',
  };
}

async function directusCall(url: string, token: string, method: string, route: string, body?: unknown): Promise<{ data: Record<string, unknown> }> {
  const res = await fetch(`${url}${route}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Directus ${method} ${route} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { data: Record<string, unknown> };
}

/** leadrun's lead as a Directus collection: the same columns, a UUID key. */
const LEADS_COLLECTION = {
  collection: 'leads',
  schema: {},
  meta: {},
  fields: [
    { field: 'id', type: 'uuid', meta: { special: ['uuid'], hidden: true, readonly: true }, schema: { is_primary_key: true, has_auto_increment: false } },
    { field: 'name', type: 'string', schema: { is_nullable: false } },
    { field: 'email', type: 'string' },
    { field: 'company_name', type: 'string' },
    { field: 'company_website', type: 'string' },
    { field: 'status', type: 'string', schema: { is_nullable: false, default_value: 'DISCOVERY' } },
  ],
};

/**
 * Directus on its own (empty) database: `directus bootstrap`, then `directus start`; the `leads` collection created
 * through its REST API as admin, the admin given a static token, and `leads` rows written with the values of
 * bench/seed.ts (in bulk SQL, as leadrun's are).
 */
export async function startDirectus(dir: string, databaseUrl: string, leads: number, siteUrl: string): Promise<Directus> {
  const port = await freePort();
  const env = directusEnv(databaseUrl, port);
  // The CLI of @directus/api itself: `directus`'s own cli.js first asks the registry for a newer version.
  const cli = path.join(dir, 'node_modules/@directus/api/dist/cli/run.js');
  await runToEnd('directus bootstrap', process.execPath, [cli, 'bootstrap'], { cwd: dir, env });
  const url = `http://127.0.0.1:${port}`;
  const server = await startProgram('directus start', [cli, 'start'], {
    cwd: dir, env, ready: async () => (await fetch(`${url}/server/ping`)).ok,
  });
  try {
    const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(DIRECTUS_ADMIN) });
    if (!login.ok) throw new Error(`Directus refused the admin's login: ${login.status} ${(await login.text()).slice(0, 300)}`);
    const session = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const token = `bench-${randomUUID()}`;
    await directusCall(url, session, 'PATCH', '/users/me', { token });
    await directusCall(url, token, 'POST', '/collections', LEADS_COLLECTION);
    await seedDirectusLeads(databaseUrl, leads, siteUrl);
    return { ...server, url, token };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function seedDirectusLeads(databaseUrl: string, leads: number, siteUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`
      INSERT INTO leads (id, name, email, company_name, company_website, status)
      SELECT gen_random_uuid(), 'Lead ' || g, 'lead' || g || '@prospect' || (g % 97) || '.example', 'Company ' || g || ' Ltd', $1 || '/c/' || g,
             (ARRAY['DISCOVERY','CONTACTED','QUALIFIED','PROPOSAL','WON','LOST'])[1 + g % 6]
      FROM generate_series(1, $2::int) g`, [siteUrl, leads]);
    await client.query('ANALYZE leads');
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------

export interface DbosFigures extends DbosResult {
  mode: DbosJob['mode'];
  work: DbosJob['work'];
  concurrency: number;
  /** Step outputs DBOS recorded (dbos.operation_outputs): four a workflow when every step was checkpointed. */
  recordedSteps: number;
}

/** bench/peers-dbos.ts from the peers' folder, on its own (empty) database. */
export async function runDbos(dir: string, job: DbosJob): Promise<DbosFigures> {
  const stdout = await runToEnd(`DBOS (${job.mode})`, process.execPath, [path.join(ROOT, 'bench/peers-dbos.ts')], {
    cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME }, input: JSON.stringify(job),
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const result = JSON.parse(line) as DbosResult;
  const client = new pg.Client({ connectionString: job.systemDatabaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ steps: number }>('SELECT count(*)::int AS steps FROM dbos.operation_outputs');
    return { ...result, mode: job.mode, work: job.work, concurrency: job.concurrency, recordedSteps: rows[0]!.steps };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** One line of the peers table: the same job done by a peer and by leadrun, in the same run. */
export interface PeerRow {
  peer: string;
  what: string;
  /** Requests (or workflows, runs) a second. */
  peerRate: number;
  leadrunRate: number;
  /** leadrun's rate over the peer's: the median of the ratios of each round where there were rounds. */
  ratio: number;
  peerP99: number | null;
  leadrunP99: number | null;
  peerRssMiB: number;
  leadrunRssMiB: number;
}

export function formatPeers(rows: PeerRow[]): string[] {
  const f = (n: number | null, digits = 0) => (n === null || Number.isNaN(n) ? '–' : n.toFixed(digits));
  return [
    '| peer | job (peer · leadrun) | peer /s | leadrun /s | leadrun ÷ peer | peer p99 ms | leadrun p99 ms | peer RSS MiB | leadrun RSS MiB |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
    ...rows.map((r) => `| ${r.peer} | ${r.what} | ${f(r.peerRate)} | ${f(r.leadrunRate)} | ${f(r.ratio, 2)}× | ${f(r.peerP99, 1)} | ${f(r.leadrunP99, 1)} | `
      + `${f(r.peerRssMiB)} | ${f(r.leadrunRssMiB)} |`),
  ];
}

// What the browser tests (and scripts/screenshots.ts) share: a real `leadrun serve` on a fresh database
// and a free port, the web UI built when it is missing or older than its sources, a local company website for
// RESEARCH to read, Chromium, and a signed-in session usable from the test itself.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort, PROJECT_ROOT, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess } from '../cli/support.ts';
import { BACKENDS, createMigratedPostgresDatabase } from '../support/postgres.ts';
import { seedDataDir } from '../support/templates.ts';

/**
 * The browser the tests drive: CHROMIUM_PATH, else Debian's headless shell (package chromium-headless-shell: the same
 * Blink and V8 as Debian's Chromium, without the desktop browser around them; a third less CPU for the same test,
 * docs/PERFORMANCE.md), else Debian's Chromium.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH
  ?? ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium'].find((file) => existsSync(file))
  ?? '/usr/bin/chromium';
export const WEB_ROOT = path.join(PROJECT_ROOT, 'web');
const DIST_INDEX = path.join(WEB_ROOT, 'dist', 'index.html');

/** Why the browser tests cannot run here, or null when they can. */
export function browserUnavailable(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Builds web/dist when it is missing or older than a file of web/. Test files run in parallel processes, so the
 * build is made under a lock directory; the others wait for it.
 */
export async function ensureWebBuild(): Promise<void> {
  const fresh = () => existsSync(DIST_INDEX) && statSync(DIST_INDEX).mtimeMs >= newestSource(WEB_ROOT);
  if (fresh()) return;
  const lock = path.join(PROJECT_ROOT, 'node_modules', '.leadrun-web-build.lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Someone else is building; a lock older than two minutes was left by a killed process.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('timed out waiting for another web build');
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    const vite = path.join(PROJECT_ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
    await new Promise<void>((resolve, reject) => {
      execFile(process.execPath, [vite, 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], { cwd: PROJECT_ROOT }, (error, _stdout, stderr) => {
        if (error) reject(new Error(`web build failed:\n${stderr}`));
        else resolve();
      });
    });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface Leadrun {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly process: LeadrunProcess;
  stop(): Promise<void>;
}

/**
 * `leadrun serve` on a fresh database, with RESEARCH allowed to read the local company site. `args` go after `serve`
 * (`--no-worker`: runs stay QUEUED). `storage` is the embedded database of a new `DATA_DIR` (a copy of the migrated
 * template), as `npm start` makes it, or a new PostgreSQL database (a copy of the migrated template, dropped with the
 * server). The tests about the web UI's pages run on PostgreSQL, where a server starts for less than half the CPU and
 * costs about 60 % of it in all, PostgreSQL's included (docs/PERFORMANCE.md); the embedded database under the UI is
 * the newcomer's path, kept by the tests of it. Without PostgreSQL (TEST_BACKENDS=pglite), every server is embedded.
 */
export async function startLeadrun(env: Record<string, string> = {}, options: { args?: string[]; storage?: 'embedded' | 'postgres' } = {}): Promise<Leadrun> {
  await ensureWebBuild();
  const dir = await tempDir('leadrun-web-');
  const database = options.storage === 'postgres' && BACKENDS.includes('postgres') ? await createMigratedPostgresDatabase() : null;
  if (!database) await seedDataDir(dir.path);
  const removeData = async () => {
    await dir.remove();
    await database?.drop();
  };
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawnLeadrun(['serve', ...(options.args ?? [])], {
    DATA_DIR: dir.path,
    ...(database ? { DATABASE_URL: database.url } : {}),
    PORT: String(port),
    PUBLIC_URL: url,
    LOG_LEVEL: 'warn',
    RESEARCH_ALLOW_PRIVATE_HOSTS: 'true',
    STEP_RETRY_BASE_MS: '50',
    // An approval in the UI sends at once, as the tests of delivery expect; the test of Undo sets its own wait.
    APPROVAL_UNDO_SECONDS: '0',
    // The footer's postal address (DESIGN §15): without one, a workspace delivers nothing.
    MAIL_POSTAL_ADDRESS: '1 Main Street, Springfield',
    ...env,
  });
  try {
    await waitForReady(server, `${url}/readyz`);
  } catch (error) {
    await server.kill('SIGKILL');
    await removeData();
    throw error;
  }
  return {
    url,
    process: server,
    async stop() {
      await server.kill('SIGTERM');
      await removeData();
    },
  };
}

export interface Site {
  readonly url: string;
  close(): Promise<void>;
}

const page = (title: string, body: string, description = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title><meta name="description" content="${description}"></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a> <a href="/customers">Customers</a> <a href="/pricing">Pricing</a></nav>
<main>${body}</main><footer>© Northwind Freight</footer></body></html>`;

const SITE: Record<string, string> = {
  '/': page('Northwind Freight — freight planning for mid-size carriers', `
    <h1>Plan every load in minutes, not days</h1>
    <p>Northwind Freight builds route and load planning software for mid-size carriers in Europe.</p>
    <p>More than 340 carriers plan their weekly loads with Northwind.</p>
    <p>Dispatchers cut planning time by 60% in their first quarter.</p>`,
  'Route and load planning software for mid-size European carriers.'),
  '/about': page('About Northwind Freight', `
    <h1>About us</h1>
    <p>Northwind Freight was founded in 2014 in Rotterdam.</p>
    <p>Our team of 85 people works from Rotterdam and Hamburg.</p>`),
  '/customers': page('Customers | Northwind Freight', `
    <h1>Customers</h1>
    <p>Carriers such as Van Dijk Transport and Baltic Haulage run their dispatch on Northwind.</p>`),
  '/pricing': page('Pricing | Northwind Freight', `
    <h1>Pricing</h1><p>Plans start at €49 per truck per month, billed annually.</p>`),
};

/** A small company website on loopback; `delayMs` holds each page back, so a run's RESEARCH step can be watched. */
export async function startCompanySite(options: { delayMs?: number } = {}): Promise<Site> {
  const server: Server = createServer((req, res) => {
    const body = SITE[(req.url ?? '/').split('?')[0] ?? '/'];
    setTimeout(() => {
      if (!body) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    }, options.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** A page served from another origin (another port, or `localhost` instead of 127.0.0.1: another site). */
export async function startOtherOrigin(html: (path: string) => string | null): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const body = html(req.url ?? '/');
    if (body === null) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** A Chromium of its own, with `args` besides the usual (the web tests share one per process: ./browser.ts). */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...args],
  });
}

export const ADMIN = { workspaceName: 'Acme Sales', name: 'Maya Brooks', email: 'maya@acme.test', password: 'correct horse battery' };

/** The first-run setup page's form, filled in with `admin` and sent (what follows is the caller's to check). */
export async function submitSetupForm(page: Page, admin = ADMIN): Promise<void> {
  await page.getByLabel('Workspace name').fill(admin.workspaceName);
  await page.getByLabel('Your name').fill(admin.name);
  await page.getByLabel('Work e-mail').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Create workspace' }).click();
}

/** A page at desktop size in a context of its own, with the errors its console reports. */
export async function openPage(browser: Pick<Browser, 'newContext'>): Promise<{ page: Page; consoleErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  return { page, consoleErrors: watchConsole(page) };
}

/** A new installation set up in the browser as a person does it: the first page sends them to setup, then to the leads. */
export async function setUpInBrowser(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForURL(`${url}/setup`);
  await submitSetupForm(page);
  await page.waitForURL(`${url}/leads`);
}

export interface SessionBody {
  user: { id: string; name: string | null; email: string | null; role: 'ADMIN' | 'MEMBER' };
  workspace: { id: string; name: string; plan: 'FREE' | 'PRO' };
  csrfToken: string;
}

/**
 * Requests made with a browser context's cookies (its APIRequestContext): what the UI would send, with the CSRF
 * token of the session. Used to prepare data quickly and to check what the server holds.
 */
export class SessionClient {
  readonly context: BrowserContext;
  readonly base: string;
  session: SessionBody | null;

  constructor(context: BrowserContext, base: string, session: SessionBody | null = null) {
    this.context = context;
    this.base = base;
    this.session = session;
  }

  static async setUp(context: BrowserContext, base: string, admin = ADMIN): Promise<SessionClient> {
    const res = await context.request.post(`${base}/ui/api/setup`, { data: admin, headers: { origin: base } });
    assert.equal(res.status(), 201, `setup: ${await res.text()}`);
    return new SessionClient(context, base, await res.json());
  }

  static async signIn(context: BrowserContext, base: string, email: string, password: string): Promise<SessionClient> {
    const res = await context.request.post(`${base}/ui/api/session`, { data: { email, password }, headers: { origin: base } });
    assert.equal(res.status(), 200, `sign-in: ${await res.text()}`);
    return new SessionClient(context, base, await res.json());
  }

  async call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: any; headers: Record<string, string> }> {
    const headers: Record<string, string> = { origin: this.base };
    if (method !== 'GET' && this.session) headers['x-csrf-token'] = this.session.csrfToken;
    const res = await this.context.request.fetch(`${this.base}${path}`, { method, headers, data: method === 'GET' || method === 'DELETE' ? undefined : (body ?? {}) });
    const text = await res.text();
    let json: any = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    return { status: res.status(), json, headers: res.headers() };
  }

  async ok(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<any> {
    const res = await this.call(method, path, body);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json;
  }
}

export const TRANSCRIPT = [
  'Sam (Acme): Thanks for making the time today, Priya.',
  'Priya: Happy to. Honestly, planning the weekly loads takes our dispatchers two full days, and they are exhausted by Friday.',
  'Sam (Acme): What have you tried so far?',
  'Priya: Spreadsheets, mostly. We looked at a tool last year but the price was too high for a team our size.',
  'Priya: If a pilot shows results, budget is approved for Q3.',
  'Sam (Acme): Shall I send a short pilot plan?',
  'Priya: Yes, send it next week and include our operations lead.',
].join('\n');

/** Collects what the page logs as errors, so a test can show them when it fails and assert there were none. */
export function watchConsole(pageToWatch: Page): string[] {
  const problems: string[] = [];
  pageToWatch.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  pageToWatch.on('console', (message) => {
    if (message.type() !== 'error') return;
    // A failed request logs a console error too; tests that provoke one (401, 403, 400) assert on it themselves.
    if (/Failed to load resource/.test(message.text())) return;
    problems.push(`console: ${message.text()}`);
  });
  return problems;
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A duration as the UI writes it ("426 ms", "1.3 s", "1 min 05 s"), in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(?:(\d+) min (\d+) s|([\d.]+) s|(\d+) ms)$/.exec(text.trim());
  assert.ok(m, `a duration: "${text}"`);
  if (m[1]) return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
  return m[3] ? Number(m[3]) * 1000 : Number(m[4]);
}

/** Whether a duration the UI shows (`parseDuration`) is `ms`, as precisely as it writes one: 850 ms, 2.4 s, 12 s, 1 min 05 s. */
export function showsDuration(shown: number, ms: number): boolean {
  return Math.abs(shown - ms) <= (ms < 1000 ? 1 : ms < 10_000 ? 50 : 500);
}

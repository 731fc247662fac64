// README's "A first run with curl", run as it is written (the block marked for it, with only the address of the
// test's server put in for http://localhost:3000) against a real `leadrun serve`: on a new installation, and on one
// set up in the browser first; each time twice in a row. It must end with a working key and a run approved to
// COMPLETED, on one workspace: the one the browser's setup made, when there is one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatabaseKind } from '../../src/db/database.ts';
import { BACKENDS, createPostgresDatabase } from '../helpers.ts';
import { cleanEnv, freePort, leadrunJson, PROJECT_ROOT, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess } from './support.ts';

const README_ADDRESS = 'http://localhost:3000';
const WALKTHROUGH_MARKER = '<!-- walkthrough:';

/** The fenced sh block that follows README's walkthrough marker. */
function readmeWalkthrough(): string {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const marker = readme.indexOf(WALKTHROUGH_MARKER);
  assert.ok(marker >= 0, 'README marks its walkthrough block');
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(marker));
  assert.ok(block?.[1], 'a ```sh block follows the marker');
  assert.ok(block.index < 200, 'the block follows the marker at once');
  return block[1];
}

interface Outcome {
  stdout: string;
  stderr: string;
  /** What the walkthrough's shell variables held at its end. */
  vars: Record<'WORKSPACE' | 'KEY' | 'RUN', string>;
}

/**
 * Runs the walkthrough in bash from the project folder, stopping at the first command that fails (errexit and
 * pipefail: stricter than a person's shell, so a failure cannot scroll by unnoticed).
 */
function runWalkthrough(baseUrl: string, env: Record<string, string>): Promise<Outcome> {
  const script = readmeWalkthrough();
  assert.ok(script.includes(README_ADDRESS));
  const trailer = '\nprintf "\\n@@ %s=%s\\n" WORKSPACE "$WORKSPACE" KEY "$KEY" RUN "$RUN"\n';
  const text = `set -eo pipefail\n${script.replaceAll(README_ADDRESS, baseUrl)}${trailer}`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', text], { cwd: PROJECT_ROOT, env: cleanEnv(env), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`the walkthrough failed (${error.code ?? error.signal}):\n${stderr}\n${stdout.slice(-3000)}`));
      const vars = Object.fromEntries([...stdout.matchAll(/^@@ (\w+)=(.*)$/gm)].map((m) => [m[1], m[2]])) as Outcome['vars'];
      resolve({ stdout, stderr, vars });
    });
  });
}

async function get(url: string, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** A new installation on `kind`: its environment, and a `serve` on it. */
async function installation(kind: DatabaseKind) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (kind === 'postgres') {
    const database = await createPostgresDatabase();
    env = { DATABASE_URL: database.url };
    cleanup = database.drop;
  } else {
    const dir = await tempDir('leadrun-walkthrough-');
    env = { DATA_DIR: dir.path };
    cleanup = dir.remove;
  }
  const server: LeadrunProcess = spawnLeadrun(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', STEP_RETRY_BASE_MS: '50' });
  await waitForReady(server, `${baseUrl}/readyz`);
  return {
    baseUrl,
    env,
    server,
    async close() {
      await server.kill('SIGTERM');
      await cleanup();
    },
  };
}

/** What must hold after every run of the walkthrough, on the workspace it was to use. */
async function assertEndedWell(baseUrl: string, env: Record<string, string>, outcome: Outcome, workspaceId: string): Promise<void> {
  const { WORKSPACE, KEY, RUN } = outcome.vars;
  assert.equal(WORKSPACE, workspaceId, 'the walkthrough used the expected workspace');
  assert.doesNotMatch(outcome.stderr, /Error|SyntaxError|\bat .*\(/, `no errors on stderr: ${outcome.stderr}`);

  // Its key works, its run was followed to AWAITING_APPROVAL and then approved.
  const auth = { authorization: `Bearer ${KEY}` };
  assert.equal((await get(`${baseUrl}/api/v1/leads?limit=1`, auth)).status, 200, 'the key works');
  // (assert.ok, not assert.match: the whole output would bury the message)
  assert.ok(/^event: end\ndata: \{"status":"AWAITING_APPROVAL"\}$/m.test(outcome.stdout), 'the event stream ended when the run awaited approval');
  assert.ok(/^COMPLETED$/m.test(outcome.stdout), `the approval answered COMPLETED: ${outcome.stdout.slice(-2500)}`);
  const run = (await get(`${baseUrl}/api/v1/runs/${RUN}`, auth)).json.data;
  assert.equal(run.status, 'COMPLETED');
  assert.deepEqual(run.steps.map((s: any) => [s.node, s.status]), [['RESEARCH', 'COMPLETED'], ['ANALYSIS', 'COMPLETED'], ['STRATEGY', 'COMPLETED'], ['WRITER', 'COMPLETED']]);
  assert.equal(run.emailDraft.status, 'APPROVED');
  assert.ok(new RegExp(`  run\\.approved  run:${RUN}$`, 'm').test(outcome.stdout), 'the audit list shows the approval');

  // One workspace in the whole installation.
  const workspaces = await leadrunJson(['workspace', 'list', '--json'], env);
  assert.deepEqual(workspaces.map((w: any) => w.id), [workspaceId], 'no second workspace was made');
}

// Each installation needs its own serve; with both backends, each case runs on one of them.
const cases = ['a new installation', 'an installation set up in the browser'] as const;
const backendOf = (index: number): DatabaseKind => BACKENDS[index % BACKENDS.length]!;

for (const [index, name] of cases.entries()) {
  const kind = backendOf(index);
  describe(`README walkthrough on ${name} (${kind})`, { timeout: 300_000 }, () => {
    let leadrun: Awaited<ReturnType<typeof installation>>;
    let workspaceId: string;
    let browserCookie: string | null = null;

    before(async () => { leadrun = await installation(kind); });
    after(() => leadrun?.close());

    if (name === 'an installation set up in the browser') {
      it('set up in the browser first', async () => {
        const res = await fetch(`${leadrun.baseUrl}/ui/api/setup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: leadrun.baseUrl },
          body: JSON.stringify({ workspaceName: 'Northwind', name: 'Sam Rivera', email: 'sam@northwind.test', password: 'correct horse battery' }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        workspaceId = ((await res.json()) as { workspace: { id: string } }).workspace.id;
        browserCookie = res.headers.get('set-cookie')!.split(';')[0]!;
      });
    }

    it('runs to a completed run and a working key', async () => {
      const outcome = await runWalkthrough(leadrun.baseUrl, leadrun.env);
      if (browserCookie) {
        assert.doesNotMatch(outcome.stderr, /needs a password/, 'nobody was made who would need a password');
      } else {
        workspaceId = outcome.vars.WORKSPACE;
        assert.match(outcome.stderr, /^To sign in to the web UI, you@example\.com needs a password: leadrun user password --email you@example\.com$/m);
      }
      await assertEndedWell(leadrun.baseUrl, leadrun.env, outcome, workspaceId);
    });

    it('runs again on the same workspace, with a new key and a new run', async () => {
      const outcome = await runWalkthrough(leadrun.baseUrl, leadrun.env);
      assert.doesNotMatch(outcome.stderr, /needs a password/, 'setup made nothing the second time');
      await assertEndedWell(leadrun.baseUrl, leadrun.env, outcome, workspaceId);
      const workspaces = await leadrunJson(['workspace', 'list', '--json'], leadrun.env);
      assert.equal(workspaces[0].adminEmail, browserCookie ? 'sam@northwind.test' : 'you@example.com');
      if (browserCookie) {
        // The person who set it up sees in the web UI what the walkthrough made.
        const leads = await get(`${leadrun.baseUrl}/api/v1/leads`, { cookie: browserCookie });
        assert.equal(leads.status, 200);
        assert.deepEqual(leads.json.data.map((lead: any) => lead.name), ['Ada Lovelace', 'Ada Lovelace']);
      }
    });
  });
}

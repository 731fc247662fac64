// README's "A first run with curl", run as it is written (the block marked for it, with only the address of the
// test's server put in for http://localhost:3000) against a real `leadrun serve`: on a new installation, and on one
// set up in the browser first; each time twice in a row, on an installation set up to send e-mail (SMTP_URL, whose
// default delivery is `send`). It must end with a working key and a run approved to COMPLETED, on one workspace: the
// one the browser's setup made, when there is one; no e-mail sent; and after two runs, one lead and one active key
// of the walkthrough's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatabaseKind } from '../../src/db/database.ts';
import { BACKENDS, createPostgresDatabase } from '../helpers.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
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

/** A new installation on `kind`, whose e-mail goes to `smtp`: its environment, and a `serve` on it. */
async function installation(kind: DatabaseKind, smtp: TestSmtpServer) {
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
  const server: LeadrunProcess = spawnLeadrun(['serve'], {
    ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', STEP_RETRY_BASE_MS: '50',
    SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', MAIL_POSTAL_ADDRESS: '1 Main Street, Springfield', ALLOW_PRIVATE_HOSTS: 'true',
  });
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
  assert.equal(run.emailDraft.delivery, null, 'approved without a delivery, although the workspace would send');
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
    let smtp: TestSmtpServer;
    let leadrun: Awaited<ReturnType<typeof installation>>;
    let workspaceId: string;
    let browserCookie: string | null = null;
    let firstKey: string;

    before(async () => {
      smtp = await startSmtpServer();
      leadrun = await installation(kind, smtp);
    });
    after(async () => {
      await leadrun?.close();
      await smtp?.close();
    });

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
      firstKey = outcome.vars.KEY;
      // The search and the count end their line, so that the next prompt starts on its own.
      assert.ok(/^\{"count":1\}$/m.test(outcome.stdout), `the count on a line of its own: ${outcome.stdout.slice(-1500)}`);
    });

    it('runs again on the same workspace, with its lead, one key of its own and a new run, and sends nothing', async () => {
      const outcome = await runWalkthrough(leadrun.baseUrl, leadrun.env);
      assert.doesNotMatch(outcome.stderr, /needs a password/, 'setup made nothing the second time');
      await assertEndedWell(leadrun.baseUrl, leadrun.env, outcome, workspaceId);
      const workspaces = await leadrunJson(['workspace', 'list', '--json'], leadrun.env);
      assert.equal(workspaces[0].adminEmail, browserCookie ? 'sam@northwind.test' : 'you@example.com');
      const auth = { authorization: `Bearer ${outcome.vars.KEY}` };
      const leads = await get(`${leadrun.baseUrl}/api/v1/leads`, auth);
      assert.deepEqual(leads.json.data.map((lead: any) => lead.name), ['Ada Lovelace'], 'one lead, found again');
      const calls = await get(`${leadrun.baseUrl}/api/v1/leads/${leads.json.data[0].id}/calls`, auth);
      assert.equal(calls.json.data.length, 1, 'one call, found again');
      const runs = await get(`${leadrun.baseUrl}/api/v1/runs`, auth);
      assert.equal(runs.json.data.length, 2, 'a run each time');
      // The first run's key was replaced: revoked, and audited so.
      assert.notEqual(outcome.vars.KEY, firstKey);
      assert.equal((await get(`${leadrun.baseUrl}/api/v1/leads?limit=1`, { authorization: `Bearer ${firstKey}` })).status, 401);
      assert.ok(/  key\.revoked  key:/m.test(outcome.stdout), 'the audit list shows the revocation');
      if (browserCookie) {
        // The person who set it up sees in the web UI what the walkthrough made, and one key of its own.
        assert.deepEqual((await get(`${leadrun.baseUrl}/api/v1/leads`, { cookie: browserCookie })).json.data.map((lead: any) => lead.name), ['Ada Lovelace']);
        const keys = (await get(`${leadrun.baseUrl}/ui/api/keys`, { cookie: browserCookie })).json.data;
        assert.equal(keys.filter((k: any) => k.name === 'curl walkthrough' && !k.revokedAt).length, 1, 'one active walkthrough key');
      }
      // No delivery was queued, so nothing can reach the mail server later either.
      assert.equal(smtp.received.length, 0, 'no e-mail was sent');
      assert.equal(smtp.attempts, 0);
    });
  });
}

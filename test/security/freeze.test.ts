// One key holder cannot freeze the server (DESIGN §10): a real `leadrun serve` on the embedded database works
// through hostile company websites and hostile transcripts while /healthz is probed every 50 ms. The pipeline's
// CPU work runs in the CPU pool's threads, so the event loop that answers HTTP keeps answering; every run still
// reaches a resting state, and a site that cannot be read never fails its run.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort, leadrunJson, spawnLeadrun, tempDir, waitForReady, type LeadrunProcess } from '../cli/support.ts';

const MiB = 1024 * 1024;

/** The hostile pages of the attack, each near the 1 MiB the fetch allows. */
const PAGES: Record<string, string> = {
  '/deep': `<html><head><title>Deep</title></head><body>${'<div>'.repeat(200_000)}Deep Corp serves 40 carriers.</body></html>`,
  '/unclosed': `<html><body>${'<div>'.repeat(100_000)}${'</span>'.repeat(70_000)}</body></html>`,
  '/sentences': `<html><body><main><p>${'A. '.repeat(330_000)}</p></main></body></html>`,
  '/links': `<html><body><main>${Array.from({ length: 20_000 }, (_, i) => `<a href="/about-${i}">About ${i}</a>`).join('')}</main></body></html>`,
};

const LINE = 'Ada: Our month-end reporting takes four days and the finance team is exhausted by it every month.\n';
/** The hostile transcripts of the attack, and the API's largest ordinary one (200,000 characters). */
const TRANSCRIPTS: Record<string, string> = {
  dashes: `x${'-'.repeat(110_000)}y`,
  commas: `Ada: a${','.repeat(80_000)}b`,
  abbreviations: 'Mr. '.repeat(49_000),
  longest: `Rep: Thanks for your time.\n${LINE.repeat(Math.floor(199_900 / LINE.length))}`.slice(0, 200_000),
};

const RESTING = new Set(['AWAITING_APPROVAL', 'FAILED', 'CANCELLED', 'COMPLETED', 'REJECTED']);

describe('a real serve under hostile websites and transcripts', () => {
  let site: Server;
  let siteUrl: string;
  let server: LeadrunProcess;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let baseUrl: string;
  let env: Record<string, string>;

  before(async () => {
    site = createServer((req, res) => {
      const page = PAGES[req.url ?? ''];
      if (!page) return void res.writeHead(404).end();
      assert.ok(Buffer.byteLength(page) <= MiB, `${req.url} fits the fetch limit`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    dataDir = await tempDir('leadrun-freeze-', { migrated: true });
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    env = {
      DATA_DIR: dataDir.path, PORT: String(port), PUBLIC_URL: baseUrl, LOG_LEVEL: 'warn',
      RESEARCH_ALLOW_PRIVATE_HOSTS: 'true', STEP_RETRY_BASE_MS: '10', WORKER_CONCURRENCY: '4', RATE_LIMIT_PER_MINUTE: '100000',
    };
    server = spawnLeadrun(['serve'], env);
    await waitForReady(server, `${baseUrl}/readyz`);
  });

  after(async () => {
    await server?.kill();
    await new Promise((resolve) => site?.close(resolve));
    await dataDir?.remove();
  });

  it('answers /healthz every 50 ms within bounds while each run reaches a resting state', async (t) => {
    const workspace = await leadrunJson(['workspace', 'create', '--name', 'Freeze', '--plan', 'pro', '--json'], env);
    const { key } = await leadrunJson(['key', 'create', '--workspace', workspace.id, '--name', 'attack', '--scopes', 'leads:read,leads:write,runs:read,runs:write', '--json'], env);
    const api = async (method: string, path: string, body?: unknown): Promise<any> => {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = await res.json();
      assert.ok(res.status < 300, `${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };

    const runs = new Map<string, string>();
    const start = async (name: string, website: string | null, transcript: string): Promise<void> => {
      const lead = await api('POST', '/api/v1/leads', { name: 'Ada Lovelace', companyName: 'Analytical Engines', ...(website ? { companyWebsite: website } : {}) });
      const call = await api('POST', `/api/v1/leads/${lead.id}/calls`, { transcript });
      const run = await api('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
      runs.set(run.id, name);
    };

    let slowest = 0;
    let probes = 0;
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const began = performance.now();
        const res = await fetch(`${baseUrl}/healthz`);
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        slowest = Math.max(slowest, performance.now() - began);
        probes += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const finished = new Map<string, any>();
    try {
      for (const path of Object.keys(PAGES)) await start(`page ${path}`, `${siteUrl}${path}`, LINE);
      for (const [name, transcript] of Object.entries(TRANSCRIPTS)) await start(`transcript ${name}`, null, transcript);
      const deadline = Date.now() + 120_000;
      while (finished.size < runs.size) {
        server.assertAlive();
        assert.ok(Date.now() < deadline, `runs still going: ${[...runs].filter(([id]) => !finished.has(id)).map(([, n]) => n).join(', ')}`);
        const { data } = await api('GET', '/api/v1/runs?limit=100');
        for (const run of data) if (runs.has(run.id) && RESTING.has(run.status)) finished.set(run.id, run);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      probing = false;
      await prober;
    }

    t.diagnostic(`slowest of ${probes} /healthz probes: ${Math.round(slowest)} ms`);
    for (const [id, run] of finished) {
      const name = runs.get(id)!;
      const research = run.steps.find((s: any) => s.node === 'RESEARCH');
      const times = run.steps.map((s: any) => `${s.node} ${s.durationMs === null ? '-' : Math.round(s.durationMs)} ms`).join(', ');
      t.diagnostic(`${name}: ${run.status}; ${times}`);
      assert.equal(run.status, 'AWAITING_APPROVAL', `${name}: ${JSON.stringify(run.steps.map((s: any) => [s.node, s.status, s.error]))}`);
      if (name.startsWith('page')) assert.equal(typeof research.output.website.fetched, 'boolean');
    }
    // The goal is well under 100 ms, and alone on a quiet machine the slowest is 100-140 ms (the embedded database's
    // statements run on the event loop). A loaded machine stretches it with everything else: 540-920 ms with six busy
    // loops beside it (before and after the same code), and 4,905 ms in a CI run where RESEARCH of these pages took
    // 11.6-13.6 s against about 1 s alone. The bound leaves that room and is still 30 times below what a frozen event
    // loop gave (295 s).
    assert.ok(slowest < 10_000, `slowest /healthz probe took ${Math.round(slowest)} ms`);
  });
});

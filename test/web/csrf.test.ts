// Scenario (d): a signed-in admin visits pages on other origins that try to use their session: forms that post
// to /api/v1/leads and /ui/api/keys (the form cannot send the X-CSRF-Token header), and a script that tries a
// credentialed fetch. From another site (localhost instead of 127.0.0.1) and from another port of the same site
// (which SameSite=Lax does not stop). Nothing is created.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { browserUnavailable, SessionClient, startLeadrun, startOtherOrigin, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

/** An attacker's page: a form that submits itself on load, as soon as the victim opens it. */
function attackPage(target: string, enctype: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields).map(([name, value]) => `<input type="hidden" name='${name}' value='${value}'>`).join('');
  return `<!doctype html><html><body><h1>You won a prize!</h1>
<form id="f" method="POST" action="${target}" enctype="${enctype}">${inputs}</form>
<script>document.getElementById('f').submit();</script></body></html>`;
}

const FETCH_PAGE = (target: string) => `<!doctype html><html><body><p id="out">…</p><script>
fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Fetched by attacker' }) })
  .then((r) => r.status, (e) => 'blocked').then((s) => { document.getElementById('out').textContent = 'done:' + s; });
</script></body></html>`;

describe('cross-site requests with the session', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let context: BrowserContext;
  let admin: SessionClient;
  let attacker: Awaited<ReturnType<typeof startOtherOrigin>>;

  before(async () => {
    server = await startLeadrun({}, { storage: 'postgres' });
    browser = await launchBrowser();
    context = await browser.newContext();
    admin = await SessionClient.setUp(context, server.url);
    attacker = await startOtherOrigin((path) => {
      const [route, query = ''] = path.split('?');
      const target = `${server.url}${new URLSearchParams(query).get('target') ?? '/api/v1/leads'}`;
      if (route === '/form-json') return attackPage(target, 'text/plain', { '{"name":"Planted by attacker","x":"': '"}' });
      if (route === '/form-urlencoded') return attackPage(target, 'application/x-www-form-urlencoded', { name: 'Planted by attacker', scopes: 'leads:read' });
      if (route === '/fetch') return FETCH_PAGE(target);
      return null;
    });
  });
  after(async () => {
    await browser?.close();
    await attacker?.close();
    await server?.stop();
  });

  async function visit(page: Page, url: string, waitForLeadrun: boolean): Promise<void> {
    await page.goto(url);
    // The form navigates the page to leadrun's answer; wait for it to arrive.
    if (waitForLeadrun) await page.waitForURL((u) => u.origin === new URL(server.url).origin, { timeout: 10_000 });
  }

  const origins = () => [
    ['another site', `http://localhost:${attacker.port}`],
    ['another port of the same site', `http://127.0.0.1:${attacker.port}`],
  ] as const;

  it('the victim is signed in, and a same-origin change works', async () => {
    const ok = await admin.call('POST', '/api/v1/leads', { name: 'Real lead' });
    assert.equal(ok.status, 201);
  });

  for (const target of ['/api/v1/leads', '/ui/api/keys']) {
    it(`forms posting to ${target} from other origins create nothing`, async () => {
      for (const [label, origin] of origins()) {
        for (const kind of ['form-json', 'form-urlencoded']) {
          const page = await context.newPage();
          const answers: number[] = [];
          page.on('response', (r) => { if (r.url().startsWith(`${server.url}${target}`)) answers.push(r.status()); });
          await visit(page, `${origin}/${kind}?target=${encodeURIComponent(target)}`, true);
          assert.ok(answers.length === 1, `${label}, ${kind}: the form was submitted`);
          assert.ok(answers[0]! >= 400, `${label}, ${kind}: refused (got ${answers[0]})`);
          await page.close();
        }
      }
      const leads = await admin.ok('GET', '/api/v1/leads');
      assert.deepEqual(leads.data.map((l: { name: string }) => l.name), ['Real lead'], 'no lead was planted');
      const keys = await admin.ok('GET', '/ui/api/keys');
      assert.deepEqual(keys.data, [], 'no key was created');
    });
  }

  it('a credentialed fetch from another origin is refused or unreadable, and creates nothing', async () => {
    for (const [label, origin] of origins()) {
      const page = await context.newPage();
      await page.goto(`${origin}/fetch?target=${encodeURIComponent('/api/v1/leads')}`);
      const out = page.locator('#out');
      await out.filter({ hasText: /^done:/ }).waitFor();
      assert.match(await out.innerText(), /^done:(blocked|4\d\d)$/, `${label}: ${await out.innerText()}`);
      await page.close();
    }
    const leads = await admin.ok('GET', '/api/v1/leads');
    assert.deepEqual(leads.data.map((l: { name: string }) => l.name), ['Real lead']);
  });
});

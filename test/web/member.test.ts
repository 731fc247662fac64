// Scenario (c): a MEMBER signs in through the sign-in page and cannot reach API keys or the audit log: the UI says
// the pages are for admins (naming them) and shows no data, and the server refuses /ui/api/keys with 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, browserUnavailable, SessionClient, startLeadrun, watchConsole, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const MEMBER = { name: 'Jordan Lee', email: 'jordan@acme.test', role: 'MEMBER', password: 'a long member password' };

describe('a member in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;

  before(async () => {
    server = await startLeadrun({}, { storage: 'postgres' });
    browser = await launchBrowser();
    const adminContext = await browser.newContext();
    const admin = await SessionClient.setUp(adminContext, server.url);
    await admin.ok('POST', '/ui/api/members', MEMBER);
    await admin.ok('POST', '/ui/api/keys', { name: 'Secret integration', scopes: ['leads:read'] });
    await adminContext.close();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('signs in, sees "admins only" on API keys and the audit log, and the keys API answers 403', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const consoleErrors = watchConsole(page);
    const keyRequests: number[] = [];
    page.on('response', (response) => { if (new URL(response.url()).pathname === '/ui/api/keys') keyRequests.push(response.status()); });

    // A signed-out visit to a page goes to sign-in, then back to that page.
    await page.goto(`${server.url}/settings/keys`);
    await page.waitForURL(/\/signin\?next=%2Fsettings%2Fkeys$/);
    await page.getByLabel('E-mail').fill(MEMBER.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That e-mail and password do not match an account here.').waitFor();

    await page.getByLabel('Password').fill(MEMBER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/settings/keys`);

    await page.getByRole('heading', { name: 'Admins only' }).waitFor();
    await page.getByText(`Ask your admin: ${ADMIN.name}.`).waitFor();
    assert.equal(await page.getByRole('table').count(), 0, 'no key table');
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'no way to create a key');
    assert.ok(!(await page.content()).includes('Secret integration'), "no key's name reaches the page");
    assert.deepEqual(keyRequests, [], 'the page does not even ask for the keys');

    // The navigation marks the admin pages; the audit log says the same.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${server.url}/settings/audit`);
    await page.getByRole('heading', { name: 'Admins only' }).waitFor();

    // The server refuses the member, whatever the UI shows.
    const res = await context.request.get(`${server.url}/ui/api/keys`);
    assert.equal(res.status(), 403);
    assert.match(res.headers()['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal(((await res.json()) as { code: string }).code, 'forbidden');
    const audit = await context.request.get(`${server.url}/ui/api/audit`);
    assert.equal(audit.status(), 403);

    // What a member may see: members (without an "Add member" button) and usage.
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('rowheader', { name: /Jordan Lee \(you\)/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add member' }).count(), 0);

    // Sign out ends the session: the next page asks to sign in again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal((await context.request.get(`${server.url}/ui/api/session`)).status(), 401);

    // Repeated wrong passwords pause sign-in (429 with Retry-After); the page says for how long and disables the button.
    for (let attempt = 1; attempt <= 12; attempt++) {
      await page.getByLabel('E-mail').fill('nobody@acme.test');
      await page.getByLabel('Password').fill(`wrong password ${attempt}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const answer = await Promise.race([
        page.getByText('Too many attempts').waitFor().then(() => 'paused'),
        page.getByRole('alert').getByText('do not match').waitFor().then(() => 'refused'),
      ]);
      if (answer === 'paused') break;
      assert.ok(attempt < 12, 'sign-in was never paused');
    }
    await page.getByText(/Try again in \d+ (minutes|seconds?)\./).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isDisabled(), true);

    assert.deepEqual(consoleErrors, []);
    await context.close();
  });
});

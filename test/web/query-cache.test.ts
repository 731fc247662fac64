// The web UI's reads go through one cache (web/src/lib/query.ts): a page opened again shows its last answer at once
// while it is read anew, and a change the server accepts has what is on screen read again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { browserUnavailable } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('reads through the query cache in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ server: { args: ['--no-worker'], storage: 'postgres' } });
  });
  after(async () => {
    await ui?.close();
  });

  it('shows a page opened again from its last answer at once, while it is read anew', async () => {
    const { page, server } = ui;
    await page.goto(`${server.url}/settings/usage`);
    const plan = page.locator('.plan-card');
    await plan.waitFor();
    await page.locator('.sidebar').getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor();

    // The next read of the usage is held: the page must not wait for it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    await page.route('**/ui/api/usage', async (route) => {
      await held;
      await route.continue();
    });
    const readAgain = page.waitForRequest((r) => new URL(r.url()).pathname === '/ui/api/usage');
    await page.locator('.sidebar').getByRole('link', { name: 'Plan and usage' }).click();
    await plan.waitFor({ timeout: 5_000 });
    assert.equal(await page.getByText('Loading usage').count(), 0, 'no loading state while the answer is cached');
    await readAgain;
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/ui/api/usage');
    release();
    await answered;
    assert.deepEqual(ui.consoleErrors, []);
  });

  it('reads what is on screen again after a change the server accepted', async () => {
    const { page, server } = ui;
    await page.goto(`${server.url}/settings/keys`);
    await page.getByText('No API keys yet').waitFor();
    const created = page.waitForRequest((r) => new URL(r.url()).pathname === '/ui/api/keys' && r.method() === 'POST');
    const readAgain = page.waitForRequest((r) => new URL(r.url()).pathname === '/ui/api/keys' && r.method() === 'GET');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('Cache check');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await created;
    // The new key is in the list at once (the answer is put in the cache), and the list is read again as well.
    await readAgain;
    await page.getByRole('dialog', { name: 'Your new API key' }).waitFor();
    assert.deepEqual(ui.consoleErrors, []);
  });
});


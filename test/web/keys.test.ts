// Scenario (a): an admin sets up a new installation, creates an API key in Settings / API keys (its plaintext is
// shown once, with a copy button), uses it against the API, sees "last used" appear, revokes it in the UI, and the
// next request with it is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { ADMIN, browserUnavailable, submitSetupForm, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('API keys in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ server: {}, context: { viewport: { width: 1280, height: 860 } }, signedIn: false });
    ({ server, page, consoleErrors } = ui);
    await ui.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  });
  after(async () => {
    await ui?.close();
  });

  it('first run → create a key → use it → last used shows → revoke it → the key is refused', async () => {
    // An empty installation sends every page to first-run setup.
    await page.goto(`${server.url}/settings/keys`);
    await page.waitForURL(`${server.url}/setup`);
    await page.getByRole('heading', { name: 'Set up your workspace' }).waitFor();

    // Client-side checks name the fields before anything is sent.
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByText('Use at least 10 characters.').waitFor();
    assert.equal(await page.getByLabel('Workspace name').getAttribute('aria-invalid'), 'true');

    await submitSetupForm(page);
    await page.waitForURL(`${server.url}/leads`);
    await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor();
    await page.locator('.sidebar').getByText(ADMIN.workspaceName).waitFor();

    // Settings / API keys, through the navigation.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${server.url}/settings/keys`);
    await page.getByText('No API keys yet').waitFor();

    const opener = page.getByRole('button', { name: 'Create key', exact: true });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.waitFor();
    // Focus starts in the dialog and Tab keeps it there.
    for (let i = 0; i < 12; i++) {
      assert.equal(await dialog.evaluate((el) => el.contains((globalThis as any).document.activeElement)), true, `focus stays in the dialog (Tab ${i})`);
      await page.keyboard.press(i % 4 === 3 ? 'Shift+Tab' : 'Tab');
    }
    await dialog.getByLabel('Name').fill('CI script');
    // leads:read and runs:read are checked to begin with; add leads:write.
    await dialog.getByRole('checkbox', { name: /leads:write/ }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const reveal = page.getByRole('dialog', { name: 'Your new API key' });
    await reveal.waitFor();
    await reveal.getByText('This is the only time it is shown').waitFor();
    const key = await reveal.getByRole('textbox', { name: 'CI script' }).inputValue();
    assert.match(key, /^sk_[A-Za-z0-9]{30,}$/);
    await reveal.getByRole('button', { name: 'Copy' }).click();
    await reveal.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key, 'the copy button puts the key on the clipboard');

    // Escape closes the dialog and focus goes back to the button that opened it.
    await page.keyboard.press('Escape');
    await reveal.waitFor({ state: 'detached' });
    assert.equal(await opener.evaluate((button) => button === (globalThis as any).document.activeElement), true, 'focus returns to "Create key"');

    const row = page.getByRole('row', { name: /CI script/ });
    await row.waitFor();
    assert.match(await row.innerText(), /leads:read[\s\S]*leads:write[\s\S]*runs:read/);
    assert.match(await row.innerText(), /Maya Brooks/, 'the creator is shown');
    assert.match(await row.locator('[data-col="last-used"]').innerText(), /Never/);
    assert.ok(!(await page.content()).includes(key), 'the plaintext is gone from the page once the dialog is closed');

    // The key works against the API.
    const used = await fetch(`${server.url}/api/v1/leads`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(used.status, 200);

    // "Last used" appears (written at most a second late); the page is reloaded as a person would.
    await waitFor(async () => {
      await page.reload();
      await row.waitFor();
      return /just now/.test(await row.locator('[data-col="last-used"]').innerText());
    }, 'lastUsedAt to show in the keys table');
    await page.reload();
    assert.ok(!(await page.content()).includes(key), 'the plaintext is never shown again');

    // Revoke it, with a confirmation.
    await row.getByRole('button', { name: 'Revoke CI script' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke “CI script”?' });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.getByText('Revoked').waitFor();
    assert.equal(await row.getByRole('button', { name: /Revoke/ }).count(), 0, 'a revoked key has no revoke button');

    const refused = await fetch(`${server.url}/api/v1/leads`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { code: string }).code, 'unauthorized');

    assert.deepEqual(consoleErrors, []);
  });
});

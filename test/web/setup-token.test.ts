// First run on a server that listens on an address other machines reach (HOST=0.0.0.0): the setup page asks for
// the one-time token `leadrun serve` printed, refuses a wrong one next to its field, and sets up with the right one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { waitForLine } from '../cli/support.ts';
import { ADMIN, browserUnavailable, startLeadrun, submitSetupForm, watchConsole, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

describe('first-run setup with a setup token', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let page: Page;
  let consoleErrors: string[];

  before(async () => {
    server = await startLeadrun({ HOST: '0.0.0.0' });
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('asks for the token, names a wrong one at its field, and sets up with the one serve printed', async () => {
    const token = JSON.parse(await waitForLine(server.process, /"setupToken"/)).setupToken as string;

    await page.goto(server.url);
    await page.waitForURL(`${server.url}/setup`);
    const field = page.getByLabel('Setup token');
    await field.waitFor();
    assert.equal(await field.evaluate((el) => el === (globalThis as any).document.activeElement), true, 'the token field has the focus');
    await page.getByText('when it started, in its terminal or its log').waitFor();

    // Checked before anything is sent.
    await submitSetupForm(page);
    await page.getByText('Enter the setup token that leadrun printed when it started.').waitFor();
    assert.equal(await field.getAttribute('aria-invalid'), 'true');

    // A wrong token: the server's 403 names the field.
    await field.fill('not-the-token');
    const refused = page.waitForResponse((res) => res.url().endsWith('/ui/api/setup') && res.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    assert.equal((await refused).status(), 403);
    await page.getByText(/Is not the one `leadrun serve` printed/).waitFor();
    assert.equal(await field.getAttribute('aria-invalid'), 'true');
    assert.equal(page.url(), `${server.url}/setup`);

    await field.fill(token);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(`${server.url}/leads`);
    await page.locator('.sidebar').getByText(ADMIN.workspaceName).waitFor();
    assert.deepEqual(consoleErrors.filter((e) => !/403/.test(e)), []);
  });
});

// The sender's identity in the browser (DESIGN §15): the first-run setup page asks for it, optional, with the footer
// preview Settings / E-mail shows, on a phone (390 px, nothing scrolls sideways) and on a laptop; what was typed is
// what Settings / E-mail then shows. There, the optional unsubscribe address (List-Unsubscribe's mailto:) is checked
// as an e-mail address before saving, and kept. Settings / Suppressions' form fits a phone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ADMIN, browserUnavailable, submitSetupForm, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** How wide the page is, and the form's controls that reach past the right edge of a `width` px screen. */
const overflow = (page: Page, width: number) => page.evaluate((w) => {
  const doc = (globalThis as any).document;
  const past = [...doc.querySelectorAll('form input, form textarea, form pre, form button, form legend, form p')]
    .filter((el: any) => el.getBoundingClientRect().right > w + 0.5).map((el: any) => el.outerHTML.slice(0, 60));
  return { scrollWidth: doc.documentElement.scrollWidth, past };
}, width);

describe('the sender\'s identity in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let ui: WebUi;
  let server: Leadrun;
  let page: Page;

  before(async () => {
    ui = await openWebUi({ signedIn: false, context: { viewport: PHONE } });
    ({ server, page } = ui);
  });
  after(async () => {
    await ui?.close();
  });

  it('asks for it at setup with the footer preview, on a phone and on a laptop, and saves what was typed', async () => {
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/setup`);
    const preview = page.getByRole('group', { name: 'Footer preview' });
    await page.getByLabel('Workspace name').fill(ADMIN.workspaceName);
    // The company defaults to the workspace's name, in the preview too, until one is typed.
    await preview.getByText(`${ADMIN.workspaceName}, (no postal address yet)`).waitFor();
    await page.getByLabel('Company').fill('Acme Inc.');
    await page.getByLabel('Postal address').fill('1 Main Street\nSpringfield, IL 62701');
    await preview.getByText('Acme Inc., 1 Main Street, Springfield, IL 62701').waitFor();
    assert.match(await preview.innerText(), /unsubscribe here: http:\/\/[^/]+\/unsubscribe\/…/);

    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      const fit = await overflow(page, viewport.width);
      assert.ok(fit.scrollWidth <= viewport.width, `at ${viewport.width} px the page is ${fit.scrollWidth} px wide`);
      assert.deepEqual(fit.past, [], `at ${viewport.width} px nothing reaches past the right edge`);
    }

    // A from address that is not one is named before anything is sent.
    await page.getByLabel('Sender name').fill('Acme Sales Team');
    await page.getByLabel('From address').fill('sales at acme');
    await submitSetupForm(page);
    await page.getByText('Enter an e-mail address like sales@company.com, or leave it empty.').waitFor();
    assert.equal(page.url(), `${server.url}/setup`);
    await page.getByLabel('From address').fill('sales@acme.test');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(`${server.url}/leads`);

    await page.goto(`${server.url}/settings/email`);
    await page.getByRole('heading', { name: 'E-mail', level: 1 }).waitFor();
    const sender = page.getByRole('region', { name: 'Sender' });
    assert.equal(await sender.getByLabel('Name').inputValue(), 'Acme Sales Team');
    assert.equal(await sender.getByLabel('Address').inputValue(), 'sales@acme.test');
    const identity = page.getByRole('region', { name: 'Company and footer' });
    assert.equal(await identity.getByLabel('Company').inputValue(), 'Acme Inc.');
    assert.equal(await identity.getByLabel('Street, town and postcode').inputValue(), '1 Main Street\nSpringfield, IL 62701');
    await identity.getByRole('group', { name: 'Footer preview' }).getByText('Acme Inc., 1 Main Street, Springfield, IL 62701').waitFor();
  });

  it('takes an unsubscribe address in Settings / E-mail, checked as an e-mail address, and keeps it', async () => {
    const identity = page.getByRole('region', { name: 'Company and footer' });
    await identity.getByLabel('Unsubscribe by e-mail').fill('unsubscribe at acme');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await identity.getByText('Enter an e-mail address like unsubscribe@company.com, or leave it empty.').waitFor();
    await identity.getByLabel('Unsubscribe by e-mail').fill('unsubscribe@acme.test');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The e-mail settings were saved.').waitFor();
    await page.reload();
    assert.equal(await page.getByRole('region', { name: 'Company and footer' }).getByLabel('Unsubscribe by e-mail').inputValue(), 'unsubscribe@acme.test');
  });

  it('Settings / Suppressions on a phone: an address added from its form, listed, and nothing sideways', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${server.url}/settings/suppressions`);
    await page.getByText('No suppressions yet').waitFor();
    await page.getByLabel('Address or domain').fill('Priya.Raman@Northwind-Freight.example');
    await page.getByRole('button', { name: 'Suppress' }).click();
    await page.locator('.table-card').getByText('priya.raman@northwind-freight.example').waitFor();
    const fit = await overflow(page, PHONE.width);
    assert.ok(fit.scrollWidth <= PHONE.width, `the page is ${fit.scrollWidth} px wide`);
    assert.deepEqual(fit.past, [], 'the form fits');
  });
});

// The unsubscribe page (DESIGN §15) in Chromium on a phone (390×844): it names the masked address, fits the screen
// with nothing sideways and the button in reach, loads nothing from elsewhere and breaks no rule of its CSP, changes
// nothing when opened, and its button suppresses the address once pressed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unsubscribeToken } from '../../src/domain/suppressions/tokens.ts';
import { startTestApp, type TestApp } from '../helpers.ts';
import { browserUnavailable, watchConsole } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const PHONE = { width: 390, height: 844 };

describe('the unsubscribe page on a phone', { skip: browserUnavailable() ?? false }, () => {
  let t: TestApp;
  let browser: TestBrowser;
  let workspaceId: string;

  before(async () => {
    [t, browser] = await Promise.all([startTestApp('pglite'), launchBrowser()]);
    workspaceId = (await t.workspace('pro')).id;
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const entries = () => t.database.db.selectFrom('suppressions').selectAll().where('workspace_id', '=', workspaceId).execute();

  it('fits 390 px, loads nothing else, changes nothing when opened, and unsubscribes with its button', async () => {
    const email = 'bartholomew.featherstonehaugh-wellington@northwind-logistics-international.example';
    const token = await unsubscribeToken(t.database.db, t.deps.secrets(), workspaceId, email, new Date());
    const page = await browser.newPage({ viewport: PHONE });
    const problems = watchConsole(page);
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    const response = await page.goto(`${t.url}/unsubscribe/${token}`);
    assert.equal(response?.status(), 200);
    await page.getByRole('heading', { name: 'Unsubscribe' }).waitFor();
    assert.match(await page.locator('main').innerText(), /ba\*\*\*@northwind-logistics-international\.example/);
    assert.deepEqual(requests, [`${t.url}/unsubscribe/${token}`], 'nothing but the page itself');
    const fit = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const button = doc.querySelector('button').getBoundingClientRect();
      return { scrollWidth: doc.documentElement.scrollWidth, button: { left: button.left, right: button.right, bottom: button.bottom, height: button.height } };
    });
    assert.ok(fit.scrollWidth <= PHONE.width, `nothing scrolls sideways (${fit.scrollWidth})`);
    assert.ok(fit.button.left >= 0 && fit.button.right <= PHONE.width && fit.button.bottom <= PHONE.height, JSON.stringify(fit.button));
    assert.ok(fit.button.height >= 44, 'a button a thumb can press');
    assert.deepEqual(await entries(), [], 'opening the page changed nothing');

    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/unsubscribe/${token}`, 'no redirect');
    const [entry] = await entries();
    assert.deepEqual([entry?.email, entry?.reason, entry?.source], [email, 'unsubscribed', 'unsubscribe_link']);
    assert.deepEqual(problems, [], 'no console error, no CSP violation');
  });
});

// The Outbox and the sending rules in the browser (DESIGN §14), against `leadrun serve` sending through a real SMTP
// server on loopback, on a phone-sized screen (390 px): two e-mails approved for later are listed soonest first; "Send
// now" sends one (it arrives), "Cancel" takes the other off (never sent). Settings / E-mail saves the window and the
// limits, and shows the sender's count today.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { browserUnavailable, SessionClient, TRANSCRIPT, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('the outbox in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let smtp: TestSmtpServer;
  let server: Leadrun;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  let ui: WebUi;

  before(async () => {
    smtp = await startSmtpServer();
    ui = await openWebUi({
      env: { SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', ALLOW_PRIVATE_HOSTS: 'true' },
      context: { viewport: { width: 390, height: 844 } },
    });
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
  });
  after(async () => {
    await ui?.close();
    await smtp?.close();
  });

  async function approvedForLater(name: string, email: string, sendAt: string): Promise<string> {
    const lead = await client.ok('POST', '/api/v1/leads', { name, email, companyName: 'Northwind Freight', timeZone: 'Europe/Berlin' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.status === 'AWAITING_APPROVAL', 'the draft', 60_000);
    const runId = run.id;
    await client.ok('POST', `/api/v1/runs/${runId}/approve`, { deliver: 'send', sendAt });
    return runId;
  }

  it('lists waiting e-mails on a phone, sends one now and cancels the other', async () => {
    const later = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const latest = new Date(Date.now() + 4 * 86_400_000).toISOString();
    await approvedForLater('Priya Raman', 'priya@northwind.example', later);
    await approvedForLater('Tom Okafor', 'tom@harbor.example', latest);

    await page.goto(`${server.url}/outbox`);
    await page.getByRole('heading', { name: 'Outbox', level: 1 }).waitFor();
    const rows = page.locator('tbody tr');
    await waitFor(async () => (await rows.count()) === 2, 'two waiting e-mails');
    assert.match(await rows.nth(0).innerText(), /priya@northwind\.example/);
    assert.match(await rows.nth(0).innerText(), /The time asked for/);
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no sideways scrolling at 390 px (${width} px wide)`);

    await rows.nth(0).getByRole('button', { name: 'Send now' }).click();
    await page.getByText('The e-mail is on its way').waitFor();
    const [mail] = await smtp.waitFor(1, 30_000);
    assert.deepEqual(mail!.envelope.to, ['priya@northwind.example']);
    await waitFor(async () => (await rows.count()) === 1, 'one left');

    await rows.nth(0).getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('Nothing is waiting').waitFor();
    assert.equal(smtp.received.length, 1, 'the cancelled e-mail was not sent');
    assert.deepEqual(consoleErrors, []);
  });

  it('saves the sending rules in Settings / E-mail and shows today\'s count per sender', async () => {
    await page.goto(`${server.url}/settings/email`);
    const rules = page.getByRole('region', { name: 'Sending rules' });
    await rules.waitFor();
    await rules.getByText(/sales@acme\.test: 1 of 50/).waitFor();
    await rules.getByLabel('Sat').check();
    await rules.getByLabel('Daily limit per sender').fill('120');
    await rules.getByLabel('Workspace time zone').selectOption('Europe/Berlin');
    await rules.getByRole('button', { name: 'Save sending rules' }).click();
    await page.getByText('The sending rules were saved.').waitFor();
    const saved = await client.ok('GET', '/ui/api/settings/sending');
    assert.deepEqual(saved.days, [1, 2, 3, 4, 5, 6]);
    assert.equal(saved.dailyLimit, 120);
    assert.equal(saved.timeZone, 'Europe/Berlin');
    assert.deepEqual(consoleErrors, []);
  });
});

// The Outbox and the sending rules in the browser (DESIGN §14), against `leadrun serve` sending through a real SMTP
// server on loopback, on a phone-sized screen (390 px): two e-mails approved for later are listed soonest first; "Send
// now" sends one (it arrives), "Cancel" takes the other off (never sent). Settings / E-mail saves the window and the
// limits, and shows the sender's count today. The run page's approve bar approves "In the next send window" outside
// the window, and the e-mail waits in the Outbox; the review queue offers the same choices, with the follow-ups.
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

  it('approves "In the next send window" on the run page outside the window: the e-mail waits in the Outbox', async () => {
    // The window is open tomorrow only (UTC), so that now is outside it whenever the test runs.
    const tomorrow = ((new Date().getUTCDay() + 1) % 7) || 7;
    await client.ok('PUT', '/ui/api/settings/sending', { days: [tomorrow], start: '08:00', end: '18:00', timeZone: 'UTC' });
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Ines Duarte', email: 'ines@lisbonlogistics.example', companyName: 'Lisbon Logistics' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.status === 'AWAITING_APPROVAL', 'the draft', 60_000);

    await page.goto(`${server.url}/runs/${run.id}`);
    const bar = page.getByRole('group', { name: 'Decide on the draft' });
    await bar.waitFor();
    await bar.getByLabel('When to send').selectOption('next_window');
    await bar.getByRole('button', { name: 'Approve and send' }).click();
    await page.getByText(/It waits in the Outbox until/).waitFor();
    const delivery = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.emailDraft.delivery;
    assert.equal(delivery.status, 'SCHEDULED');
    const opens = new Date(delivery.scheduledFor);
    assert.equal(opens.getUTCHours(), 8);
    assert.equal(opens.getUTCDay() || 7, tomorrow);

    await page.goto(`${server.url}/outbox`);
    const row = page.locator('tbody tr', { hasText: 'ines@lisbonlogistics.example' });
    await row.waitFor();
    assert.match(await row.innerText(), /window/i);
    assert.equal(smtp.received.filter((m) => m.envelope.to.includes('ines@lisbonlogistics.example')).length, 0, 'not sent');
    assert.deepEqual(consoleErrors, []);
  });

  it('approves from the review queue with no follow-ups, in the next send window: the e-mail waits in the Outbox', async () => {
    const tomorrow = ((new Date().getUTCDay() + 1) % 7) || 7;
    await client.ok('PUT', '/ui/api/settings/sending', { days: [tomorrow], start: '08:00', end: '18:00', timeZone: 'UTC' });
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Oskar Lind', email: 'oskar@nordhamn.example', companyName: 'Nordhamn Shipping' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.status === 'AWAITING_APPROVAL', 'the draft', 60_000);

    await page.goto(`${server.url}/runs/review`);
    const bar = page.getByRole('group', { name: 'Decide on the draft' });
    await bar.waitFor();
    await bar.getByLabel('Follow-ups after this e-mail').selectOption('none');
    await bar.getByLabel('When to send').selectOption('at');
    const approve = bar.getByRole('button', { name: /^Approve and send/ });
    assert.equal(await approve.isDisabled(), true, 'no time picked yet');
    await bar.getByLabel('When to send').selectOption('next_window');
    await approve.click();
    await page.getByText(/It waits in the Outbox until/).waitFor();
    const approved = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
    assert.equal(approved.emailDraft.delivery.status, 'SCHEDULED');
    assert.equal(approved.sequence, null, 'no follow-ups');
    assert.equal(smtp.received.filter((m) => m.envelope.to.includes('oskar@nordhamn.example')).length, 0, 'not sent');
    assert.deepEqual(consoleErrors, []);
  });
});

// Approve and send in the web UI, against `leadrun serve` with SMTP_URL and MAIL_FROM pointing at a real SMTP server
// on loopback: the run page offers "Approve and send" first, follows the delivery live to "Sent at …", the message
// arrives with the run's Message-ID, and the lead becomes CONTACTED.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { browserUnavailable, SessionClient, TRANSCRIPT, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('approve and send in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let smtp: TestSmtpServer;
  let server: Leadrun;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    smtp = await startSmtpServer();
    ui = await openWebUi({ env: {
      SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', MAIL_POSTAL_ADDRESS: '1 Main Street, Springfield', ALLOW_PRIVATE_HOSTS: 'true',
    } });
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
    // Several e-mails of one sender within a minute: no least gap between two (DESIGN §14's default is 90 s).
    await client.ok('PUT', '/ui/api/settings/sending', { minGapSeconds: 0 });
  });
  after(async () => {
    await ui?.close();
    await smtp?.close();
  });

  it('a draft approved and sent arrives, the page says Sent, and the lead is CONTACTED', async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await page.goto(`${server.url}/runs/${run.id}`);
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    const send = draft.getByRole('button', { name: 'Approve and send' });
    await send.waitFor({ timeout: 30_000 });
    await draft.getByRole('button', { name: 'Approve only' }).waitFor();
    assert.equal(await draft.getByRole('button', { name: 'Save to my mailbox' }).count(), 0, 'no mailbox without IMAP');

    await send.click();
    await page.getByText('Draft approved. Sending it now.').waitFor();
    const panel = page.getByRole('region', { name: 'Delivery' });
    await panel.getByText(/^Sent at \d{1,2}:\d{2}/).waitFor({ timeout: 30_000 });
    await draft.getByText('Sent', { exact: true }).waitFor();

    const [mail] = await smtp.waitFor(1);
    const stored = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
    assert.equal(stored.emailDraft.status, 'SENT');
    assert.equal(mail!.parsed.messageId, stored.emailDraft.delivery.messageId);
    assert.match(await panel.innerText(), new RegExp(stored.emailDraft.delivery.messageId.replace(/[.*+?^${}()|[\]\\<>]/g, '\\$&')));
    assert.deepEqual(mail!.envelope.to, ['priya@northwind.example']);
    assert.equal(mail!.parsed.from?.value[0]?.name, 'Maya Brooks', "the approving person's name at the workspace's address");
    assert.equal(mail!.parsed.from?.value[0]?.address, 'sales@acme.test');
    assert.equal((await client.ok('GET', `/api/v1/leads/${lead.id}`)).data.status, 'CONTACTED');
    assert.deepEqual(consoleErrors, []);
  });

  it('a refused e-mail shows Failed with the server\'s words, and "Retry delivery" sends it', async () => {
    smtp.answer = (_mail, attempt) => (attempt === 2 ? { code: 550, message: '5.1.1 Mailbox unavailable' } : { accept: true });
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Tom Okafor', email: 'tom@harbor.example', companyName: 'Harbor Logistics' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Intro call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await page.goto(`${server.url}/runs/${run.id}`);
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Approve and send' }).click({ timeout: 30_000 });
    const panel = page.getByRole('region', { name: 'Delivery' });
    await panel.getByText('Failed: The server answered 550 5.1.1 Mailbox unavailable').waitFor({ timeout: 30_000 });
    await draft.getByText('Approved', { exact: true }).waitFor();
    await page.locator('.page-header').getByText('E-mail not sent', { exact: true }).waitFor();
    assert.equal((await client.ok('GET', `/api/v1/leads/${lead.id}`)).data.status, 'DISCOVERY');

    await panel.getByRole('button', { name: 'Retry delivery' }).click();
    await panel.getByText(/^Sent at /).waitFor({ timeout: 30_000 });
    await page.locator('.page-header').getByText('E-mail sent', { exact: true }).waitFor();
    await smtp.waitFor(2);
    assert.match(await panel.innerText(), /Attempts\s*2/);
    assert.equal((await client.ok('GET', `/api/v1/leads/${lead.id}`)).data.status, 'CONTACTED');
    assert.deepEqual(consoleErrors, []);
  });
});

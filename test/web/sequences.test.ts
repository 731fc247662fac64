// Follow-ups in the browser (DESIGN §13), against `leadrun serve` on PostgreSQL and a real SMTP server: an admin
// makes a sequence in Settings / Sequences; the run page's approval offers it (the default preselected); after the
// first e-mail goes, the thread on the run page shows it sent and the follow-up scheduled; the follow-up, written by
// the scheduler's pass (run here on the same database, as the sequences.tick job runs it), waits in the review queue
// as "Follow-up 2 of 2", is approved there, and the run page's thread shows it approved.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import { writeFollowUp } from '../../src/agent/follow-up/index.ts';
import { BACKENDS, createMigratedPostgresDatabase } from '../helpers.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { browserUnavailable, SessionClient, TRANSCRIPT, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

const skip = browserUnavailable() ?? (!BACKENDS.includes('postgres') && 'the test shares the server\'s PostgreSQL database');

describe('follow-up sequences in the web UI', { skip: skip ?? false }, () => {
  let smtp: TestSmtpServer;
  let ui: WebUi;
  let server: Leadrun;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  let target: { url: string; drop(): Promise<void> };
  let database: Database;

  before(async () => {
    smtp = await startSmtpServer();
    target = await createMigratedPostgresDatabase();
    database = await openDatabase({ databaseUrl: target.url });
    ui = await openWebUi({
      env: { SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', ALLOW_PRIVATE_HOSTS: 'true', DATABASE_URL: target.url },
      server: { storage: 'embedded' },
    });
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
  });
  after(async () => {
    await ui?.close();
    await database?.close();
    await target?.drop();
    await smtp?.close();
  });

  it('makes a sequence, approves with it, and approves its follow-up from the review queue', async () => {
    await page.goto(`${server.url}/settings/sequences`);
    await page.getByRole('region', { name: 'Two follow-ups' }).waitFor();
    await page.getByRole('button', { name: 'New sequence' }).click();
    const dialog = page.getByRole('dialog', { name: 'New sequence' });
    await dialog.getByLabel('Name').fill('One quick bump');
    await dialog.getByLabel('Wait (business days)').fill('1');
    await dialog.getByLabel('Instruction').fill('A short bump with the pilot.');
    await dialog.getByRole('button', { name: 'Make sequence' }).click();
    const made = page.getByRole('region', { name: 'One quick bump' });
    await made.waitFor();
    await made.getByRole('button', { name: 'Make default' }).click();
    await made.getByText('Default').waitFor();

    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Call' });
    const started = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${started.id}`)).data.status === 'AWAITING_APPROVAL', 'the draft', 30_000);

    await page.goto(`${server.url}/runs/${started.id}`);
    const picker = page.getByLabel('Follow-ups after this e-mail');
    await picker.waitFor();
    assert.match(await picker.locator('option:checked').innerText(), /One quick bump/);
    await page.getByRole('button', { name: 'Approve and send', exact: true }).click();
    await smtp.waitFor(1);
    const thread = page.locator('.thread-card');
    await thread.getByText('Thread · One quick bump').waitFor();
    await thread.getByRole('listitem', { name: 'First e-mail' }).getByText('Sent').waitFor({ timeout: 20_000 });
    await thread.getByRole('listitem', { name: 'Follow-up 2 of 2' }).getByText('Scheduled').waitFor();

    // The scheduler's pass at the follow-up's due time writes it; review is required, so it waits for a person.
    const touches = (await client.ok('GET', `/api/v1/runs/${started.id}/touches`)).data;
    const counts = await runSchedulerPass(database.db, new ManualClock(touches[1].dueAt), writeFollowUp);
    assert.equal(counts.written, 1);

    await page.goto(`${server.url}/runs/review`);
    const queue = page.getByRole('region', { name: 'Follow-ups to review' });
    const followUp = queue.getByRole('article', { name: 'Follow-up 2 of 2 for Priya Raman' });
    await followUp.waitFor();
    await followUp.getByText(/^Re: /).waitFor();
    await followUp.getByRole('button', { name: 'Approve follow-up' }).click();
    await page.getByText('Follow-up 2 for Priya Raman approved.').waitFor();

    await page.goto(`${server.url}/runs/${started.id}`);
    await page.locator('.thread-card').getByRole('listitem', { name: 'Follow-up 2 of 2' }).getByText('Approved').waitFor();
    const after = (await client.ok('GET', `/api/v1/runs/${started.id}/touches`)).data;
    assert.equal(after[1].status, 'APPROVED');
    assert.equal(after[1].delivery.status, 'QUEUED', 'approved ahead of its due time, it waits for it');
    assert.deepEqual(consoleErrors, []);
  });
});

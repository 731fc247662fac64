// An approval that sends can be undone for a few seconds (src/http/routes/ui/approvals.ts): the key A of the review queue
// says "Approve and send", the toast offers Undo, and an undone approval sends nothing and leaves the run awaiting
// approval; without Undo the e-mail goes once the wait is over, from the queue and from the run page alike. The
// wait is APPROVAL_UNDO_SECONDS, short here, and on the server: the test never sleeps through it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import {
  browserUnavailable, SessionClient, TRANSCRIPT, waitFor, type Leadrun,
} from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

const UNDO_SECONDS = 3;

describe('undoing an approval that sends', { skip: browserUnavailable() ?? false }, () => {
  let smtp: TestSmtpServer;
  let server: Leadrun;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  /** A run of a new lead, awaiting approval. */
  async function draftFor(name: string, email: string): Promise<any> {
    const lead = await client.ok('POST', '/api/v1/leads', { name, email, companyName: 'Northwind Freight' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT, title: 'Call' });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    return waitFor(async () => {
      const current = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
      return current.status === 'AWAITING_APPROVAL' ? current : null;
    }, 'the run to await approval', 30_000);
  }

  let ui: WebUi;
  before(async () => {
    smtp = await startSmtpServer();
    ui = await openWebUi({ env: {
      SMTP_URL: `smtp://${smtp.host}:${smtp.port}`, MAIL_FROM: 'Acme Sales <sales@acme.test>', MAIL_POSTAL_ADDRESS: '1 Main Street, Springfield',
      ALLOW_PRIVATE_HOSTS: 'true', APPROVAL_UNDO_SECONDS: String(UNDO_SECONDS),
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

  it('A says "Approve and send"; Undo in its toast sends nothing and the draft awaits approval again', async () => {
    const run = await draftFor('Priya Raman', 'priya@northwind.example');
    await page.goto(`${server.url}/runs/review`);
    const draft = page.locator('section.draft-review');
    await draft.getByRole('heading', { level: 2, name: /Priya Raman/ }).waitFor({ timeout: 30_000 });
    await draft.getByRole('button', { name: 'Approve and send', exact: true }).waitFor();
    const legend = page.getByRole('complementary', { name: 'Keyboard' });
    await legend.getByText('Approve and send', { exact: true }).waitFor();

    await page.keyboard.press('a');
    const said = `Approved the draft for Priya Raman. Sending it in ${UNDO_SECONDS} s.`;
    const toast = page.getByRole('status').locator('.toast', { hasText: said });
    await toast.waitFor();
    assert.equal(smtp.received.length, 0, 'nothing is sent during the wait');
    await page.getByRole('heading', { name: 'Nothing awaits approval' }).waitFor();
    await toast.getByRole('button', { name: 'Undo' }).click();

    await page.getByText('Approval undone: nothing was sent, and the draft awaits approval again.').waitFor();
    // The draft is back on show, to be decided again.
    await draft.getByRole('heading', { level: 2, name: /Priya Raman/ }).waitFor();
    const stored = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
    assert.equal(stored.status, 'AWAITING_APPROVAL');
    assert.equal(stored.emailDraft.status, 'DRAFT');
    assert.equal(stored.emailDraft.delivery, null, 'no delivery is left to go');
    const events = (await client.ok('GET', `/api/v1/runs/${run.id}/events`)).data.map((e: any) => e.type);
    // The approval enrolled the lead in the default sequence; the undo takes the enrolment back with it.
    assert.deepEqual(events.slice(-4), ['run.approved', 'draft.delivery_queued', 'sequence.enrolled', 'run.approval_undone']);
    assert.equal(stored.sequence, null);
    const audit = (await client.ok('GET', '/ui/api/audit')).data.map((e: any) => e.action);
    assert.ok(audit.includes('run.approval_undone'), `audited: ${audit}`);
    // Too late or twice: the run is no longer approved.
    assert.equal((await client.call('POST', `/ui/api/runs/${run.id}/undo-approval`, {})).status, 409);
    assert.equal(smtp.received.length, 0);
  });

  it('without Undo the e-mail goes once the wait is over, from the queue and from the run page', async () => {
    // The run of the first test is still in the queue: A approves it, and this time nobody undoes it.
    const fromPage = await draftFor('Tom Okafor', 'tom@harbor.example');
    await page.goto(`${server.url}/runs/review`);
    const heading = page.locator('section.draft-review').getByRole('heading', { level: 2, name: /Priya Raman/ });
    await heading.waitFor({ timeout: 30_000 });
    const approvedAt = Date.now();
    await page.keyboard.press('a');
    await page.getByRole('status').getByText(`Approved the draft for Priya Raman. Sending it in ${UNDO_SECONDS} s.`)
      .waitFor();

    await page.goto(`${server.url}/runs/${fromPage.id}`);
    const card = page.getByRole('region', { name: 'E-mail draft' });
    await card.getByRole('button', { name: 'Approve and send' }).click({ timeout: 30_000 });
    await page.getByRole('status').getByText(`Draft approved. Sending it in ${UNDO_SECONDS} s.`).waitFor();
    await page.getByRole('status').getByRole('button', { name: 'Undo' }).waitFor();

    const mails = await smtp.waitFor(2, 30_000);
    const waited = Date.now() - approvedAt;
    assert.ok(waited >= (UNDO_SECONDS - 0.5) * 1000, `the first e-mail went after ${waited} ms, not before the wait`);
    assert.deepEqual(mails.map((m) => m.envelope.to[0]).sort(), ['priya@northwind.example', 'tom@harbor.example']);
    await page.getByRole('region', { name: 'Delivery' }).getByText(/^Sent at \d{1,2}:\d{2}/)
      .waitFor({ timeout: 30_000 });
    assert.equal(smtp.received.length, 2, 'the undone approval of the first test never sent');
    assert.deepEqual(consoleErrors, []);
  });
});

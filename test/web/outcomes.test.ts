// Replies and outcomes in the web UI (DESIGN §16): a person marks a reply on the run page ("Mark as…"), the reply shows
// its new class as theirs and the lead moves to Qualified; the review queue lists it under "Replies to answer" with the
// response WRITER drafted for it, which the person edits there; the
// Outcomes page draws its charts and tables on a 390 px phone without a sideways scroll of the page. leadrun serves
// from a PostgreSQL database that the test also writes to, as the delivery and the reply check would.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigratedPostgresDatabase } from '../helpers.ts';
import { browserUnavailable, SessionClient, startLeadrun, TRANSCRIPT, waitFor, watchConsole, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

describe('marking a reply and opening Outcomes', { skip: browserUnavailable() ?? false }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: Database;
  let server: Leadrun;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];

  before(async () => {
    created = await createMigratedPostgresDatabase();
    server = await startLeadrun({ DATABASE_URL: created.url });
    database = await openDatabase({ databaseUrl: created.url });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await database?.close();
    await created?.drop();
  });

  it('marks a reply as interested, lists it to answer, and shows the week\'s reply rate at 390 px', async () => {
    const client = await SessionClient.setUp(context, server.url);
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Daniel Ng', email: 'daniel@acme.example', companyName: 'Acme', status: 'CONTACTED' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT });
    const started = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    const run = await waitFor(async () => {
      const current = (await client.ok('GET', `/api/v1/runs/${started.id}`)).data;
      return current.status === 'AWAITING_APPROVAL' ? current : null;
    }, 'the run awaits approval', 30_000);

    // What the delivery and the reply check write: an e-mail sent an hour ago, and a reply the engine read as `other`.
    const db = database.db;
    const workspaceId = client.session!.workspace.id;
    const deliveryId = randomUUID();
    const sentAt = new Date(Date.now() - 3600_000);
    await db.insertInto('email_deliveries').values({
      id: deliveryId, workspace_id: workspaceId, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
      status: 'DELIVERED', message_id: `<${randomUUID()}@leadrun.test>`, attempts: 1, queued_at: sentAt, delivered_at: sentAt, error: null, response: '250 ok',
    }).execute();
    await db.insertInto('email_replies').values({
      id: randomUUID(), workspace_id: workspaceId, delivery_id: deliveryId, run_id: run.id, message_id: `${randomUUID()}@acme.example`,
      from_address: 'Daniel Ng <daniel@acme.example>', subject: 'Re: pilot', snippet: 'Sounds good, send me the pilot plan.',
      received_at: new Date(Date.now() - 1800_000), found_at: new Date(), classification: 'other',
    }).execute();

    await page.goto(`${server.url}/runs/${run.id}`);
    const panel = page.getByRole('region', { name: 'Reply' });
    await panel.locator('.badge', { hasText: 'Other' }).waitFor();
    await panel.getByLabel('Mark as…').selectOption('interested');
    await page.getByText('Marked as interested.').waitFor();
    await panel.getByText('marked by a person').waitFor();
    await panel.locator('.badge', { hasText: 'Interested' }).waitFor();
    const stored = await db.selectFrom('email_replies').select(['classification', 'classified_by']).where('run_id', '=', run.id).executeTakeFirstOrThrow();
    assert.deepEqual(stored, { classification: 'interested', classified_by: 'person' });
    assert.equal((await client.ok('GET', `/api/v1/leads/${lead.id}`)).data.status, 'QUALIFIED');

    await page.goto(`${server.url}/runs/review`);
    const toAnswer = page.getByRole('region', { name: 'Replies to answer' });
    await toAnswer.getByText('Sounds good, send me the pilot plan.').waitFor();

    // Interested: its response is drafted by the scheduler at once, and reviewed beside the reply. A person edits it.
    const decide = toAnswer.getByRole('group', { name: 'Decide on the response' });
    await decide.waitFor({ timeout: 30_000 });
    assert.match(await toAnswer.locator('.response-draft .email-body').innerText(), /^Hi Daniel,/);
    assert.equal(await toAnswer.getByRole('button', { name: 'Draft a response' }).count(), 0, 'drafted already');
    await decide.getByRole('button', { name: 'Edit' }).click();
    await toAnswer.getByRole('textbox', { name: 'Response', exact: true }).fill('Hi Daniel,\n\nHere is the pilot plan: three weeks, two teams, one review call at the end.\n\nBest regards');
    await toAnswer.getByRole('button', { name: 'Save' }).click();
    await toAnswer.locator('.response-draft .email-body', { hasText: 'three weeks, two teams' }).waitFor();
    const response = (await client.ok('GET', `/api/v1/runs/${run.id}/touches`)).data.find((touch: any) => touch.kind === 'response');
    assert.deepEqual([response.status, response.draft.version, response.replyId !== null], ['AWAITING_APPROVAL', 2, true]);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/outcomes`);
    await page.getByRole('heading', { name: 'Outcomes' }).waitFor();
    const weekly = page.getByRole('img', { name: /Weekly reply rate; the week of \d{4}-\d{2}-\d{2}: 100 %/ });
    await weekly.waitFor();
    assert.equal(await page.locator('.outcomes-chart canvas').count(), 2, 'two charts drawn');
    await page.getByRole('img', { name: /Funnel: Sent 1, Replied 1, Interested 1, Won 0/ }).waitFor();
    const bySender = page.getByRole('region', { name: 'By sender' });
    await bySender.getByRole('rowheader', { name: 'No sender' }).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 390 px`);
    const [download] = await Promise.all([page.waitForEvent('download'), bySender.getByRole('button', { name: 'Download CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^outcomes-by-sender-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.deepEqual(consoleErrors, []);
  });
});

// A reply in the web UI: once the reply check has recorded a reply to a run's delivered e-mail, the run page says who
// replied, when and what (without the quoted e-mail), and the lead's page shows it as the lead's last reply with a
// link to the run. leadrun serves from a PostgreSQL database that the test also writes to, as the reply check would.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { createMigratedPostgresDatabase } from '../helpers.ts';
import { browserUnavailable, SessionClient, startLeadrun, TRANSCRIPT, waitFor, watchConsole, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

describe('a reply on the run and the lead', { skip: browserUnavailable() ?? false }, () => {
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

  it('shows who replied and what on the run page, and as the last reply on the lead page', async () => {
    const client = await SessionClient.setUp(context, server.url);
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Daniel Ng', email: 'daniel@acme.example', companyName: 'Acme' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { transcript: TRANSCRIPT });
    const started = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    const run = await waitFor(async () => {
      const current = (await client.ok('GET', `/api/v1/runs/${started.id}`)).data;
      return current.status === 'AWAITING_APPROVAL' ? current : null;
    }, 'the run awaits approval', 30_000);

    await page.goto(`${server.url}/runs/${run.id}`);
    await page.getByRole('heading', { name: 'Follow-up for Daniel Ng' }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Reply' }).count(), 0, 'no reply panel before a reply');

    // What the reply check writes when it finds a reply to the delivered e-mail.
    const db = database.db;
    const workspaceId = client.session!.workspace.id;
    const deliveryId = randomUUID();
    const now = new Date();
    const receivedAt = new Date(now.getTime() - 2 * 3600_000);
    await db.insertInto('email_deliveries').values({
      id: deliveryId, workspace_id: workspaceId, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
      status: 'DELIVERED', message_id: `<${randomUUID()}@leadrun.test>`, attempts: 1, queued_at: now, delivered_at: now, error: null, response: '250 ok',
    }).execute();
    await db.insertInto('email_replies').values({
      id: randomUUID(), workspace_id: workspaceId, delivery_id: deliveryId, run_id: run.id, message_id: `${randomUUID()}@acme.example`,
      from_address: 'Daniel Ng <daniel@acme.example>', subject: 'Re: pilot', snippet: 'Thanks, the outline looks right. Can we start on 1 December?',
      received_at: receivedAt, found_at: now,
    }).execute();
    await db.updateTable('leads').set({ last_reply_at: receivedAt }).where('id', '=', lead.id).execute();

    await page.reload();
    const panel = page.getByRole('region', { name: 'Reply' });
    await panel.waitFor();
    const text = (await panel.innerText()).replace(/\s+/g, ' ');
    assert.match(text, /Daniel Ng replied 2 hours ago:/);
    assert.match(text, /Thanks, the outline looks right\. Can we start on 1 December\?/);
    assert.equal(await panel.getByText('Daniel Ng').getAttribute('title'), 'daniel@acme.example');

    await page.goto(`${server.url}/leads/${lead.id}`);
    const last = page.getByRole('region', { name: 'Last reply' });
    await last.waitFor();
    assert.match((await last.innerText()).replace(/\s+/g, ' '), /Daniel Ng replied 2 hours ago: Thanks, the outline looks right/);
    await page.getByRole('link', { name: /Awaiting approval.*Replied/ }).waitFor();
    await last.getByRole('link', { name: 'See the run' }).click();
    await page.waitForURL(`${server.url}/runs/${run.id}`);
    await page.getByRole('region', { name: 'Reply' }).waitFor();
    assert.deepEqual(consoleErrors, []);
  });
});

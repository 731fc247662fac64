// The integrator's flow (issue 13's "Done means"), end to end against a real `leadrun serve` with its worker, on
// PostgreSQL and on the embedded database: in the browser, set up the workspace, create an API key and add a webhook
// endpoint pointing at a receiver on loopback; then, as a script using only @leadrun/client, create a lead, a call
// and a run, receive `run.awaiting_approval` (verified with the client's webhooks.verify and with the standardwebhooks
// package), approve the run and receive `run.completed`. Then the receiver fails: a test event sent from the UI is
// tried three times, which the delivery log shows; the receiver is fixed and the delivery replayed from the UI.
//
// WEBHOOK_RETRY_SECONDS=1,1 retries a failed delivery after 1 s and again 1 s later, instead of 5 s and 1 min.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createClient } from '../../packages/client/src/index.ts';
import { BACKENDS, createMigratedPostgresDatabase } from '../helpers.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { browserUnavailable, openPage, setUpInBrowser, startLeadrun, TRANSCRIPT, waitFor, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const RETRIES = 2;

/** Verifies as a receiver written without our client would: with the standardwebhooks package. */
function verifyWithStandardWebhooks(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

for (const kind of BACKENDS) {
  describe(`the integrator's flow (${kind})`, { skip: browserUnavailable() ?? false }, () => {
    let database: { url: string; drop(): Promise<void> } | null = null;
    let receiver: WebhookReceiver;
    let server: Leadrun;
    let browser: TestBrowser;
    let page: Page;
    let consoleErrors: string[];

    before(async () => {
      if (kind === 'postgres') database = await createMigratedPostgresDatabase();
      receiver = await startWebhookReceiver();
      server = await startLeadrun({
        ALLOW_PRIVATE_HOSTS: 'true',
        WEBHOOK_RETRY_SECONDS: Array(RETRIES).fill('1').join(','),
        ...(database ? { DATABASE_URL: database.url } : {}),
      });
      browser = await launchBrowser();
      ({ page, consoleErrors } = await openPage(browser));
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await receiver?.close();
      await database?.drop();
    });

    it('key and endpoint in the UI, a run from a script, its events verified, approval, retries and a replay', async () => {
      // The workspace, set up in the browser.
      await setUpInBrowser(page, server.url);

      // Settings / API keys: a key for the script.
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.waitForURL(`${server.url}/settings/keys`);
      await page.getByRole('button', { name: 'Create key', exact: true }).click();
      const keyForm = page.getByRole('dialog', { name: 'Create an API key' });
      await keyForm.getByLabel('Name').fill('CRM sync');
      await keyForm.getByRole('checkbox', { name: /leads:write/ }).check();
      await keyForm.getByRole('checkbox', { name: /runs:write/ }).check();
      await keyForm.getByRole('button', { name: 'Create key' }).click();
      const keyReveal = page.getByRole('dialog', { name: 'Your new API key' });
      const apiKey = await keyReveal.getByRole('textbox', { name: 'CRM sync' }).inputValue();
      assert.match(apiKey, /^sk_/);
      await page.keyboard.press('Escape');
      await keyReveal.waitFor({ state: 'detached' });

      // Settings / Webhooks: the receiver, for the two events the script waits for; its secret as the UI shows it.
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.waitForURL(`${server.url}/settings/webhooks`);
      await page.getByRole('button', { name: 'Add endpoint', exact: true }).click();
      const endpointForm = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
      await endpointForm.getByLabel('URL').fill(receiver.url);
      await endpointForm.getByLabel('Description').fill('CRM sync');
      await endpointForm.getByRole('checkbox', { name: 'run.awaiting_approval' }).check();
      await endpointForm.getByRole('checkbox', { name: 'run.completed' }).check();
      await endpointForm.getByRole('button', { name: 'Add endpoint' }).click();
      const secretReveal = page.getByRole('dialog', { name: 'Your endpoint\'s signing secret' });
      const secret = await secretReveal.getByRole('textbox').inputValue();
      assert.match(secret, /^whsec_/);
      await secretReveal.getByRole('button', { name: 'I have stored it' }).click();
      await secretReveal.waitFor({ state: 'detached' });

      // The script: @leadrun/client only.
      const client = createClient({ baseUrl: server.url, apiKey });
      const lead = await client.leads.create({ name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' });
      const call = await client.calls.create(lead.id, { transcript: TRANSCRIPT, title: 'Discovery call' });
      const run = await client.runs.create({ leadId: lead.id, callId: call.id });
      assert.equal(run.status, 'QUEUED');

      const awaiting = await receiver.next((r) => r.json?.type === 'run.awaiting_approval' && r.json.data?.id === run.id, 30_000);
      const event = await client.webhooks.verify(awaiting.body, awaiting.headers as Record<string, string>, secret);
      if (event.type !== 'run.awaiting_approval') assert.fail(event.type);
      assert.equal(event.data.status, 'AWAITING_APPROVAL');
      assert.ok(event.data.emailDraft?.subject, 'the draft to approve is in the event');
      assert.deepEqual(verifyWithStandardWebhooks(secret, awaiting), JSON.parse(awaiting.body));

      const approved = await client.runs.approve(run.id);
      assert.equal(approved?.status, 'COMPLETED');
      const completed = await receiver.next((r) => r.json?.type === 'run.completed' && r.json.data?.id === run.id);
      assert.equal((await client.webhooks.verify(completed.body, completed.headers as Record<string, string>, secret)).type, 'run.completed');
      verifyWithStandardWebhooks(secret, completed);
      assert.ok(receiver.received.indexOf(awaiting) < receiver.received.indexOf(completed), 'in the order they happened');

      // The receiver breaks; a test event from the UI is tried 1 + RETRIES times, and the delivery log says so.
      receiver.answer = () => ({ status: 500 });
      const card = page.locator('.webhook-endpoint');
      await card.getByRole('button', { name: 'Send test event' }).click();
      const testRow = card.locator('tr', { hasText: 'webhook.test' });
      await waitFor(async () => {
        await card.getByRole('button', { name: 'Refresh log' }).click();
        return (await testRow.getByText('FAILED', { exact: true }).count()) > 0;
      }, 'the test event to have failed for good', 20_000);
      const failed = (await testRow.innerText()).replace(/\s+/g, ' ');
      assert.match(failed, new RegExp(`FAILED ${1 + RETRIES} attempts`), failed);
      assert.match(failed, /The endpoint answered 500/, failed);
      const attempts = receiver.received.filter((r) => r.json?.type === 'webhook.test');
      assert.equal(attempts.length, 1 + RETRIES);
      assert.equal(new Set(attempts.map((r) => r.headers['webhook-id'])).size, 1, 'the retries carry the one message id');
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      await card.getByText(/Failing since/).waitFor();

      // Fixed; the failed delivery replayed from the log: the receiver gets the same message, signed afresh.
      receiver.answer = () => ({ status: 204 });
      const heard = receiver.received.length;
      await card.getByRole('button', { name: 'Replay webhook.test' }).click();
      const replayed = await receiver.next((r) => receiver.received.indexOf(r) >= heard && r.json?.type === 'webhook.test');
      assert.equal(replayed.headers['webhook-id'], attempts[0]!.headers['webhook-id']);
      assert.equal((await client.webhooks.verify(replayed.body, replayed.headers as Record<string, string>, secret)).type, 'webhook.test');
      await waitFor(async () => {
        await card.getByRole('button', { name: 'Refresh log' }).click();
        return (await testRow.getByText('SUCCEEDED', { exact: true }).count()) > 0;
      }, 'the replay to show as SUCCEEDED');
      assert.equal(await testRow.getByText('FAILED', { exact: true }).count(), 1, 'the failed delivery stays in the log');
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      await card.getByText(/Failing since/).waitFor({ state: 'detached' });
      assert.deepEqual(consoleErrors, []);
    });
  });
}

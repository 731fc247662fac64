// Settings / Webhooks in the web UI: an admin adds an endpoint (the signing secret is shown once, with a copy
// button), sends a test event that a real receiver on loopback gets, signed with that secret, and sees the delivery
// in the endpoint's log.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { browserUnavailable, SessionClient, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('webhooks in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  let receiver: WebhookReceiver;

  let ui: WebUi;
  before(async () => {
    receiver = await startWebhookReceiver();
    ui = await openWebUi({ env: { ALLOW_PRIVATE_HOSTS: 'true' }, context: { viewport: { width: 1280, height: 860 } }, signedIn: false });
    ({ server, page, consoleErrors, context } = ui);
    await ui.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await SessionClient.setUp(context, server.url);
  });
  after(async () => {
    await ui?.close();
    await receiver?.close();
  });

  it('add an endpoint → the secret once → send a test event → it arrives signed → it is in the log', async () => {
    await page.goto(`${server.url}/leads`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`${server.url}/settings/webhooks`);
    await page.getByText('No webhook endpoints yet').waitFor();

    await page.getByRole('button', { name: 'Add endpoint', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.waitFor();
    // A URL that is not http or https is refused on its field.
    await dialog.getByLabel('URL').fill('ftp://example.com/hook');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await dialog.getByText(/starting with http:\/\/ or https:\/\//).waitFor();
    assert.equal(await dialog.getByLabel('URL').getAttribute('aria-invalid'), 'true');
    await dialog.getByLabel('URL').fill(receiver.url);
    await dialog.getByLabel('Description').fill('Our CRM');
    await dialog.getByRole('checkbox', { name: 'run.completed' }).check();
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();

    const reveal = page.getByRole('dialog', { name: 'Your endpoint\'s signing secret' });
    await reveal.waitFor();
    await reveal.getByText('This is the only time it is shown').waitFor();
    const secret = await reveal.getByRole('textbox').inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await reveal.getByRole('button', { name: 'Copy' }).click();
    await reveal.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await reveal.waitFor({ state: 'detached' });
    assert.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');

    const card = page.locator('.webhook-endpoint');
    await card.getByText('Enabled').waitFor();
    await card.getByText('run.completed').waitFor();
    await card.getByRole('button', { name: 'Send test event' }).click();
    const got = await receiver.next((r) => r.json?.type === 'webhook.test');
    const [id, timestamp] = [String(got.headers['webhook-id']), String(got.headers['webhook-timestamp'])];
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${id}.${timestamp}.${got.body}`).digest('base64');
    assert.equal(got.headers['webhook-signature'], `v1,${expected}`);

    const row = card.locator('tr', { hasText: 'webhook.test' });
    await waitFor(async () => {
      await card.getByRole('button', { name: 'Refresh log' }).click();
      return (await row.getByText('SUCCEEDED').count()) > 0;
    }, 'the delivery shows as SUCCEEDED');
    await row.getByText('204').waitFor();
    assert.deepEqual(consoleErrors, []);
  });
});

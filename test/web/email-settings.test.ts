// Settings / E-mail in the browser: an admin sets up SMTP and IMAP, saves, and after a reload sees the passwords as
// saved (never their text), dropped when the server they were saved for changes; the form names a bad field before
// sending; a member is shown who to ask instead. And in Your profile, a person's sender name and signature, with the
// preview of how their e-mails end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { browserUnavailable, SessionClient, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type TestBrowser, type WebUi } from './browser.ts';

const SMTP_PASSWORD = 'smtp app password 5e1f';
const IMAP_PASSWORD = 'imap app password 93ca';

describe('Settings / E-mail in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let admin: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ signedIn: false });
    ({ server, page, consoleErrors, browser, context } = ui);
    admin = await SessionClient.setUp(context, server.url);
    await admin.ok('POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: 'a long member password' });
  });
  after(async () => {
    await ui?.close();
  });

  it('lets an admin fill SMTP and IMAP, refuses a host with a scheme, saves, and shows the passwords as saved after a reload', async () => {
    await page.goto(`${server.url}/leads`);
    await page.getByRole('link', { name: 'E-mail' }).click();
    await page.waitForURL(`${server.url}/settings/email`);
    await page.getByRole('heading', { name: 'E-mail', level: 1 }).waitFor();
    const smtp = page.getByRole('region', { name: 'Sending (SMTP)' });
    const imap = page.getByRole('region', { name: 'Mailbox (IMAP)' });
    await smtp.getByText('No SMTP server').waitFor();

    await page.getByLabel('Address').fill('sales@acme.test');
    await page.getByLabel('Name').fill('Acme Sales');
    await page.getByRole('radio', { name: /Save to mailbox/ }).check();

    await smtp.getByRole('button', { name: 'Set up SMTP' }).click();
    assert.equal(await smtp.getByLabel('Port').inputValue(), '587', 'STARTTLS is 587');
    await smtp.getByLabel('Security').selectOption('tls');
    assert.equal(await smtp.getByLabel('Port').inputValue(), '465', 'the port follows the security');
    await smtp.getByLabel('SMTP server').fill('smtp://mail.acme.test');
    await smtp.getByLabel('User').fill('sales@acme.test');
    await smtp.getByLabel('Password').fill(SMTP_PASSWORD);

    await imap.getByRole('button', { name: 'Set up IMAP' }).click();
    assert.equal(await imap.getByLabel('Port').inputValue(), '993');
    await imap.getByLabel('IMAP server').fill('imap.mailhost.test');
    await imap.getByLabel('User').fill('sales@acme.test');

    // Checked before sending: the host with its scheme and the missing IMAP password, focus on the first.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await smtp.getByText('Enter the host name alone, without smtp://.').waitFor();
    await imap.getByText('Enter the mailbox\'s password.').waitFor();
    assert.equal(await smtp.getByLabel('SMTP server').evaluate((el) => el === (globalThis as any).document.activeElement), true, 'focus on the first invalid field');
    assert.equal((await admin.ok('GET', '/ui/api/settings/email')).smtp, null, 'nothing was sent');

    await smtp.getByLabel('SMTP server').fill('smtp.mailhost.test');
    await imap.getByLabel('Password').fill(IMAP_PASSWORD);
    await imap.getByLabel('Drafts folder').fill('Entwürfe');
    // A check of a server that cannot be reached says so, and does not save anything.
    await smtp.getByRole('button', { name: 'Check connection' }).click();
    await smtp.getByText('The connection failed').waitFor();
    // The server's own refusal shows under its field too: a password without a user.
    await smtp.getByLabel('User').fill('');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await smtp.getByText('Is required with a password.').waitFor();
    // After the server's answer the form moves focus in an effect, once the message has rendered: awaited, not read
    // at the instant the message appears.
    await waitFor(() => smtp.getByLabel('User').evaluate((el) => el === (globalThis as any).document.activeElement), 'focus on the field the server named');
    await smtp.getByLabel('User').fill('sales@acme.test');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The e-mail settings were saved.').waitFor();

    const saved = await admin.ok('GET', '/ui/api/settings/email');
    assert.deepEqual(saved.smtp, { host: 'smtp.mailhost.test', port: 465, security: 'tls', user: 'sales@acme.test', passwordSet: true });
    assert.deepEqual(saved.imap, { host: 'imap.mailhost.test', port: 993, security: 'tls', user: 'sales@acme.test', passwordSet: true, draftsFolder: 'Entwürfe' });
    assert.equal(saved.defaultDeliver, 'mailbox');
    assert.equal(saved.fromName, 'Acme Sales');

    await page.reload();
    await smtp.getByLabel('SMTP server').waitFor();
    assert.equal(await smtp.getByLabel('SMTP server').inputValue(), 'smtp.mailhost.test');
    for (const section of [smtp, imap]) {
      await section.getByText('saved', { exact: false }).first().waitFor();
      await section.getByRole('button', { name: /Change the saved (SMTP|IMAP) password/ }).waitFor();
    }
    const html = await page.content();
    assert.ok(!html.includes(SMTP_PASSWORD) && !html.includes(IMAP_PASSWORD), 'no password is on the page');
    assert.equal(await page.getByRole('radio', { name: /Save to mailbox/ }).isChecked(), true);

    // Changing one password leaves the other as it was; "Keep the saved one" goes back.
    await smtp.getByRole('button', { name: /Change the saved SMTP password/ }).click();
    await smtp.getByRole('button', { name: 'Keep the saved one' }).click();
    await smtp.getByRole('button', { name: /Change the saved SMTP password/ }).click();
    await smtp.getByLabel('Password').fill('a new smtp password');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The e-mail settings were saved.').last().waitFor();
    await smtp.getByRole('button', { name: /Change the saved SMTP password/ }).waitFor();
    const audit = (await admin.ok('GET', '/ui/api/audit?action=mail_settings.updated&limit=1')).data[0];
    assert.deepEqual([audit.details.smtpPasswordChanged, audit.details.imapPasswordChanged], [true, false]);

    // Changing the server's port says the saved password is dropped; IMAP, which always signs in, asks for it again.
    await smtp.getByText('Changing the server, security, port or user drops it.').waitFor();
    await smtp.getByLabel('Port').fill('2465');
    await smtp.getByText(/The saved password is dropped: it goes only to the server, port, security and user/).waitFor();
    await smtp.getByLabel('Port').fill('465');
    await smtp.getByRole('button', { name: /Change the saved SMTP password/ }).waitFor();
    await imap.getByLabel('Security').selectOption('starttls');
    await imap.getByText(/The saved password is dropped/).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await imap.getByText(/Enter the password again: it goes only to the server, port, security and user/).waitFor();
    assert.equal((await admin.ok('GET', '/ui/api/settings/email')).imap.security, 'tls', 'nothing was sent');
    await imap.getByLabel('Password').fill(IMAP_PASSWORD);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await waitFor(async () => (await admin.ok('GET', '/ui/api/settings/email')).imap.security === 'starttls', 'IMAP saved');
    await imap.getByRole('button', { name: /Change the saved IMAP password/ }).waitFor();

    // Removing SMTP, saved, says what applies instead.
    await smtp.getByRole('button', { name: 'Remove SMTP' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await smtp.getByText('No SMTP server').waitFor();
    // The section says so as soon as Remove is pressed: the save is waited for on the server.
    await waitFor(async () => (await admin.ok('GET', '/ui/api/settings/email')).smtp === null, 'SMTP removed on the server');
    assert.deepEqual(consoleErrors, []);
  });

  it('shows a member who to ask, never the settings', async () => {
    const theirs = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const member = await SessionClient.signIn(theirs, server.url, 'mo@acme.test', 'a long member password');
      assert.equal((await member.call('GET', '/ui/api/settings/email')).status, 403);
      const memberPage = await theirs.newPage();
      await memberPage.goto(`${server.url}/settings/email`);
      await memberPage.getByRole('heading', { name: 'Admins only' }).waitFor();
      await memberPage.getByText(/Only workspace admins can see and manage the e-mail settings/).waitFor();
      assert.equal(await memberPage.getByLabel('SMTP server').count(), 0);
      assert.ok(!(await memberPage.content()).includes('imap.mailhost.test'));
    } finally {
      await theirs.close();
    }
  });

  it('saves a sender name and signature in Your profile, previewed as the end of an e-mail', async () => {
    await page.goto(`${server.url}/settings/profile`);
    const form = page.getByRole('form', { name: 'Your sender name and signature' });
    await form.getByLabel('Sender name').fill('Maya at Acme');
    await form.getByLabel('Signature').fill('Maya Brooks\nHead of Sales, Acme   \n+1 555 0100\n\n');
    const preview = page.getByTestId('signature-preview');
    // The one sign-off (src/agent/sign-off.ts): the signature opens with the name, so the name is not written above it.
    assert.match(await preview.innerText(), /Best regards,\n-- \nMaya Brooks\nHead of Sales, Acme\n\+1 555 0100$/);
    await form.getByText('3 / 20 lines', { exact: false }).waitFor();
    await form.getByRole('button', { name: 'Save sender name and signature' }).click();
    await page.getByText('Your sender name and signature were saved.').waitFor();
    const profile = await admin.ok('GET', '/ui/api/profile');
    assert.equal(profile.senderName, 'Maya at Acme');
    assert.equal(profile.signature, 'Maya Brooks\nHead of Sales, Acme\n+1 555 0100');

    await form.getByLabel('Signature').fill(Array.from({ length: 21 }, (_, i) => `line ${i + 1}`).join('\n'));
    await form.getByRole('button', { name: 'Save sender name and signature' }).click();
    await form.getByText('Use at most 20 lines.').waitFor();

    await page.reload();
    await form.getByLabel('Signature').waitFor();
    assert.equal(await form.getByLabel('Signature').inputValue(), 'Maya Brooks\nHead of Sales, Acme\n+1 555 0100');
    assert.equal(await form.getByLabel('Sender name').inputValue(), 'Maya at Acme');
    assert.deepEqual(consoleErrors, []);
  });
});

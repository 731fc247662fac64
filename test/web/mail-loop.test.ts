// The whole e-mail loop as a new user tries it (issue 11's "Done means"), in the browser, against a real `leadrun
// serve` on the embedded database, a real SMTP server with AUTH on loopback and a private Dovecot: set up the
// workspace, Settings / E-mail (SMTP checked, saved, a test e-mail; IMAP checked, saved), a signature in Your
// profile; a lead, a call and a run; the draft edited in place, approved and sent; the message as the SMTP server got
// it; the lead CONTACTED; a reply put into the mailbox and shown on the run, the lead and the leads table. Then a
// second run saved to the mailbox: a \Draft in Dovecot's Drafts folder, the lead left where it was.
//
// MAIL_REPLY_CHECK_SECONDS=1 makes the reply check read the inbox every second instead of every minute.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { ADMIN, browserUnavailable, openPage, SessionClient, setUpInBrowser, startLeadrun, TRANSCRIPT, waitFor, type Leadrun } from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const SMTP_USER = 'maya@acme.test';
const SMTP_PASSWORD = 'smtp app password 71b0';
const SIGNATURE = 'Maya Brooks\nHead of Sales, Acme\n+1 555 0100';
const EDITED_SUBJECT = 'A two-week pilot for your dispatchers';
const ADDED_SENTENCE = 'I will send the pilot outline on Tuesday, with two references from carriers your size.';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

/** The leads table's row of one lead, read as a person reads it: column header → cell text. */
async function leadRow(page: Page, name: string): Promise<Record<string, string>> {
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
  await row.waitFor();
  const headers = (await page.getByRole('columnheader').allTextContents()).map((h) => h.trim());
  const cells = (await row.getByRole('cell').allInnerTexts()).map((c) => c.trim());
  return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? '']));
}

async function fillServer(section: Locator, name: 'SMTP' | 'IMAP', server: { host: string; port: number; user: string; password: string }) {
  await section.getByRole('button', { name: `Set up ${name}` }).click();
  // The security first: the port follows it until one is typed.
  await section.getByLabel('Security').selectOption('none');
  await section.getByLabel(`${name} server`).fill(server.host);
  await section.getByLabel('Port').fill(String(server.port));
  await section.getByLabel('User').fill(server.user);
  await section.getByLabel('Password').fill(server.password);
}

/** "Check connection", and what it answered: Connected, or the failure's words in the assertion. */
async function checkConnection(section: Locator) {
  await section.getByRole('button', { name: 'Check connection' }).click();
  const answered = section.getByText('Connected', { exact: true }).or(section.getByText('The connection failed'));
  await answered.first().waitFor();
  assert.equal(await section.getByText('The connection failed').count(), 0, (await section.innerText()).replace(/\s+/g, ' '));
}

describe('the e-mail loop, as a new user tries it', { skip: browserUnavailable() ?? false }, () => {
  let smtp: TestSmtpServer;
  let dovecot: Dovecot;
  let server: Leadrun;
  let browser: TestBrowser;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  before(async () => {
    smtp = await startSmtpServer({ users: { [SMTP_USER]: SMTP_PASSWORD } });
    dovecot = await startDovecot();
    server = await startLeadrun({ ALLOW_PRIVATE_HOSTS: 'true', MAIL_REPLY_CHECK_SECONDS: '1' });
    browser = await launchBrowser();
    ({ page, consoleErrors } = await openPage(browser));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await dovecot?.stop();
    await smtp?.close();
  });

  it('sets up e-mail, edits a draft, sends it, and sees the reply on the run, the lead and the leads table', async () => {
    // First run: the workspace.
    await setUpInBrowser(page, server.url);
    // Reads only (GET needs no CSRF token), with the page's own session cookie.
    client = new SessionClient(page.context(), server.url);

    // Settings / E-mail: SMTP, checked, saved, and a test e-mail that arrives.
    await page.getByRole('link', { name: 'E-mail' }).click();
    await page.waitForURL(`${server.url}/settings/email`);
    const smtpSection = page.getByRole('region', { name: 'Sending (SMTP)' });
    const imapSection = page.getByRole('region', { name: 'Mailbox (IMAP)' });
    await page.getByLabel('Address').fill('sales@acme.test');
    await page.getByLabel('Name').fill('Acme Sales');
    await fillServer(smtpSection, 'SMTP', { host: smtp.host, port: smtp.port, user: SMTP_USER, password: SMTP_PASSWORD });
    await checkConnection(smtpSection);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The e-mail settings were saved.').waitFor();
    await smtpSection.getByRole('button', { name: 'Send test e-mail' }).click();
    await smtpSection.getByText(`The test e-mail was accepted for ${ADMIN.email}. Check the inbox.`).waitFor();
    const [test] = await smtp.waitFor(1);
    assert.deepEqual(test!.envelope.to, [ADMIN.email]);
    assert.equal(test!.user, SMTP_USER, 'signed in with AUTH');

    // IMAP: the private Dovecot, checked and saved.
    await fillServer(imapSection, 'IMAP', { host: dovecot.host, port: dovecot.port, user: dovecot.user, password: dovecot.password });
    await checkConnection(imapSection);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('The e-mail settings were saved.').last().waitFor();
    await imapSection.getByRole('button', { name: /Change the saved IMAP password/ }).waitFor();

    // Your profile: the signature, previewed as the end of an e-mail.
    await page.getByRole('link', { name: 'Your profile' }).first().click();
    await page.waitForURL(`${server.url}/settings/profile`);
    const profile = page.getByRole('form', { name: 'Your sender name and signature' });
    await profile.getByLabel('Signature').fill(SIGNATURE);
    assert.match(await page.getByTestId('signature-preview').innerText(), new RegExp(`${escape(SIGNATURE)}$`));
    await profile.getByRole('button', { name: 'Save sender name and signature' }).click();
    await page.getByText('Your sender name and signature were saved.').waitFor();

    // A lead, a call, a run.
    await page.getByRole('link', { name: 'Leads' }).first().click();
    await page.getByRole('button', { name: 'New lead' }).click();
    const leadForm = page.getByRole('dialog', { name: 'New lead' });
    await leadForm.getByLabel('Name').fill('Priya Raman');
    await leadForm.getByLabel('E-mail').fill('priya@northwind.example');
    await leadForm.getByLabel('Company (optional)', { exact: true }).fill('Northwind Freight');
    await leadForm.getByRole('button', { name: 'Create lead' }).click();
    await page.waitForURL(/\/leads\/[0-9a-f-]{36}$/);
    const leadUrl = page.url();
    await page.getByRole('button', { name: 'Add call' }).first().click();
    const callForm = page.getByRole('dialog', { name: 'Add a call' });
    await callForm.getByLabel('Title').fill('Discovery call');
    await callForm.getByLabel('Transcript').fill(TRANSCRIPT);
    await callForm.getByRole('button', { name: 'Add call' }).click();
    await callForm.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Draft a follow-up from Discovery call' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runUrl = page.url();

    // The draft, edited in place: a new subject and one more sentence.
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Edit' }).click({ timeout: 30_000 });
    const editor = draft.getByRole('form', { name: 'Edit the draft' });
    await editor.getByLabel('Subject').fill(EDITED_SUBJECT);
    const generated = await editor.getByLabel('Body').inputValue();
    const greetingEnd = generated.indexOf('\n\n');
    assert.ok(greetingEnd > 0, `a greeting, then the text: ${generated}`);
    const edited = `${generated.slice(0, greetingEnd)}\n\n${ADDED_SENTENCE}${generated.slice(greetingEnd)}`;
    await editor.getByLabel('Body').fill(edited);
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved as version 2.').waitFor();
    await draft.getByText(EDITED_SUBJECT).waitFor();
    await draft.getByText(ADDED_SENTENCE).waitFor();

    // Approve and send: followed live to Sent.
    await draft.getByRole('button', { name: 'Approve and send' }).click();
    const delivery = page.getByRole('region', { name: 'Delivery' });
    await delivery.getByText(/^Sent at \d{1,2}:\d{2}/).waitFor({ timeout: 30_000 });
    await draft.getByText('Sent', { exact: true }).waitFor();
    // The header says so beside the run's own status (Approved).
    await page.locator('.page-header').getByText('E-mail sent', { exact: true }).waitFor();
    const shownId = (await delivery.locator('code').innerText()).trim();
    assert.match(shownId, /^<[^<>\s]+@[^<>\s]+>$/, 'the Message-ID is shown');

    // What the SMTP server got: the edit, the signature once, the Message-ID on the page.
    const mails = await smtp.waitFor(2);
    const mail = mails[1]!;
    assert.equal(mail.user, SMTP_USER);
    assert.deepEqual(mail.envelope.to, ['priya@northwind.example']);
    assert.equal(mail.parsed.subject, EDITED_SUBJECT);
    assert.equal(mail.parsed.messageId, shownId);
    const text = mail.parsed.text ?? '';
    assert.ok(text.includes(ADDED_SENTENCE), text);
    assert.equal(count(text, SIGNATURE), 1, `the signature once:\n${text}`);
    assert.equal(mail.parsed.from?.value[0]?.address, 'sales@acme.test');

    // The leads table: CONTACTED, with a last contact and no reply yet.
    await page.goto(`${server.url}/leads`);
    let row = await leadRow(page, 'Priya Raman');
    assert.equal(row['Status'], 'Contacted', JSON.stringify(row));
    assert.match(row['Last contact']!, /just now|seconds? ago|minutes? ago/);
    assert.equal(row['Last reply'], 'None');

    // Priya answers; her reply lands in the sender's inbox.
    const replyText = 'Thanks Maya, the pilot sounds right. Can we start on 1 December?';
    await page.goto(runUrl);
    await delivery.getByText(/^Sent at /).waitFor();
    await dovecot.deliver([
      'From: Priya Raman <priya@northwind.example>',
      `To: ${SMTP_USER}`,
      `Subject: Re: ${EDITED_SUBJECT}`,
      `Message-ID: <reply-1@northwind.example>`,
      `In-Reply-To: ${shownId}`,
      `References: ${shownId}`,
      `Date: ${new Date().toUTCString()}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      replyText,
      '',
      `On ${new Date().toDateString()}, Maya Brooks <sales@acme.test> wrote:`,
      `> ${ADDED_SENTENCE}`,
      '',
    ].join('\r\n'));

    // The run page shows the reply without a reload: while a delivered e-mail awaits its reply, the page reads the run
    // again every few seconds (the run's event stream ends once the run is at rest, before any reply can come).
    const reply = page.getByRole('region', { name: 'Reply' });
    await reply.waitFor({ timeout: 30_000 });
    const replyShown = (await reply.innerText()).replace(/\s+/g, ' ');
    assert.match(replyShown, /Priya Raman replied .* ago:|Priya Raman replied just now/);
    assert.ok(replyShown.includes(replyText), replyShown);
    assert.ok(!replyShown.includes(ADDED_SENTENCE), 'the quoted e-mail is left out');

    // The lead page and the leads table.
    await page.goto(leadUrl);
    const last = page.getByRole('region', { name: 'Last reply' });
    await last.waitFor();
    assert.ok((await last.innerText()).replace(/\s+/g, ' ').includes(replyText));
    await page.goto(`${server.url}/leads`);
    row = await leadRow(page, 'Priya Raman');
    assert.notEqual(row['Last reply'], 'None', JSON.stringify(row));
    assert.deepEqual(consoleErrors, []);
  });

  it('saves a second run\'s e-mail to the mailbox: a \\Draft in Drafts, the lead left where it was', async () => {
    await page.goto(`${server.url}/leads`);
    await page.getByRole('button', { name: 'New lead' }).click();
    const leadForm = page.getByRole('dialog', { name: 'New lead' });
    await leadForm.getByLabel('Name').fill('Tom Okafor');
    await leadForm.getByLabel('E-mail').fill('tom@harbor.example');
    await leadForm.getByRole('button', { name: 'Create lead' }).click();
    await page.waitForURL(/\/leads\/[0-9a-f-]{36}$/);
    await page.getByRole('button', { name: 'Add call' }).first().click();
    const callForm = page.getByRole('dialog', { name: 'Add a call' });
    await callForm.getByLabel('Title').fill('Intro call');
    await callForm.getByLabel('Transcript').fill(TRANSCRIPT);
    await callForm.getByRole('button', { name: 'Add call' }).click();
    await callForm.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Draft a follow-up from Intro call' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);

    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Save to my mailbox' }).click({ timeout: 30_000 });
    const saved = page.getByRole('region', { name: 'Saved draft' });
    await saved.getByText(/^Saved to your mailbox at \d{1,2}:\d{2}/).waitFor({ timeout: 30_000 });
    const subject = (await client.ok('GET', `/api/v1/runs/${page.url().split('/').pop()}`)).data.emailDraft.subject as string;

    const drafts = await waitFor(async () => {
      const found = await dovecot.messages('Drafts');
      return found.length > 0 ? found : null;
    }, 'the draft in Dovecot');
    assert.equal(drafts.length, 1);
    assert.ok(drafts[0]!.flags.includes('\\Draft'), drafts[0]!.flags.join(' '));
    assert.ok(drafts[0]!.raw.includes(`Subject: ${subject}`), drafts[0]!.raw.slice(0, 500));
    assert.equal(count(drafts[0]!.raw, 'Head of Sales, Acme'), 1, 'signed once');
    assert.equal(smtp.received.length, 2, 'nothing was sent over SMTP');

    await page.goto(`${server.url}/leads`);
    const row = await leadRow(page, 'Tom Okafor');
    assert.equal(row['Status'], 'Discovery', 'a draft in a mailbox is not a contact');
    assert.equal(row['Last contact'], 'Never');
    assert.deepEqual(consoleErrors, []);
  });
});

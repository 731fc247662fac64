// `npm run screenshots`: pictures of every main page of the web UI, for the README, taken from a real
// `leadrun serve` on a fresh embedded database filled the way a team would fill it (through the UI's own API),
// with a local company website for RESEARCH, a real SMTP server on loopback and a private Dovecot for the e-mail
// pages (Settings / E-mail, the delivery, a reply). Writes docs/screenshots/*.png: a laptop (1440×900) view of each page
// and a phone (390×844) view of each page (`*-phone.png`).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startDovecot, type Dovecot } from '../test/support/dovecot.ts';
import { startSmtpServer, type TestSmtpServer } from '../test/support/smtp-server.ts';
import {
  ADMIN, launchChromium, SessionClient, startCompanySite, startLeadrun, TRANSCRIPT, waitFor, type Leadrun, type Site,
} from '../test/web/support.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');
const LAPTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

const LEADS = [
  { name: 'Tomás Herrera', email: 'tomas@brightlane.io', companyName: 'Brightlane', status: 'WON' },
  { name: 'Hannah Okafor', email: 'h.okafor@fennel.health', companyName: 'Fennel Health', status: 'LOST' },
  { name: 'Lukas Weber', email: 'lukas.weber@kiefer-bau.de', companyName: 'Kiefer Bau', status: 'PROPOSAL' },
  { name: 'Aiko Tanaka', email: 'aiko@harborline.jp', companyName: 'Harborline', status: 'CONTACTED' },
  { name: 'Chloé Martin', email: 'chloe.martin@atelier-nord.fr', companyName: 'Atelier Nord', status: 'QUALIFIED' },
  { name: 'Daniel Kim', email: 'daniel@quartzpay.com', companyName: 'QuartzPay', status: 'DISCOVERY' },
  { name: 'Elena Rossi', email: 'elena.rossi@verdemobility.it', companyName: 'Verde Mobility', status: 'PROPOSAL' },
  { name: 'Marcus Webb', email: 'marcus@oakridge-analytics.com', companyName: 'Oakridge Analytics', status: 'CONTACTED' },
] as const;

/** A spreadsheet's export to import: semicolons, a byte order mark, its own headers, a cell over two lines, two bad rows. */
const IMPORT_FILE = Buffer.from(`\uFEFF${[
  'Full Name;E-mail;Firm;Website;Stage;Notes',
  'Ingrid Solberg;ingrid@fjordline.no;Fjordline;https://fjordline.no;Contacted;"Met at the stand; wants\na call in May"',
  'Rafael Ortega;rafael.ortega@solaris-energia.es;Solaris Energía;https://solaris-energia.es;Discovery;',
  'Mei Chen;mei.chen@lotus-robotics.cn;Lotus Robotics;;Qualified;Asked for pricing',
  'Sofia Marques;sofia.marques@;Porto Têxteis;https://portotexteis.pt;Discovery;',
  'Jonas Berg;jonas@berg-maskin.se;Berg Maskin;berg-maskin.se;Contacted;',
  'Amara Nwosu;amara@kano-agritech.ng;Kano Agritech;https://kano-agritech.ng;Discovery;',
  'Pieter de Vries;pieter@dvlogistiek.nl;DV Logistiek;https://dvlogistiek.nl;Proposal;Follow up after the fair',
].join('\r\n')}\r\n`);

async function shoot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  // Let fonts settle and animations (dialog, toast) finish.
  await page.evaluate('document.fonts.ready');
  await page.waitForTimeout(350);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: options.fullPage ?? false, animations: 'disabled' });
  process.stdout.write(`  docs/screenshots/${name}.png\n`);
}

async function waitForRun(client: SessionClient, id: string, status: string): Promise<any> {
  return waitFor(async () => {
    const run = (await client.ok('GET', `/api/v1/runs/${id}`)).data;
    return run.status === status ? run : null;
  }, `run ${id} to be ${status}`, 30_000);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  let server: Leadrun | null = null;
  let site: Site | null = null;
  let slowSite: Site | null = null;
  let browser: Browser | null = null;
  let smtp: TestSmtpServer | null = null;
  let dovecot: Dovecot | null = null;
  try {
    site = await startCompanySite();
    smtp = await startSmtpServer({ users: { [MAIL_USER]: MAIL_PASSWORD } });
    dovecot = await startDovecot();
    // The mail servers are on loopback; replies are looked for every second instead of every minute.
    server = await startLeadrun({ ALLOW_PRIVATE_HOSTS: 'true', MAIL_REPLY_CHECK_SECONDS: '1' });
    browser = await launchChromium();
    const base = server.url;
    const newContext = (viewport = LAPTOP): Promise<BrowserContext> =>
      browser!.newContext({ viewport, deviceScaleFactor: 1, locale: 'en-GB', timezoneId: 'Europe/London', colorScheme: 'light' });

    process.stdout.write('Taking screenshots:\n');
    // First run, before anything exists.
    const visitor = await newContext();
    const first = await visitor.newPage();
    await first.goto(`${base}/`);
    await first.getByRole('heading', { name: 'Set up your workspace' }).waitFor();
    await first.getByLabel('Workspace name').fill(ADMIN.workspaceName);
    await first.getByLabel('Your name').fill(ADMIN.name);
    await first.getByLabel('Work e-mail').fill(ADMIN.email);
    await shoot(first, 'setup');
    await visitor.close();
    const phoneVisitor = await newContext(PHONE);
    const firstOnPhone = await phoneVisitor.newPage();
    await firstOnPhone.goto(`${base}/`);
    await firstOnPhone.getByRole('heading', { name: 'Set up your workspace' }).waitFor();
    await shoot(firstOnPhone, 'setup-phone');
    await phoneVisitor.close();

    // The team's data, made through the UI's API as the admin.
    const context = await newContext();
    const admin = await SessionClient.setUp(context, base);
    const jordan = await admin.ok('POST', '/ui/api/members', { name: 'Jordan Lee', email: 'jordan@acme.test', role: 'MEMBER', password: 'a long member password' });
    const sam = await admin.ok('POST', '/ui/api/members', { name: 'Sam Ortiz', email: 'sam@acme.test', role: 'ADMIN', password: 'a long admin password' });
    // The team shares the leads out: some to Jordan, some to Sam, some to the admin, the rest to nobody yet.
    const owners = [jordan.id, sam.id, admin.session!.user.id, null];
    for (const [i, lead] of LEADS.entries()) await admin.ok('POST', '/api/v1/leads', { ...lead, assignedToUserId: owners[i % owners.length] });

    const hubspot = await admin.ok('POST', '/ui/api/keys', { name: 'HubSpot sync', scopes: ['leads:read', 'leads:write'] });
    const zapier = await admin.ok('POST', '/ui/api/keys', { name: 'Zapier', scopes: ['leads:write', 'runs:write'] });
    await admin.ok('POST', '/ui/api/keys', { name: 'Reporting (read-only)', scopes: ['leads:read', 'runs:read'] });
    await admin.ok('POST', `/ui/api/keys/${zapier.id}/revoke`);
    // HubSpot pushes a lead with its key, as an integration would.
    const pushed = await fetch(`${base}/api/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hubspot.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Grace Liu', email: 'grace.liu@polaris-labs.com', companyName: 'Polaris Labs' }),
    });
    if (pushed.status !== 201) throw new Error(`the key could not create a lead: ${pushed.status}`);

    // An approved run for one lead, and the run to show: Priya at Northwind Freight, awaiting approval.
    const tomas = (await admin.ok('GET', '/api/v1/leads?limit=100')).data.find((l: any) => l.name === 'Tomás Herrera');
    const tomasCall = await admin.ok('POST', `/api/v1/leads/${tomas.id}/calls`, {
      title: 'Renewal check-in',
      transcript: 'Tomás: The rollout went well and the team likes it.\nTomás: We want to add the Lisbon office next quarter.',
    });
    const tomasRun = await admin.ok('POST', '/api/v1/runs', { leadId: tomas.id, callId: tomasCall.id });
    await waitForRun(admin, tomasRun.id, 'AWAITING_APPROVAL');
    await admin.ok('POST', `/api/v1/runs/${tomasRun.id}/approve`);

    const priya = await admin.ok('POST', '/api/v1/leads', {
      name: 'Priya Raman', email: 'priya.raman@northwind-freight.com', companyName: 'Northwind Freight', companyWebsite: site.url, status: 'QUALIFIED',
    });
    await admin.ok('POST', `/api/v1/leads/${priya.id}/calls`, {
      title: 'Intro call', occurredAt: new Date(Date.now() - 6 * 86_400_000).toISOString(), durationSeconds: 900,
      transcript: 'Sam (Acme): Thanks for taking the call.\nPriya: We are growing fast and dispatch is struggling to keep up.\nPriya: Let us talk again once I have numbers.',
    });
    const call = await admin.ok('POST', `/api/v1/leads/${priya.id}/calls`, {
      title: 'Discovery call', occurredAt: new Date(Date.now() - 86_400_000).toISOString(), durationSeconds: 1860, transcript: TRANSCRIPT,
    });
    const run = await admin.ok('POST', '/api/v1/runs', { leadId: priya.id, callId: call.id });
    await waitForRun(admin, run.id, 'AWAITING_APPROVAL');

    const page = await context.newPage();
    await page.goto(`${base}/leads`);
    await page.getByRole('link', { name: 'Priya Raman' }).waitFor();
    await shoot(page, 'leads');

    // A spreadsheet's export checked on the import page: its first rows, its columns and its two bad rows.
    await page.goto(`${base}/leads/import`);
    await page.locator('input[type="file"]').setInputFiles({ name: 'trade-fair-leads.csv', mimeType: 'text/csv', buffer: IMPORT_FILE });
    await page.getByRole('table', { name: /The header and the first/ }).waitFor();
    await page.getByLabel('Firm', { exact: true }).selectOption({ label: 'Company' });
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByRole('table', { name: 'Rows with a problem' }).locator('dd', { hasText: 'sofia.marques@' }).waitFor();
    await shoot(page, 'lead-import', { fullPage: true });

    await page.goto(`${base}/leads`);
    await page.getByRole('link', { name: 'Priya Raman' }).waitFor();
    await page.getByRole('button', { name: 'New lead' }).click();
    await page.getByLabel('Name').fill('Noah Fischer');
    await page.getByLabel('E-mail').fill('noah@');
    await page.getByLabel('Company website').fill('fischer-logistik.de');
    await page.getByRole('button', { name: 'Create lead' }).click();
    await page.getByText(/^Enter an e-mail address like name@company\.com/).waitFor();
    await shoot(page, 'lead-form-errors');
    await page.keyboard.press('Escape');

    // Leads selected on the page, and runs about to start for their latest calls (one without a call is skipped).
    for (const name of ['Priya Raman', 'Tomás Herrera', 'Grace Liu']) await page.getByRole('checkbox', { name: `Select ${name}` }).check();
    await page.getByRole('region', { name: 'Selected leads' }).waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await shoot(page, 'leads-selected');
    await page.getByRole('button', { name: 'Start runs' }).click();
    await page.getByRole('dialog', { name: 'Start 2 runs' }).getByText('will be skipped').waitFor();
    await shoot(page, 'leads-start-runs');
    await page.keyboard.press('Escape');
    await page.getByRole('searchbox', { name: 'Search leads' }).fill('north');
    await page.locator('.results-count').filter({ hasText: /^1 lead$/ }).waitFor();
    await shoot(page, 'leads-search');

    await page.goto(`${base}/leads/${priya.id}`);
    await page.getByRole('heading', { name: 'Discovery call' }).waitFor();
    await shoot(page, 'lead');
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Priya Raman' });
    await edit.getByLabel('E-mail').fill('priya.raman@');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText(/^Enter an e-mail address like name@company\.com/).waitFor();
    await shoot(page, 'lead-edit');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: 'Delete Priya Raman?' }).getByRole('list', { name: 'What will be removed' }).waitFor();
    await shoot(page, 'lead-delete');
    await page.getByRole('button', { name: 'Keep the lead' }).click();

    await page.goto(`${base}/runs/${run.id}`);
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    await shoot(page, 'run');
    await shoot(page, 'run-full', { fullPage: true });
    // Where the analysis's items came from: the first pain's transcript line, quoted beneath it.
    const analysis = page.getByRole('region', { name: 'What the call revealed' });
    await analysis.getByRole('region', { name: 'Pain points' }).getByRole('button', { name: /^lines? \d/ }).first().click();
    await analysis.locator('.source-quote').first().waitFor();
    await analysis.scrollIntoViewIfNeeded();
    await shoot(page, 'run-analysis');

    // The draft edited in place, then its two versions side by side with what changed marked.
    const draftCard = page.getByRole('region', { name: 'E-mail draft' });
    await draftCard.getByRole('button', { name: 'Edit' }).click();
    const editor = draftCard.getByRole('form', { name: 'Edit the draft' });
    const written = await editor.getByLabel('Body').inputValue();
    await editor.getByLabel('Body').fill(written.replace('\n\n', '\n\nTeams like yours cut planning time by 87% in their first month.\n\n'));
    await shoot(page, 'run-edit');
    await editor.getByRole('button', { name: 'Save' }).click();
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.locator('ins.diff-added').first().waitFor();
    await draftCard.getByText('Not found in the call or research').scrollIntoViewIfNeeded();
    await shoot(page, 'run-edited');
    await versions.scrollIntoViewIfNeeded();
    await shoot(page, 'run-versions');

    await page.goto(`${base}/runs/${run.id}/trace`);
    await page.getByRole('heading', { name: 'Run trace' }).waitFor();
    await shoot(page, 'trace');

    await page.goto(`${base}/settings/keys`);
    await page.getByRole('rowheader', { name: 'HubSpot sync' }).waitFor();
    await shoot(page, 'keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Salesforce export');
    await page.getByRole('dialog').getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Your new API key' }).waitFor();
    await shoot(page, 'key-created');
    await page.getByRole('button', { name: 'I have stored it' }).click();

    await page.goto(`${base}/settings/members`);
    await page.getByRole('rowheader', { name: /Jordan Lee/ }).waitFor();
    await shoot(page, 'members');

    await page.goto(`${base}/settings/audit`);
    await page.getByRole('table').waitFor();
    await shoot(page, 'audit');

    await page.goto(`${base}/settings/usage`);
    await page.getByText('Runs this month', { exact: true }).waitFor();
    await shoot(page, 'usage');

    await page.goto(`${base}/runs`);
    await page.getByRole('link', { name: 'Priya Raman' }).waitFor();
    await shoot(page, 'runs');

    await page.goto(`${base}/docs`);
    await page.locator('.opblock-summary').first().waitFor();
    await shoot(page, 'docs');

    // Every page again on a phone.
    const phone = await newContext(PHONE);
    await phone.addCookies(await context.cookies());
    const mobile = await phone.newPage();
    const onPhone: Array<[string, string, (p: Page) => Promise<unknown>]> = [
      ['leads-phone', '/leads', (p) => p.getByRole('link', { name: 'Priya Raman' }).waitFor()],
      ['leads-selected-phone', '/leads', async (p) => {
        for (const name of ['Priya Raman', 'Tomás Herrera']) await p.getByRole('checkbox', { name: `Select ${name}` }).check();
        await p.getByRole('region', { name: 'Selected leads' }).waitFor();
        await p.evaluate('window.scrollTo(0, 0)');
      }],
      ['lead-phone', `/leads/${priya.id}`, (p) => p.getByRole('heading', { name: 'Discovery call' }).waitFor()],
      ['runs-phone', '/runs', (p) => p.getByRole('link', { name: 'Priya Raman' }).waitFor()],
      ['run-phone', `/runs/${run.id}`, (p) => p.getByRole('button', { name: 'Approve' }).waitFor()],
      ['trace-phone', `/runs/${run.id}/trace`, (p) => p.getByRole('heading', { name: 'Run trace' }).waitFor()],
      ['keys-phone', '/settings/keys', (p) => p.getByRole('rowheader', { name: 'HubSpot sync' }).waitFor()],
      ['members-phone', '/settings/members', (p) => p.getByRole('rowheader', { name: /Jordan Lee/ }).waitFor()],
      ['audit-phone', '/settings/audit', (p) => p.getByRole('table').waitFor()],
      ['usage-phone', '/settings/usage', (p) => p.getByText('Runs this month', { exact: true }).waitFor()],
    ];
    for (const [name, where, ready] of onPhone) {
      await mobile.goto(`${base}${where}`);
      await ready(mobile);
      await shoot(mobile, name);
    }
    await mobile.goto(`${base}/leads/import`);
    await mobile.locator('input[type="file"]').setInputFiles({ name: 'trade-fair-leads.csv', mimeType: 'text/csv', buffer: IMPORT_FILE });
    await mobile.getByRole('table', { name: /The header and the first/ }).waitFor();
    await shoot(mobile, 'lead-import-phone');
    await mobile.goto(`${base}/runs/${run.id}`);
    await mobile.getByRole('button', { name: 'Approve' }).waitFor();
    await mobile.getByRole('button', { name: 'Open menu' }).click();
    await shoot(mobile, 'menu-phone');
    await phone.close();

    // A run in progress: the company site answers slowly, so RESEARCH is still reading it.
    slowSite = await startCompanySite({ delayMs: 6000 });
    const elena = (await admin.ok('GET', '/api/v1/leads?limit=100')).data.find((l: any) => l.name === 'Elena Rossi');
    await admin.ok('PATCH', `/api/v1/leads/${elena.id}`, { companyWebsite: slowSite.url });
    const elenaCall = await admin.ok('POST', `/api/v1/leads/${elena.id}/calls`, { title: 'Pricing call', transcript: TRANSCRIPT });
    const live = await admin.ok('POST', '/api/v1/runs', { leadId: elena.id, callId: elenaCall.id });
    await page.goto(`${base}/runs/${live.id}`);
    await page.locator('.stepper-step.step-running').waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    await shoot(page, 'run-live');
    await waitForRun(admin, live.id, 'AWAITING_APPROVAL');

    // Four runs started together: the batch once settled, and its drafts in the approval queue.
    const batchLeads = (await admin.ok('GET', '/api/v1/leads?limit=100')).data
      .filter((l: any) => ['Aiko Tanaka', 'Chloé Martin', 'Daniel Kim', 'Marcus Webb'].includes(l.name));
    const items = [];
    for (const lead of batchLeads) {
      const batchCall = await admin.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
      items.push({ leadId: lead.id, callId: batchCall.id });
    }
    const batch = (await admin.ok('POST', '/api/v1/runs/batch', { runs: items })).data;
    await page.goto(`${base}/runs/batches/${batch[0].batchId}`);
    await page.getByText('Every run of the batch has finished.').waitFor({ timeout: 30_000 });
    await shoot(page, 'batch');
    await page.getByRole('link', { name: /^Review \d+ drafts?$/ }).click();
    await page.locator('.review-position').waitFor();
    await shoot(page, 'review');

    // A member on an admins-only page.
    const memberContext = await newContext();
    await SessionClient.signIn(memberContext, base, 'jordan@acme.test', 'a long member password');
    const memberPage = await memberContext.newPage();
    await memberPage.goto(`${base}/settings/keys`);
    await memberPage.getByRole('heading', { name: 'Admins only' }).waitFor();
    await shoot(memberPage, 'keys-member');
    await memberContext.close();

    await mailPages(page, admin, smtp, dovecot, base, newContext);

    // Signed out: the sign-in page.
    await page.goto(`${base}/leads`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(page, 'signin');
    await context.close();
    const signedOutPhone = await newContext(PHONE);
    const signInOnPhone = await signedOutPhone.newPage();
    await signInOnPhone.goto(`${base}/signin`);
    await signInOnPhone.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shoot(signInOnPhone, 'signin-phone');
    await signedOutPhone.close();
  } finally {
    await browser?.close();
    await server?.stop();
    await site?.close();
    await slowSite?.close();
    await dovecot?.stop();
    await smtp?.close();
  }
}

const MAIL_USER = 'sales@acme.test';
const MAIL_PASSWORD = 'smtp app password 71b0';

/**
 * The e-mail pages, set up last (with SMTP set up, the run pages above would offer "Approve and send"): Settings /
 * E-mail filled in and saved, Your profile with the signature, a run approved and sent, a reply to it on the run and
 * on the lead, a delivery the server refused; and the same pages on a phone.
 */
async function mailPages(
  page: Page, admin: SessionClient, smtp: TestSmtpServer, dovecot: Dovecot, base: string,
  newContext: (viewport?: { width: number; height: number }) => Promise<BrowserContext>,
): Promise<void> {
  await page.goto(`${base}/settings/email`);
  const smtpSection = page.getByRole('region', { name: 'Sending (SMTP)' });
  const imapSection = page.getByRole('region', { name: 'Mailbox (IMAP)' });
  await page.getByLabel('Address').fill(MAIL_USER);
  await page.getByLabel('Name').fill('Acme Sales');
  for (const [section, name, server] of [
    [smtpSection, 'SMTP', { host: smtp.host, port: smtp.port, user: MAIL_USER, password: MAIL_PASSWORD }],
    [imapSection, 'IMAP', { host: dovecot.host, port: dovecot.port, user: dovecot.user, password: dovecot.password }],
  ] as const) {
    await section.getByRole('button', { name: `Set up ${name}` }).click();
    await section.getByLabel('Security').selectOption('none');
    await section.getByLabel(`${name} server`).fill(server.host);
    await section.getByLabel('Port').fill(String(server.port));
    await section.getByLabel('User').fill(server.user);
    await section.getByLabel('Password').fill(server.password);
  }
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('The e-mail settings were saved.').waitFor();
  // After a reload the passwords show as saved, never their text; the IMAP connection checked, a test e-mail sent.
  await page.reload();
  await imapSection.getByRole('button', { name: /Change the saved IMAP password/ }).waitFor();
  await imapSection.getByRole('button', { name: 'Check connection' }).click();
  await imapSection.getByText('Connected', { exact: true }).waitFor();
  await smtpSection.getByRole('button', { name: 'Send test e-mail' }).click();
  await smtpSection.getByText(/The test e-mail was accepted/).waitFor();
  await page.evaluate('window.scrollTo(0, 0)');
  await shoot(page, 'email-settings', { fullPage: true });

  await page.goto(`${base}/settings/profile`);
  const profile = page.getByRole('form', { name: 'Your sender name and signature' });
  await profile.getByLabel('Sender name').fill('Maya at Acme');
  await profile.getByLabel('Signature').fill('Maya Brooks\nHead of Sales, Acme\n+44 20 7946 0100');
  await profile.getByRole('button', { name: 'Save sender name and signature' }).click();
  await page.getByText('Your sender name and signature were saved.').waitFor();
  await page.evaluate('window.scrollTo(0, 0)');
  await shoot(page, 'profile', { fullPage: true });

  // Grace's run, approved and sent; then her reply, found in the mailbox by the reply check.
  const leads = (await admin.ok('GET', '/api/v1/leads?limit=100')).data as Array<{ id: string; name: string }>;
  const grace = leads.find((l) => l.name === 'Grace Liu')!;
  const graceCall = await admin.ok('POST', `/api/v1/leads/${grace.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
  const graceRun = await admin.ok('POST', '/api/v1/runs', { leadId: grace.id, callId: graceCall.id });
  await waitForRun(admin, graceRun.id, 'AWAITING_APPROVAL');
  await page.goto(`${base}/runs/${graceRun.id}`);
  const draft = page.getByRole('region', { name: 'E-mail draft' });
  await draft.getByRole('button', { name: 'Approve and send' }).waitFor();
  await draft.scrollIntoViewIfNeeded();
  await shoot(page, 'run-approve-and-send');
  await draft.getByRole('button', { name: 'Approve and send' }).click();
  const delivery = page.getByRole('region', { name: 'Delivery' });
  await delivery.getByText(/^Sent at /).waitFor({ timeout: 30_000 });
  await delivery.scrollIntoViewIfNeeded();
  await shoot(page, 'run-delivery-sent');

  const sent = (await admin.ok('GET', `/api/v1/runs/${graceRun.id}`)).data.emailDraft;
  await dovecot.deliver([
    'From: Grace Liu <grace.liu@polaris-labs.com>', `To: ${MAIL_USER}`, `Subject: Re: ${sent.subject}`,
    'Message-ID: <reply-1@polaris-labs.com>', `In-Reply-To: ${sent.delivery.messageId}`, `References: ${sent.delivery.messageId}`,
    `Date: ${new Date(Date.now() - 20 * 60_000).toUTCString()}`, 'Content-Type: text/plain; charset=utf-8', '',
    'Thanks Maya, that was quick. The pilot outline looks right; our operations lead, Daniel, will join.',
    'Could we start on 1 December?', '',
    'On Tue, Maya at Acme <sales@acme.test> wrote:', `> ${sent.body.split('\n')[0]}`, '',
  ].join('\r\n'));
  const reply = page.getByRole('region', { name: 'Reply' });
  await reply.waitFor({ timeout: 30_000 });
  await page.evaluate('window.scrollTo(0, 0)');
  await shoot(page, 'run-reply');

  await page.goto(`${base}/leads/${grace.id}`);
  await page.getByRole('region', { name: 'Last reply' }).waitFor();
  await shoot(page, 'lead-reply');

  // A delivery the server refuses for good: its words, and "Retry delivery".
  smtp.answer = () => ({ code: 550, message: '5.1.1 Mailbox unavailable' });
  const hannah = leads.find((l) => l.name === 'Hannah Okafor')!;
  const hannahCall = await admin.ok('POST', `/api/v1/leads/${hannah.id}/calls`, { title: 'Win-back call', transcript: TRANSCRIPT });
  const hannahRun = await admin.ok('POST', '/api/v1/runs', { leadId: hannah.id, callId: hannahCall.id });
  await waitForRun(admin, hannahRun.id, 'AWAITING_APPROVAL');
  await page.goto(`${base}/runs/${hannahRun.id}`);
  await page.getByRole('region', { name: 'E-mail draft' }).getByRole('button', { name: 'Approve and send' }).click();
  const failed = page.getByRole('region', { name: 'Delivery' });
  await failed.getByRole('button', { name: 'Retry delivery' }).waitFor({ timeout: 30_000 });
  await failed.scrollIntoViewIfNeeded();
  await shoot(page, 'run-delivery-failed');
  smtp.answer = () => ({ accept: true });

  const phone = await newContext(PHONE);
  await phone.addCookies(await page.context().cookies());
  const mobile = await phone.newPage();
  const onPhone: Array<[string, string, (p: Page) => Promise<unknown>]> = [
    ['email-settings-phone', '/settings/email', (p) => p.getByRole('button', { name: /Change the saved IMAP password/ }).waitFor()],
    ['profile-phone', '/settings/profile', (p) => p.getByTestId('signature-preview').scrollIntoViewIfNeeded()],
    ['run-reply-phone', `/runs/${graceRun.id}`, (p) => p.getByRole('region', { name: 'Reply' }).scrollIntoViewIfNeeded()],
    ['lead-reply-phone', `/leads/${grace.id}`, (p) => p.getByRole('region', { name: 'Last reply' }).scrollIntoViewIfNeeded()],
  ];
  for (const [name, where, ready] of onPhone) {
    await mobile.goto(`${base}${where}`);
    await ready(mobile);
    await shoot(mobile, name);
  }
  await phone.close();
}

await main();

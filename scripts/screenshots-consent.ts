// `npm run screenshots:consent`: the pictures of consent (DESIGN §15) for docs/screenshots, taken from a real
// `leadrun serve` on PostgreSQL: the first-run setup page with the sender's identity and its footer preview (laptop,
// 1440×900), Settings / Suppressions with entries of each reason (laptop), and the public unsubscribe page on a phone
// (390×844). The unsubscribe link is the one the server would put in an e-mail: its token made by the same function,
// with the server's SECRETS_KEY (scripts/screenshots.ts makes the other pages).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { openDatabase } from '../src/db/database.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { unsubscribeToken } from '../src/domain/suppressions/tokens.ts';
import { createMigratedPostgresDatabase } from '../test/helpers.ts';
import { openWebUi } from '../test/web/browser.ts';
import { ADMIN, SessionClient } from '../test/web/support.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');

async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.evaluate('document.fonts.ready');
  await page.waitForTimeout(350);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), animations: 'disabled', fullPage });
  process.stdout.write(`  docs/screenshots/${name}.png\n`);
}

async function main(): Promise<void> {
  const secretsKey = randomBytes(32);
  const target = await createMigratedPostgresDatabase();
  const database = await openDatabase({ databaseUrl: target.url });
  const ui = await openWebUi({
    env: { DATABASE_URL: target.url, SECRETS_KEY: secretsKey.toString('hex') },
    server: { storage: 'embedded' },
    signedIn: false,
    context: { viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1, locale: 'en-GB', timezoneId: 'Europe/London', colorScheme: 'light' },
  });
  try {
    const { page, server, context } = ui;
    process.stdout.write('Taking screenshots:\n');

    // First run, the sender's identity typed, its footer previewed.
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/setup`);
    await page.getByLabel('Workspace name').fill(ADMIN.workspaceName);
    await page.getByLabel('Your name').fill(ADMIN.name);
    await page.getByLabel('Work e-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByLabel('Sender name').fill('Acme Sales');
    await page.getByLabel('From address').fill('sales@acme.test');
    await page.getByLabel('Company').fill('Acme Logistics Ltd');
    await page.getByLabel('Postal address').fill('12 Harbour Street\nBristol BS1 4RN, United Kingdom');
    await page.getByRole('group', { name: 'Footer preview' }).getByText('Acme Logistics Ltd, 12 Harbour Street').waitFor();
    await shoot(page, 'setup-identity', true);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.waitForURL(`${server.url}/leads`);

    // The list with an entry of each reason: by hand, a complaint, a bounce, a domain, an import.
    const client = new SessionClient(context, server.url);
    client.session = await client.ok('GET', '/ui/api/session');
    const workspaceId = client.session!.workspace.id;
    await client.ok('POST', '/api/v1/suppressions/import', { entries: ['j.okafor@lagos-freight.example', 'purchasing@meridian-shipping.example'] });
    await client.ok('POST', '/api/v1/suppressions', { domain: 'competitor.example', reason: 'manual' });
    await client.ok('POST', '/api/v1/suppressions', { email: 'noreply-ops@harborline.example', reason: 'bounced' });
    await client.ok('POST', '/api/v1/suppressions', { email: 'l.weber@kiefer-bau.example', reason: 'complained' });

    // The unsubscribe page as a recipient opens it from the e-mail, on a phone; its button then suppresses them too.
    const email = 'priya.raman@northwind-freight.example';
    const token = await unsubscribeToken(database.db, new SecretBox(secretsKey), workspaceId, email, new Date());
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${server.url}/unsubscribe/${token}`);
    await phone.getByRole('heading', { name: 'Unsubscribe' }).waitFor();
    await shoot(phone, 'unsubscribe-phone');
    await phone.getByRole('button', { name: 'Unsubscribe' }).click();
    await phone.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    await phone.close();

    await page.goto(`${server.url}/settings/suppressions`);
    await page.getByText(email).waitFor();
    await shoot(page, 'suppressions');
  } finally {
    await ui.close();
    await database.close();
    await target.drop();
  }
}

await main();
// test/helpers.ts (for its PostgreSQL database) loads node:test, whose runner would keep the process waiting.
process.exit(0);

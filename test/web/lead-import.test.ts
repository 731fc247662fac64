// Importing leads in the web UI (/leads/import): a spreadsheet's CSV export of 2,000 rows (semicolons, a byte order
// mark, "Full Name" and "E-mail" headers, a quoted cell holding a semicolon and a line break, three broken rows) is
// previewed, its columns matched and one chosen by hand, checked without writing, imported, its bad rows listed by
// the row numbers a spreadsheet shows and downloaded; and files the import cannot take are refused with the reason.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { readCsvRecords } from '../../src/domain/csv-records.ts';
import { browserUnavailable, SessionClient, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

const ROWS = 2_000;
/** Lead i is on spreadsheet row i + 1 (the header is row 1); a cell over two lines leaves it one row. */
const BROKEN: Record<number, { cells: string[]; problem: string }> = {
  500: {
    cells: ['Lead 500', 'not-an-email', 'Acme 500', 'https://acme500.example', '555-0500', ''],
    problem: 'E-mail must be an e-mail address: no @',
  },
  1200: { cells: ['', 'lead1200@example.com', 'Acme 1200', 'https://acme1200.example', '555-1200', ''], problem: 'Name (column “Full Name”) is required' },
  1800: {
    cells: ['Lead 1800', 'lead1800@example.com', 'Acme 1800', 'ftp://files.acme1800.example', '555-1800', ''],
    problem: 'Website must be an http or https URL, or a host name such as www.example.com',
  },
};
const HEADER = ['Full Name', 'E-mail', 'Firm', 'Website', 'Phone', 'Notes'];
const NOTE = 'Met at the fair; wants\na demo in May';

function spreadsheet(): Buffer {
  const lines = [HEADER.join(';')];
  for (let i = 1; i <= ROWS; i++) {
    const cells = BROKEN[i]?.cells ?? [`Lead ${i}`, `lead${i}@example.com`, `Acme ${i}`, `https://acme${i}.example`, `555-${String(i).padStart(4, '0')}`, ''];
    lines.push(cells.join(';').replace(/;$/, i === 1 ? `;"${NOTE}"` : ';'));
  }
  return Buffer.from(`\uFEFF${lines.join('\r\n')}\r\n`, 'utf8');
}

describe('importing leads in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let context: BrowserContext;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  /** Every request the page sends to the import. */
  const imports: string[] = [];

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ context: { acceptDownloads: true } });
    ({ server, page, consoleErrors, context } = ui);
    client = ui.client!;
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/leads/import')) imports.push(request.url());
    });
  });
  after(async () => {
    await ui?.close();
  });

  const count = async () => (await client.ok('GET', '/api/v1/leads/count')).count as number;

  it('previews a spreadsheet export, maps its columns, checks it without writing, imports it and lists each bad row', async () => {
    await page.goto(`${server.url}/leads/import`);
    await page.getByRole('heading', { name: 'Import leads', level: 1 }).waitFor();
    const file = spreadsheet();
    await page.locator('input[type="file"]').setInputFiles({ name: 'leads.csv', mimeType: 'text/csv', buffer: file });

    // The file, its size, and its first rows as the spreadsheet has them.
    await page.getByText('leads.csv', { exact: true }).waitFor();
    await page.getByText(`${(file.length / 1024).toFixed(1)} KiB · CSV`).waitFor();
    const preview = page.getByRole('table', { name: /The header and the first 10 rows/ });
    await preview.waitFor();
    assert.deepEqual(await preview.locator('thead th').evaluateAll((ths) => ths.map((th) => th.firstChild?.textContent)),
      ['Row', ...HEADER]);
    const first = preview.locator('tbody tr').first();
    assert.deepEqual(await first.locator('td').allInnerTexts(), ['2', 'Lead 1', 'lead1@example.com', 'Acme 1', 'https://acme1.example', '555-0001', NOTE]);
    assert.equal(await preview.locator('tbody tr').count(), 10);
    assert.equal(await preview.locator('tbody tr').last().locator('td').first().innerText(), '11', 'the quoted line break leaves lead 1 one row');
    await page.getByText('Separated by semicolons.', { exact: false }).waitFor();

    // The columns as the server matches them: "Full Name" and "E-mail" are known, "Firm" and "Phone" are not.
    const readAs = async (header: string) => page.getByLabel(header, { exact: true }).inputValue();
    assert.deepEqual(await Promise.all(HEADER.map(readAs)), ['name', 'email', '', 'companyWebsite', '', '']);
    await page.getByLabel('Firm', { exact: true }).selectOption({ label: 'Company' });
    assert.equal(await readAs('Firm'), 'companyName');

    // Check file: the counts, nothing written.
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByText('The file was checked; nothing was written').waitFor();
    const counts = page.locator('.import-counts dd');
    assert.deepEqual(await counts.evaluateAll((dds) => dds.map((dd) => dd.firstChild?.textContent)), ['1,997', '0', '3']);
    await page.getByText('3 rows with a problem').waitFor();
    assert.equal(await count(), 0, 'a check writes no lead');
    assert.equal(imports.length, 1);
    const sent = new URL(imports[0]!);
    assert.equal(sent.searchParams.get('dryRun'), 'true');
    assert.deepEqual(sent.searchParams.getAll('map'), [
      'name:Full Name', 'firstName:', 'lastName:', 'email:E-mail', 'companyName:Firm', 'companyWebsite:Website', 'status:', 'assignedToUserId:', 'timeZone:',
    ]);

    // Import: the same counts, written; each bad row with its number, what is wrong and its values from the file.
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('The file was imported').waitFor();
    await page.getByText('1,997 leads written. 3 rows have a problem and are left out.').waitFor();
    const bad = page.getByRole('table', { name: 'Rows with a problem' });
    await bad.locator('dd', { hasText: 'not-an-email' }).waitFor();
    const rows = await bad.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({
      row: tr.querySelector('th')!.textContent,
      problem: tr.querySelector('li')!.textContent,
      values: [...tr.querySelectorAll('dd')].map((dd) => dd.textContent),
    })));
    assert.deepEqual(rows, Object.entries(BROKEN).map(([lead, broken]) => ({
      row: String(Number(lead) + 1),
      problem: broken.problem,
      values: broken.cells.map((cell) => cell || '—'),
    })));
    assert.equal(await count(), ROWS - 3);
    const lead1 = (await client.ok('GET', '/api/v1/leads?q=lead1%40example.com')).data;
    assert.deepEqual(lead1.map((l: any) => [l.name, l.email, l.companyName, l.companyWebsite]), [['Lead 1', 'lead1@example.com', 'Acme 1', 'https://acme1.example']],
      'Firm was read as the company');

    // Download bad rows: the header and the three rows, as the file has them, to fix and import again.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download bad rows' }).click()]);
    assert.equal(download.suggestedFilename(), 'leads-bad-rows.csv');
    const text = await readFile((await download.path())!, 'utf8');
    assert.ok(text.startsWith('\uFEFF'), 'a byte order mark, so that a spreadsheet opens it as UTF-8');
    const records: string[][] = [];
    readCsvRecords(parse, text.slice(1), ';', (record) => records.push(record.cells));
    assert.deepEqual(records, [HEADER, ...Object.values(BROKEN).map((b) => b.cells)]);

    await page.getByRole('link', { name: 'Go to leads' }).click();
    await page.waitForURL(`${server.url}/leads`);
  });

  it('checks the same file again updating leads by e-mail: the mapping and the option are what is sent', async () => {
    await page.goto(`${server.url}/leads/import`);
    await page.locator('input[type="file"]').setInputFiles({ name: 'leads.csv', mimeType: 'text/csv', buffer: spreadsheet() });
    await page.getByLabel('Firm', { exact: true }).selectOption({ label: 'Company' });
    await page.getByRole('checkbox', { name: /Update existing leads with the same e-mail/ }).check();
    // The answer is held back until the page has shown its progress.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    await page.route('**/api/v1/leads/import?*', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Check file' }).click();
    const progress = page.getByRole('progressbar', { name: 'Upload' });
    await progress.waitFor();
    assert.match(await progress.getAttribute('aria-valuetext') ?? '', /^(Uploading the file: \d+%|Checking every row…)$/);
    assert.equal(await page.getByRole('button', { name: 'Check file' }).getAttribute('aria-busy'), 'true');
    assert.equal(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled(), true, 'one request at a time');
    release();
    await page.getByText('The file was checked; nothing was written').waitFor();
    await progress.waitFor({ state: 'detached' });
    await page.unroute('**/api/v1/leads/import?*');
    assert.deepEqual(await page.locator('.import-counts dd').evaluateAll((dds) => dds.map((dd) => dd.firstChild?.textContent)), ['0', '1,997', '3']);
    assert.equal(new URL(imports.at(-1)!).searchParams.get('dedupe'), 'email');
    assert.equal(await count(), ROWS - 3);
  });

  it('imports a JSON file: its first leads shown, no columns to map, bad leads by index and downloaded as JSON', async () => {
    await page.goto(`${server.url}/leads/import`);
    const leads = [{ name: 'Jo Json', email: 'jo@json.example' }, { name: '', email: 'nameless@json.example' }, { name: 'Kim Json', status: 'WON' }];
    await page.locator('input[type="file"]').setInputFiles({ name: 'crm.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ leads })) });
    const preview = page.getByRole('table', { name: 'The first leads of the file' });
    await preview.waitFor();
    assert.deepEqual(await preview.locator('tbody tr').first().locator('td').allInnerTexts(), ['0', 'Jo Json', 'jo@json.example', '', '', '']);
    await page.getByText('3 leads in the file').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Columns' }).count(), 0);

    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('2 leads written. 1 row has a problem and is left out.').waitFor();
    assert.equal(new URL(imports.at(-1)!).searchParams.getAll('map').length, 0, 'no mapping for JSON');
    const bad = page.getByRole('table', { name: 'Rows with a problem' });
    await bad.locator('code', { hasText: 'nameless@json.example' }).waitFor();
    assert.equal(await bad.locator('tbody th').innerText(), '1');
    assert.equal(await bad.locator('tbody li').innerText(), 'Name must not be blank');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download bad rows' }).click()]);
    assert.equal(download.suggestedFilename(), 'crm-bad-rows.json');
    assert.deepEqual(JSON.parse(await readFile((await download.path())!, 'utf8')), { leads: [leads[1]] });
    assert.equal(await count(), ROWS - 3 + 2);
  });

  it("offers a status for each of another CRM's status values a check finds, sent as statusMap", async () => {
    await page.goto(`${server.url}/leads/import`);
    const csv = 'Name,Email,Lead Status\nAnn Crm,ann@crm.example,Cold\nBo Crm,bo@crm.example,Contact in Future\n'
      + 'Cy Crm,cy@crm.example,Cold\n';
    await page.locator('input[type="file"]')
      .setInputFiles({ name: 'crm.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByText('The file was checked; nothing was written').waitFor();
    await page.getByText('Some values were not read as written').waitFor();
    await page.getByText('These values of the status column are not lead statuses.').waitFor();
    await page.getByLabel('Cold', { exact: true }).selectOption('CONTACTED');
    await page.getByLabel('Contact in Future', { exact: true }).selectOption('QUALIFIED');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('The file was imported').waitFor();
    assert.deepEqual(new URL(imports.at(-1)!).searchParams.getAll('statusMap').sort(),
      ['COLD:CONTACTED', 'CONTACT IN FUTURE:QUALIFIED']);
    const leads = (await client.ok('GET', '/api/v1/leads?q=crm.example&limit=100')).data as Array<{
      name: string;
      status: string;
    }>;
    assert.deepEqual(leads.map((l) => [l.name, l.status]).sort(),
      [['Ann Crm', 'CONTACTED'], ['Bo Crm', 'QUALIFIED'], ['Cy Crm', 'CONTACTED']]);
    assert.deepEqual(consoleErrors, []);
  });

  it('refuses a file over 10 MiB, or of another kind, before sending it, and says why', async () => {
    await page.goto(`${server.url}/leads/import`);
    const before = imports.length;
    await page.locator('input[type="file"]').setInputFiles({ name: 'huge.csv', mimeType: 'text/csv', buffer: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') });
    await page.getByText('“huge.csv” is 10,485,761 bytes; an import takes at most 10 MiB. Split it into several files.').waitFor();
    await page.locator('input[type="file"]').setInputFiles({ name: 'leads.xlsx', mimeType: 'application/octet-stream', buffer: Buffer.from('PK') });
    await page.getByText(/“leads.xlsx” is neither a CSV nor a JSON file/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Check file' }).count(), 0, 'nothing to send');
    assert.equal(imports.length, before);
  });

  it('shows the server\'s refusal of a file whose fault lies past the preview, naming the row', async () => {
    await page.goto(`${server.url}/leads/import`);
    // 100 KiB of good rows, then a quote that is never closed: the first 64 KiB preview well.
    const good = Array.from({ length: 2_500 }, (_, i) => `Lead ${i},lead${i}@example.com`);
    const text = ['name,email', ...good, '"Unclosed,quote@example.com', 'More,more@example.com'].join('\n');
    await page.locator('input[type="file"]').setInputFiles({ name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
    await page.getByRole('table', { name: /The header and the first 10 rows/ }).waitFor();
    await page.getByRole('button', { name: 'Check file' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The file was refused' });
    await alert.getByText('Row 2502 opens a quoted cell that is never closed', { exact: false }).waitFor();
    assert.equal(await count(), ROWS - 3 + 2 + 3, 'nothing more was written (the JSON file wrote 2, the CRM file 3)');
    assert.deepEqual(consoleErrors, []);
  });
});

// The leads table at the scale of a team, in a browser: 60 leads (some with accents) searched on the server as one
// types, counted, paged and filtered with everything in the address (reload, Back and Forward); a filtered CSV
// export read back; ten leads assigned to a member in one go; runs started for their latest calls, leads without
// a call named as skipped, the batch settling with the offline engine; a lead edited with the API's field
// messages; a call and a lead deleted after a confirmation that says what goes. Then, on a server without a worker
// (its runs stay QUEUED), the API's refusal to delete a call whose run is queued, said in a sentence.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page, Request } from 'playwright-core';
import {
  browserUnavailable, SessionClient, startCompanySite, startLeadrun, TRANSCRIPT, waitFor, watchConsole, type Leadrun, type Site,
} from './support.ts';
import { launchBrowser, type TestBrowser } from './browser.ts';

const VIEW = { width: 1280, height: 900 };
const STATUSES = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'] as const;
const FIRST = ['Ada', 'Ben', 'Dara', 'Elif', 'Femi', 'Greta', 'Hugo', 'Ines', 'Kira', 'Luca', 'Mona', 'Nils', 'Oona', 'Pablo'];
const LAST = ['Okafor', 'Berg', 'Fischer', 'Costa'];
const COMPANIES = ['Northwind Freight', 'Baltic Haulage', 'Van Dijk Transport', 'Kiefer Bau', 'Atelier Nord', 'Harborline'];
const ZOE = { name: 'Zoë Ångström', email: 'zoe.angstrom@nordisk.example', companyName: 'Nordisk Fjord AB' };

/** The 60 leads, oldest first: Zoë first (so she is on the last page), then names with and without accents. */
function seedLeads(): { name: string; email: string; companyName: string }[] {
  const leads = [ZOE, { name: 'José Núñez', email: 'jose@tierra.example', companyName: 'Tierra Logística' },
    { name: 'Björn Müller', email: 'bjorn@kiefer.example', companyName: 'Kiefer Bau' },
    { name: 'Chloé Martin', email: 'chloe@atelier-nord.example', companyName: 'Atelier Nord' }];
  for (let i = 0; leads.length < 60; i++) {
    const name = `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`;
    const company = COMPANIES[i % COMPANIES.length]!;
    leads.push({ name, email: `${name.toLowerCase().replace(' ', '.')}@${company.toLowerCase().replace(/\s+/g, '-')}.example`, companyName: company });
  }
  return leads;
}

/** A CSV file as rows of cells (quoted cells with commas, quotes and line breaks included). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (ch === '"') quoted = false; else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(cell); cell = ''; } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell); rows.push(row); row = []; cell = '';
    } else cell += ch;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

const listPath = (req: Request) => new URL(req.url()).pathname === '/api/v1/leads';
const qOf = (req: Request) => new URL(req.url()).searchParams.get('q');

describe('the leads table at scale in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let site: Site;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  let adminId: string;
  let jordanId: string;
  let mine: Set<string>;
  let newestFirst: any[];

  const rows = () => page.getByRole('table').locator('tbody tr');
  const rowNames = () => page.getByRole('table').locator('tbody tr .row-title').allInnerTexts();
  const search = () => page.getByRole('searchbox', { name: 'Search leads' });
  const count = (text: string) => page.locator('.results-count').filter({ hasText: new RegExp(`^${text}$`) }).waitFor();
  const pager = (text: string) => page.getByRole('navigation', { name: 'Pages of leads' }).getByText(text).waitFor();
  const toast = (text: string) => page.getByRole('status').getByText(text, { exact: true }).waitFor();

  before(async () => {
    site = await startCompanySite();
    // Ten runs a month: the batch of eight and one more fit, a batch of two then does not.
    server = await startLeadrun({ FREE_PLAN_MONTHLY_RUNS: '10' }, { storage: 'postgres' });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: VIEW });
    client = await SessionClient.setUp(context, server.url);
    adminId = client.session!.user.id;
    jordanId = (await client.ok('POST', '/ui/api/members', { name: 'Jordan Lee', email: 'jordan@acme.test', role: 'MEMBER', password: 'a long member password' })).id;
    mine = new Set();
    const leads = seedLeads();
    for (const [i, lead] of leads.entries()) {
      const assigned = i % 8 === 3;
      if (assigned) mine.add(lead.name);
      await client.ok('POST', '/api/v1/leads', { ...lead, status: STATUSES[i % STATUSES.length], ...(assigned ? { assignedToUserId: adminId } : {}) });
    }
    newestFirst = (await client.ok('GET', '/api/v1/leads?limit=100')).data;
    assert.equal(newestFirst.length, 60);
    page = await context.newPage();
    consoleErrors = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await site?.close();
  });

  it('searches every lead on the server as you type, counts them and keeps the search in the address', async () => {
    await page.goto(`${server.url}/leads`);
    await count('60 leads');
    await pager('Page 1 of 3');
    assert.deepEqual(await rowNames(), newestFirst.slice(0, 25).map((l) => l.name));
    assert.equal(await page.getByRole('link', { name: ZOE.name }).count(), 0, 'Zoë is not on the first page');

    // Typed a key at a time, faster than the pause that sends it: far fewer requests than keys.
    const searched: string[] = [];
    page.on('request', (req) => { if (listPath(req) && qOf(req) !== null) searched.push(qOf(req)!); });
    await search().click();
    await page.keyboard.type('angstrom', { delay: 30 });
    // A loaded machine can pause between two keys for longer than the debounce: "angstr" finds Zoë too, so the
    // address and the last request are waited for, not read once the row shows.
    await page.waitForURL((url) => url.search === '?q=angstrom');
    await waitFor(async () => searched.at(-1) === 'angstrom', 'the search for "angstrom" sent');
    await page.getByRole('link', { name: ZOE.name }).waitFor();
    await count('1 lead');
    assert.equal(await rows().count(), 1);
    assert.ok(searched.length < 'angstrom'.length, `debounced: ${JSON.stringify(searched)}`);

    // Reload: the address alone brings the search back.
    await page.reload();
    await page.getByRole('link', { name: ZOE.name }).waitFor();
    await count('1 lead');
    assert.equal(await search().inputValue(), 'angstrom');

    // Accents and case either way; every word must match.
    // The list showed Zoë alone already: the new search's own answer is what says it found her.
    const answered = page.waitForResponse((res) => listPath(res.request()) && qOf(res.request()) === 'ZOE ång');
    await search().fill('ZOE ång');
    await page.waitForURL(/q=ZOE/);
    assert.deepEqual(((await (await answered).json()) as { data: { name: string }[] }).data.map((l) => l.name), [ZOE.name]);
    await count('1 lead');
    await search().fill('zoë northwind');
    await page.getByRole('heading', { name: 'No leads match “zoë northwind”' }).waitFor();
    await page.getByText('Searched the names, e-mails and companies of all leads for every word of “zoë northwind”.', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Clear search and filters' }).click();
    await count('60 leads');
    assert.equal(await search().inputValue(), '');
    assert.equal(new URL(page.url()).search, '');
  });

  it('never shows a slower, older search over a newer one: the older request is aborted', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    // The search for "a" (most leads) is held back by the network until after the search for "angstrom" answered.
    await page.route((url) => url.pathname === '/api/v1/leads' && url.searchParams.get('q') === 'a', async (route) => {
      await gate;
      await route.continue().catch(() => { /* the page aborted it */ });
    });
    const aborted = page.waitForEvent('requestfailed', (req) => listPath(req) && qOf(req) === 'a');
    const held = page.waitForRequest((req) => listPath(req) && qOf(req) === 'a');
    await search().fill('a');
    await held;
    await search().fill('angstrom');
    await count('1 lead');
    await aborted;
    release();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    // Aborted in the browser, the older answer can never reach the screen.
    await count('1 lead');
    assert.deepEqual(await rowNames(), [ZOE.name]);
    await search().fill('');
    await count('60 leads');
  });

  it('keeps the page in the address: reload, Back and Forward, and a shared link', async () => {
    await page.goto(`${server.url}/leads`);
    await count('60 leads');
    await page.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL(/page=2&cursor=/);
    await pager('Page 2 of 3');
    await pager('26–50 of 60');
    assert.deepEqual(await rowNames(), newestFirst.slice(25, 50).map((l) => l.name));
    const page2 = page.url();

    await page.reload();
    await pager('Page 2 of 3');
    assert.deepEqual(await rowNames(), newestFirst.slice(25, 50).map((l) => l.name));

    await page.goBack();
    await pager('Page 1 of 3');
    assert.equal(page.url(), `${server.url}/leads`);
    assert.deepEqual(await rowNames(), newestFirst.slice(0, 25).map((l) => l.name));
    await page.goForward();
    await pager('Page 2 of 3');
    assert.deepEqual(await rowNames(), newestFirst.slice(25, 50).map((l) => l.name));

    await page.getByRole('button', { name: 'Older' }).click();
    await pager('Page 3 of 3');
    assert.deepEqual(await rowNames(), newestFirst.slice(50).map((l) => l.name));
    assert.ok((await rowNames()).includes(ZOE.name));
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await pager('Page 2 of 3');
    assert.equal(page.url(), page2);

    // A page opened from a link (another tab, nothing remembered) offers the first page instead of "Newer".
    const shared = await context.newPage();
    await shared.goto(page2);
    await shared.getByRole('navigation', { name: 'Pages of leads' }).getByText('Page 2 of 3').waitFor();
    await shared.getByRole('button', { name: 'First page' }).click();
    await shared.getByRole('navigation', { name: 'Pages of leads' }).getByText('Page 1 of 3').waitFor();
    await shared.close();

    // A filter starts again at page 1; Back returns to page 2 unfiltered.
    await page.getByLabel('Owner').selectOption({ label: 'My leads' });
    await page.waitForURL(`${server.url}/leads?owner=me`);
    await count(`${mine.size} leads`);
    await page.goBack();
    await pager('Page 2 of 3');
    assert.equal(page.url(), page2);

    // A cursor the API never gave out (an old or hand-edited link): said, with the way to the first page.
    await page.goto(`${server.url}/leads?page=2&cursor=not-a-cursor`);
    await page.getByText('This page cannot be shown').waitFor();
    await page.getByText('The request is invalid: cursor is not a cursor this service gave out.').waitFor();
    await page.getByRole('button', { name: 'Go to the first page' }).click();
    await pager('Page 1 of 3');
    assert.equal(page.url(), `${server.url}/leads`);
  });

  it('filters by owner and status: my leads, unassigned, a member', async () => {
    await page.goto(`${server.url}/leads`);
    await count('60 leads');
    await page.getByLabel('Owner').selectOption({ label: 'My leads' });
    await count(`${mine.size} leads`);
    assert.deepEqual(new Set(await rowNames()), mine);
    for (const owner of await page.getByRole('table').locator('tbody td[data-label="Owner"]').allInnerTexts()) assert.equal(owner, 'You');
    await page.getByLabel('Status').selectOption({ label: 'Contacted' });
    await page.waitForURL(`${server.url}/leads?status=CONTACTED&owner=me`);
    const contacted = newestFirst.filter((l) => l.status === 'CONTACTED' && l.assignedToUserId === adminId).length;
    await count(contacted === 1 ? '1 lead' : `${contacted} leads`);
    await page.getByLabel('Status').selectOption({ label: 'All statuses' });
    await page.getByLabel('Owner').selectOption({ label: 'Unassigned' });
    await page.waitForURL(`${server.url}/leads?owner=none`);
    await count(`${60 - mine.size} leads`);
    await page.getByLabel('Owner').selectOption({ label: 'Jordan Lee' });
    await page.waitForURL(`${server.url}/leads?owner=${jordanId}`);
    await page.getByRole('heading', { name: 'No leads match these filters' }).waitFor();
    await page.getByText('No leads assigned to Jordan Lee yet.', { exact: false }).waitFor();
  });

  it('exports the filtered leads as CSV', async () => {
    await page.goto(`${server.url}/leads?owner=me`);
    await count(`${mine.size} leads`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^leads-\d{4}-\d{2}-\d{2}\.csv$/);
    const text = (await readFile((await download.path())!, 'utf8')).replace(/^\uFEFF/, '');
    const [header, ...data] = parseCsv(text).filter((row) => row.some(Boolean));
    assert.deepEqual(header, [
      'name', 'email', 'companyName', 'companyWebsite', 'status', 'assignedToUserId', 'createdAt', 'updatedAt',
      'ownerName', 'ownerEmail', 'lastContactedAt', 'lastReplyAt', 'timeZone',
    ]);
    assert.deepEqual(new Set(data.map((row) => row[0])), mine);
    assert.equal(data.length, mine.size);
    for (const row of data) assert.equal(row[5], adminId);

    // A search exports what it finds, accents and all.
    await page.goto(`${server.url}/leads?q=angstrom`);
    await count('1 lead');
    const [found] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const rowsFound = parseCsv((await readFile((await found.path())!, 'utf8')).replace(/^\uFEFF/, '')).filter((row) => row.some(Boolean));
    assert.deepEqual(rowsFound.slice(1).map((row) => row.slice(0, 3)), [[ZOE.name, ZOE.email, ZOE.companyName]]);
  });

  it('selects leads from the keyboard and assigns ten to a member in one go', async () => {
    await page.goto(`${server.url}/leads`);
    await count('60 leads');
    const selectAll = page.getByRole('checkbox', { name: 'Select all leads on this page' });
    const bar = page.getByRole('region', { name: 'Selected leads' });

    // Tab from "select all" reaches the first row's checkbox; Space ticks it.
    await selectAll.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await bar.getByText('1 lead selected').waitFor();
    assert.equal(await rows().nth(0).getByRole('checkbox').isChecked(), true);
    assert.equal(await selectAll.evaluate((el: any) => el.indeterminate), true, 'some of the page: indeterminate');
    await selectAll.check();
    await bar.getByText('25 leads selected').waitFor();
    assert.equal(await selectAll.evaluate((el: any) => el.indeterminate), false);
    await selectAll.uncheck();
    await bar.waitFor({ state: 'detached' });

    const ten = newestFirst.slice(0, 10);
    for (const lead of ten) await page.getByRole('checkbox', { name: `Select ${lead.name}` }).check();
    await bar.getByText('10 leads selected').waitFor();
    await bar.getByRole('button', { name: 'Assign to…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Assign 10 leads' });
    await dialog.getByLabel('Assign to').selectOption({ label: 'Jordan Lee' });
    await dialog.getByRole('button', { name: 'Assign', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await toast('10 leads assigned to Jordan Lee.');
    await bar.waitFor({ state: 'detached' });
    const assigned = (await client.ok('GET', `/api/v1/leads?assignedToUserId=${jordanId}&limit=100`)).data;
    assert.deepEqual(new Set(assigned.map((l: any) => l.id)), new Set(ten.map((l) => l.id)));
    // The toast comes before the table's refetch answers: wait for each row to show its new owner.
    for (const lead of ten) {
      const row = rows().filter({ has: page.getByRole('link', { name: lead.name, exact: true }) });
      await row.locator('td[data-label="Owner"]', { hasText: /^Jordan Lee$/ }).waitFor();
    }
    await page.getByLabel('Owner').selectOption({ label: 'Jordan Lee' });
    await count('10 leads');
  });

  it('names the leads that could not be assigned', async () => {
    const gone = await client.ok('POST', '/api/v1/leads', { name: 'Quentin Gone' });
    const other = newestFirst[10];
    await page.goto(`${server.url}/leads`);
    await count('61 leads');
    await page.getByRole('checkbox', { name: 'Select Quentin Gone' }).check();
    await page.getByRole('checkbox', { name: `Select ${other.name}` }).check();
    // Deleted by someone else after it was selected.
    await client.ok('DELETE', `/api/v1/leads/${gone.id}`);
    const bar = page.getByRole('region', { name: 'Selected leads' });
    await bar.getByRole('button', { name: 'Assign to…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Assign 2 leads' });
    await dialog.getByLabel('Assign to').selectOption({ label: 'Maya Brooks (you)' });
    await dialog.getByRole('button', { name: 'Assign', exact: true }).click();
    const summary = page.getByRole('dialog', { name: '1 lead could not be assigned' });
    await summary.getByText('1 of 2 leads assigned to Maya Brooks').waitFor();
    assert.equal(await summary.getByRole('listitem').innerText(), 'Quentin Gone: it was deleted since you selected it.');
    await summary.getByRole('button', { name: 'Done' }).click();
    await toast('1 lead assigned to Maya Brooks.');
    await bar.waitFor({ state: 'detached' });
    await count('60 leads');
    assert.equal((await client.ok('GET', `/api/v1/leads/${other.id}`)).data.assignedToUserId, adminId);
  });

  it("starts runs for the selected leads' latest calls, naming the leads without a call", async () => {
    const ten = newestFirst.slice(0, 10);
    const latest = new Map<string, string>();
    for (const [i, lead] of ten.slice(0, 8).entries()) {
      if (i === 0) await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Intro call', transcript: 'Sam: Hello.\nLead: We are growing fast.' });
      const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
      latest.set(lead.id, call.id);
    }
    await page.goto(`${server.url}/leads?owner=${jordanId}`);
    await count('10 leads');
    await page.getByRole('checkbox', { name: 'Select all leads on this page' }).check();
    await page.getByRole('region', { name: 'Selected leads' }).getByRole('button', { name: 'Start runs' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start 8 runs' });
    await dialog.waitFor();
    await dialog.getByText('2 leads have no call and will be skipped').waitFor();
    await dialog.getByText(`${ten[8].name}, ${ten[9].name}.`, { exact: false }).waitFor();
    const planned = dialog.getByRole('list', { name: /each from the lead's latest call/ }).getByRole('listitem');
    assert.equal(await planned.count(), 8);
    assert.match(await planned.filter({ hasText: ten[0].name }).innerText(), /Discovery call/);

    await dialog.getByRole('button', { name: 'Start 8 runs' }).click();
    await page.waitForURL(/\/runs\/batches\/[0-9a-f-]{36}$/);
    const batchId = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: '8 runs started together', level: 1 }).waitFor();
    await page.getByText('Every run of the batch has finished.').waitFor({ timeout: 60_000 });
    const awaiting = page.locator('.batch-counts > div', { has: page.getByText('Awaiting approval', { exact: true }) }).locator('dd');
    assert.equal((await awaiting.innerText()).split('\n')[0], '8');
    const runs = (await client.ok('GET', `/api/v1/runs?batchId=${batchId}&limit=100`)).data;
    assert.equal(runs.length, 8);
    for (const run of runs) {
      assert.equal(run.callId, latest.get(run.leadId), 'each run is of its lead\'s latest call');
      assert.equal(run.status, 'AWAITING_APPROVAL');
    }
  });

  it("edits every field of a lead, showing the API's messages next to the fields", async () => {
    const jose = newestFirst.find((l) => l.name === 'José Núñez');
    await page.goto(`${server.url}/leads/${jose.id}`);
    await page.getByRole('heading', { name: 'José Núñez', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit José Núñez' });
    const email = dialog.getByLabel('E-mail');
    await email.fill('jose@');
    await dialog.getByLabel('Company website').fill('ftp://tierra.example');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.getByText('Enter an e-mail address like name@company.com (nothing after the @).').waitFor();
    await dialog.getByText('Enter a web address such as www.example.com or https://example.com.').waitFor();
    assert.equal(await email.getAttribute('aria-invalid'), 'true');
    const describedBy = await email.getAttribute('aria-describedby');
    assert.match(await page.locator(`[id="${describedBy}"]`).innerText(), /Enter an e-mail address/);
    assert.equal((await client.ok('GET', `/api/v1/leads/${jose.id}`)).data.email, jose.email, 'nothing was saved');

    await dialog.getByLabel('Name').fill('José Núñez García');
    await email.fill('jose.nunez@tierra.example');
    await dialog.getByLabel('Company (optional)', { exact: true }).fill('Tierra Logística SL');
    await dialog.getByLabel('Company website').fill(site.url);
    await dialog.getByLabel('Status').selectOption({ label: 'Qualified' });
    await dialog.getByLabel('Owner').selectOption({ label: 'Jordan Lee' });
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'José Núñez García', level: 1 }).waitFor();
    await toast('José Núñez García was saved.');
    const facts = page.locator('.facts-strip');
    await facts.getByText('jose.nunez@tierra.example').waitFor();
    await facts.getByText('Jordan Lee', { exact: true }).waitFor();
    const saved = (await client.ok('GET', `/api/v1/leads/${jose.id}`)).data;
    assert.deepEqual(
      { name: saved.name, email: saved.email, companyName: saved.companyName, companyWebsite: saved.companyWebsite, status: saved.status, assignedToUserId: saved.assignedToUserId },
      { name: 'José Núñez García', email: 'jose.nunez@tierra.example', companyName: 'Tierra Logística SL', companyWebsite: site.url, status: 'QUALIFIED', assignedToUserId: jordanId },
    );

    // An emptied field is cleared; the owner can be taken away.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await dialog.getByLabel('Company (optional)', { exact: true }).fill('');
    await dialog.getByLabel('Owner').selectOption({ label: 'Nobody' });
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const cleared = (await client.ok('GET', `/api/v1/leads/${jose.id}`)).data;
    assert.equal(cleared.companyName, null);
    assert.equal(cleared.assignedToUserId, null);
    assert.equal(cleared.email, 'jose.nunez@tierra.example', 'what was not changed stays');
  });

  it('deletes a call, then the lead, each after saying what goes', async () => {
    const lead = newestFirst[0];
    const calls = (await client.ok('GET', `/api/v1/leads/${lead.id}/calls`)).data;
    const intro = calls.find((c: any) => c.title === 'Intro call');
    const introRun = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: intro.id });
    await waitFor(async () => (await client.ok('GET', `/api/v1/runs/${introRun.id}`)).data.status === 'AWAITING_APPROVAL', 'the intro call\'s run', 30_000);

    await page.goto(`${server.url}/leads/${lead.id}`);
    await page.getByRole('heading', { name: 'Intro call' }).waitFor();
    await page.getByRole('button', { name: 'Delete Intro call' }).click();
    const callDialog = page.getByRole('dialog', { name: 'Delete “Intro call”?' });
    const goes = callDialog.getByRole('list', { name: 'What will be removed' });
    await goes.getByText('1 run, with its draft and history (steps and events)').waitFor();
    assert.deepEqual(await goes.getByRole('listitem').allInnerTexts(), ['the call “Intro call”, with its transcript', '1 run, with its draft and history (steps and events)']);
    await callDialog.getByRole('button', { name: 'Delete the call and 1 run' }).click();
    await callDialog.waitFor({ state: 'detached' });
    await toast('“Intro call” was deleted, with 1 run.');
    assert.equal(await page.getByRole('heading', { name: 'Intro call' }).count(), 0);
    assert.deepEqual((await client.ok('GET', `/api/v1/leads/${lead.id}/calls`)).data.map((c: any) => c.title), ['Discovery call']);
    assert.equal((await client.call('GET', `/api/v1/runs/${introRun.id}`)).status, 404);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${lead.name}?` });
    const all = dialog.getByRole('list', { name: 'What will be removed' });
    await all.getByText('1 call, with its transcript').waitFor();
    assert.deepEqual(await all.getByRole('listitem').allInnerTexts(), [
      `the lead ${lead.name}: name, e-mail, company and website`,
      '1 call, with its transcript',
      '1 run, with its draft and history (steps and events)',
    ]);
    await dialog.getByText('The audit log keeps only the ids of what was removed').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Keep the lead' }).evaluate((el) => el === (globalThis as any).document.activeElement), true, 'the safe choice has focus');
    await dialog.getByRole('button', { name: 'Delete the lead, 1 call and 1 run' }).click();
    await page.waitForURL(`${server.url}/leads`);
    await toast(`${lead.name} was deleted, with 1 call and 1 run.`);
    await count('59 leads');
    assert.equal((await client.call('GET', `/api/v1/leads/${lead.id}`)).status, 404);
    assert.deepEqual((await client.ok('GET', `/api/v1/runs?leadId=${lead.id}`)).data, []);
  });

  it("says when the month's runs cannot hold the batch, and starts none", async () => {
    const [first, second] = newestFirst.slice(1, 3);
    const runsBefore = (await client.ok('GET', '/api/v1/runs?limit=100')).data.length;
    await page.goto(`${server.url}/leads?owner=${jordanId}`);
    await page.getByRole('checkbox', { name: `Select ${first.name}` }).check();
    await page.getByRole('checkbox', { name: `Select ${second.name}` }).check();
    await page.getByRole('region', { name: 'Selected leads' }).getByRole('button', { name: 'Start runs' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start 2 runs' });
    await dialog.getByRole('button', { name: 'Start 2 runs' }).click();
    await dialog.getByText('Not enough runs are left this month').waitFor();
    await dialog.getByText('The Free plan allows 10 runs a month; this workspace has used 9, and 2 more would pass the limit. Nothing was started.', { exact: false }).waitFor();
    assert.equal(await dialog.getByRole('link', { name: 'See usage' }).getAttribute('href'), '/settings/usage');
    assert.match(page.url(), /\/leads\?owner=/, 'no batch page: nothing started');
    assert.equal((await client.ok('GET', '/api/v1/runs?limit=100')).data.length, runsBefore);

    assert.deepEqual(consoleErrors, []);
  });
});

describe("deleting a call whose run is queued, in the web UI", { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let page: Page;
  let client: SessionClient;

  before(async () => {
    // No worker: a run stays QUEUED for as long as the test needs.
    server = await startLeadrun({}, { args: ['--no-worker'], storage: 'postgres' });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: VIEW });
    client = await SessionClient.setUp(context, server.url);
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("says the API's 409 in a sentence, names the run, and deletes once the run is cancelled", async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
    await page.goto(`${server.url}/leads/${lead.id}`);
    await page.getByRole('button', { name: 'Delete Discovery call' }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete “Discovery call”?' });
    const button = dialog.getByRole('button', { name: 'Delete the call and 0 runs' });
    await button.waitFor();

    // A run starts after the dialog counted: the API refuses, and the dialog says why.
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    assert.equal(run.status, 'QUEUED');
    await button.click();
    await dialog.getByText('A run of this call is queued').waitFor();
    await dialog.getByText('The call can be deleted once the run has finished or been cancelled. Nothing was removed.').waitFor();
    assert.equal(await dialog.getByRole('link', { name: 'Open the run' }).getAttribute('href'), `/runs/${run.id}`);
    assert.equal(await dialog.getByRole('button', { name: 'Delete the call and 1 run' }).isDisabled(), true);
    assert.equal((await client.ok('GET', `/api/v1/leads/${lead.id}/calls`)).data.length, 1, 'nothing was removed');
    await dialog.getByRole('button', { name: 'Keep the call' }).click();
    await dialog.waitFor({ state: 'detached' });

    // Cancelled, the run no longer holds the call.
    await client.ok('POST', `/api/v1/runs/${run.id}/cancel`);
    await page.getByRole('button', { name: 'Delete Discovery call' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete “Discovery call”?' });
    await dialog.getByRole('button', { name: 'Delete the call and 1 run' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('No calls yet').waitFor();
    assert.deepEqual((await client.ok('GET', `/api/v1/leads/${lead.id}/calls`)).data, []);
    assert.equal((await client.call('GET', `/api/v1/runs/${run.id}`)).status, 404);
  });
});

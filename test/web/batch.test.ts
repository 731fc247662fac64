// A batch in the web UI: three runs started in one request, their progress page counting them live until every run
// has settled (and again after a reload, from the address alone), then the approval queue worked from the keyboard:
// approve with A, reject with R (typing the feedback fires no shortcut), skip with J, back with K, and the empty
// state once nothing awaits.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserUnavailable, SessionClient, startCompanySite, TRANSCRIPT, waitFor, type Leadrun, type Site } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

const LEADS = [
  { name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' },
  { name: 'Jonas Berg', email: 'jonas@baltic.example', companyName: 'Baltic Haulage' },
  { name: 'Lena Fischer', email: 'lena@vandijk.example', companyName: 'Van Dijk Transport' },
];

describe('a batch of runs in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let site: Site;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    site = await startCompanySite();
    ui = await openWebUi();
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
  });
  after(async () => {
    await ui?.close();
    await site?.close();
  });

  it('shows a batch settle, then reviews its drafts from the keyboard', async () => {
    const items = [];
    for (const lead of LEADS) {
      const created = await client.ok('POST', '/api/v1/leads', { ...lead, companyWebsite: site.url });
      const call = await client.ok('POST', `/api/v1/leads/${created.id}/calls`, { transcript: TRANSCRIPT, title: 'Discovery call' });
      items.push({ leadId: created.id, callId: call.id });
    }
    const started = (await client.ok('POST', '/api/v1/runs/batch', { runs: items })).data;
    assert.deepEqual(started.map((r: any) => r.leadId), items.map((i) => i.leadId));
    const batchId = started[0].batchId;
    const nameOf = new Map<string, string>(started.map((r: any, i: number) => [r.id, LEADS[i]!.name]));

    // The progress page reads the batch every 2 s until every run has settled, then stops.
    const reads: number[] = [];
    page.on('request', (request) => { if (request.url().includes(`/ui/api/batches/${batchId}`)) reads.push(Date.now()); });
    await page.goto(`${server.url}/runs/batches/${batchId}`);
    await page.getByRole('heading', { name: '3 runs started together', level: 1 }).waitFor();
    const count = async (label: string) => (await page.locator('.batch-counts > div', { has: page.getByText(label, { exact: true }) }).locator('dd').innerText()).split('\n')[0];
    await page.getByText('Every run of the batch has finished.').waitFor({ timeout: 45_000 });
    assert.deepEqual(
      { queued: await count('Queued'), running: await count('Running'), awaiting: await count('Awaiting approval'), failed: await count('Failed'), done: await count('Done') },
      { queued: '0', running: '0', awaiting: '3', failed: '0', done: '0' },
    );
    assert.equal(await page.getByRole('progressbar', { name: 'Runs finished' }).getAttribute('aria-valuenow'), '3');
    const rows = page.getByRole('table').getByRole('row');
    assert.equal(await rows.count(), 4, 'a header row and a row for each run');
    for (const lead of LEADS) {
      const row = rows.filter({ hasText: lead.name });
      assert.match(await row.innerText(), /Awaiting approval/);
      assert.match(await row.getByRole('link', { name: lead.name }).getAttribute('href') ?? '', /^\/runs\/[0-9a-f-]{36}$/);
    }
    // Once settled, the page stops reading: no request in the next two polling intervals and more. (An absence
    // cannot be awaited; this is the one fixed wait of the test.)
    const readsWhenSettled = reads.length;
    await page.waitForTimeout(4500);
    assert.equal(reads.length, readsWhenSettled, 'no reading once every run has settled');

    // The address alone brings the batch back.
    await page.reload();
    await page.getByText('Every run of the batch has finished.').waitFor();
    assert.equal(await count('Awaiting approval'), '3');

    // The queue, from the batch page: the oldest draft first, with its lead, recipient, subject and grounding.
    await page.getByRole('link', { name: 'Review 3 drafts' }).click();
    await page.waitForURL(`${server.url}/runs/review?batch=${batchId}`);
    await page.getByRole('heading', { name: 'Review drafts', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: 'Review drafts' }).getAttribute('aria-current'), 'page');
    const keyboard = page.getByRole('complementary', { name: 'Keyboard' });
    for (const text of ['Approve', 'Reject or regenerate', 'Next draft', 'Previous draft']) await keyboard.getByText(text).waitFor();

    const queue = (await client.ok('GET', `/api/v1/runs?status=AWAITING_APPROVAL&order=oldest&batchId=${batchId}`)).data.map((r: any) => r.id);
    assert.equal(queue.length, 3);
    const draft = page.locator('section.draft-review');
    const showing = async (runId: string) => {
      await draft.getByRole('heading', { level: 2, name: new RegExp(nameOf.get(runId)!) }).waitFor();
      const run = (await client.ok('GET', `/api/v1/runs/${runId}`)).data;
      await draft.getByText(run.emailDraft.subject, { exact: true }).waitFor();
      await draft.getByText(run.emailDraft.to, { exact: true }).waitFor();
      await draft.getByText(/Every specific claim is backed|Check these claims before sending/).first().waitFor();
    };

    await showing(queue[0]);
    const position = page.locator('.review-position');
    await position.filter({ hasText: 'Draft 1 of 3' }).waitFor();
    await page.keyboard.press('a');
    await page.getByRole('status').getByText(`Approved the draft for ${nameOf.get(queue[0])}.`).waitFor();
    await showing(queue[1]);
    await position.filter({ hasText: 'Draft 1 of 2' }).waitFor();
    assert.equal((await client.ok('GET', `/api/v1/runs/${queue[0]}`)).data.status, 'COMPLETED');

    // R opens the dialog; the letters typed into its field are feedback, not shortcuts.
    await page.keyboard.press('r');
    const dialog = page.getByRole('dialog', { name: 'Reject the draft' });
    await dialog.waitFor();
    await page.keyboard.type('Too long; ask for a short call instead. jk');
    assert.equal(await dialog.getByRole('textbox', { name: 'Feedback' }).inputValue(), 'Too long; ask for a short call instead. jk');
    await showing(queue[1]);
    await dialog.getByRole('button', { name: 'Reject draft' }).click();
    await dialog.waitFor({ state: 'detached' });
    await showing(queue[2]);
    const rejected = (await client.ok('GET', `/api/v1/runs/${queue[1]}`)).data;
    assert.equal(rejected.status, 'REJECTED');
    assert.equal(rejected.emailDraft.status, 'REJECTED');

    // J skips the last draft: the end of the queue says one is left; K goes back to it; A approves it.
    await page.keyboard.press('j');
    await page.getByRole('heading', { name: 'You have been through every draft' }).waitFor();
    await page.getByText('1 draft you skipped still awaits approval.').waitFor();
    assert.equal((await client.ok('GET', `/api/v1/runs/${queue[2]}`)).data.status, 'AWAITING_APPROVAL', 'skipping decides nothing');
    await page.keyboard.press('k');
    await showing(queue[2]);
    // Every shortcut has a button too.
    await draft.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Nothing awaits approval' }).waitFor();
    await page.getByText('You decided on 3 drafts.').waitFor();
    assert.equal((await client.ok('GET', `/api/v1/runs/${queue[2]}`)).data.status, 'COMPLETED');

    // Back on the batch: every run is done.
    await page.getByRole('link', { name: 'Back to the batch' }).first().click();
    await page.waitForURL(`${server.url}/runs/batches/${batchId}`);
    await waitFor(async () => (await count('Done')) === '3', 'three runs done');
    assert.equal(await count('Awaiting approval'), '0');
    await page.getByRole('table').getByText('Rejected').waitFor();

    assert.deepEqual(consoleErrors, []);
  });
});

// Editing a draft in the web UI (DESIGN §7): the draft turns into a form in place, a refused field is named under
// it, saving makes version 2 with its grounding verdict shown, the versions list and the side-by-side comparison
// mark what changed, approving approves the edited version, and on a phone nothing scrolls sideways.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ADMIN, browserUnavailable, SessionClient, TRANSCRIPT, waitFor, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('editing a draft in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi();
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
  });
  after(async () => {
    await ui?.close();
  });

  it('edit subject, recipient and body in place → verdict → versions side by side → approve; the phone does not scroll sideways', async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await page.goto(`${server.url}/runs/${run.id}`);
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });
    const original = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data.emailDraft;

    // Edit turns the draft into a form in place, its fields filled with the draft, the first one focused.
    await draft.getByRole('button', { name: 'Edit' }).click();
    const form = draft.getByRole('form', { name: 'Edit the draft' });
    const subject = form.getByLabel('Subject');
    const to = form.getByLabel('To (optional)');
    const body = form.getByLabel('Body');
    assert.equal(await subject.inputValue(), original.subject);
    assert.equal(await body.inputValue(), original.body);
    assert.equal(await draft.getByRole('button', { name: 'Approve' }).count(), 0, 'no decision while editing');
    await waitFor(() => to.evaluate((el) => el === (globalThis as any).document.activeElement), 'the first field is focused');

    // An address the server refuses: its message under the field, the field marked invalid and focused.
    await to.fill('priya@northwind..example');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Enter an e-mail address like name@company.com.').waitFor();
    assert.equal(await to.getAttribute('aria-invalid'), 'true');

    await to.fill('ops@northwind.example');
    await subject.fill('A pilot plan for your dispatchers');
    await body.fill('Hi Priya,\n\nPlanning the weekly loads takes your dispatchers two full days. Teams like yours cut costs by 87% in a month.\n\nBest,\nMaya');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved as version 2.').waitFor();
    await form.waitFor({ state: 'detached' });

    // The draft shows the edit and the verdict on its own text.
    await draft.getByText('Version 2').waitFor();
    await draft.getByText('A pilot plan for your dispatchers').waitFor();
    await draft.getByText('ops@northwind.example').waitFor();
    const verdict = draft.locator('.alert', { hasText: 'Not found in the call or research' });
    await verdict.waitFor();
    assert.match(await verdict.innerText(), /87%/);

    // Every version, and the two compared side by side with the words that changed marked.
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByText('Generated').first().waitFor();
    assert.match(await versions.getByRole('listitem').nth(1).innerText(), /Edited by Maya Brooks/);
    // The version the edit replaced says so; nothing reads "Rejected".
    assert.match(await versions.getByRole('listitem').nth(0).innerText(), /Edited as v2/);
    assert.doesNotMatch(await versions.innerText(), /Rejected/);
    const compare = versions.getByRole('group', { name: 'Compare two versions' });
    // The pickers take the two latest versions in an effect after the list has rendered, and the comparison is shown
    // only then: waited for, so that the pickers and the marked words read are the ones of the new list.
    await versions.locator('.version-diff').waitFor();
    assert.equal(await compare.getByLabel('Compare').inputValue(), '1');
    assert.equal(await compare.getByLabel('with').inputValue(), '2');
    const added = await versions.locator('ins.diff-added').allInnerTexts();
    assert.ok(added.some((text) => text.includes('87%')), `the added words are marked: ${added.join(' | ')}`);
    assert.ok(await versions.locator('del.diff-removed').count() > 0, 'the removed words are marked');

    // Approving approves the edited version.
    await draft.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText('Draft approved').waitFor();
    const stored = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
    assert.equal(stored.emailDraft.version, 2);
    assert.equal(stored.emailDraft.status, 'APPROVED');
    assert.equal(stored.emailDraft.subject, 'A pilot plan for your dispatchers');
    const listed = (await client.ok('GET', `/api/v1/runs/${run.id}/drafts`)).data;
    assert.deepEqual(listed.map((v: any) => [v.origin, v.status]), [['generated', 'SUPERSEDED'], ['edited', 'APPROVED']]);
    assert.equal(listed[1].editedBy.name, ADMIN.name);
    await versions.getByText('Approved', { exact: true }).waitFor();

    // On a phone the comparison stacks and nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('region', { name: 'Versions' }).locator('ins.diff-added').first().waitFor();
    const overflow = await page.evaluate(() => {
      const doc = (globalThis as any).document.documentElement;
      return doc.scrollWidth - doc.clientWidth;
    });
    assert.ok(overflow <= 0, `the run page scrolls sideways by ${overflow}px at 390px`);

    assert.deepEqual(consoleErrors, []);
  });

  it('edit, then regenerate with feedback: the versions say "Edited as v2" and "Regenerated as v3"; the trace numbers them alike', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman', email: 'priya@northwind.example', companyName: 'Northwind Freight' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    await page.goto(`${server.url}/runs/${run.id}`);
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });
    await client.ok('PATCH', `/api/v1/runs/${run.id}/draft`, { subject: 'Your dispatchers’ two days' });
    await page.reload();
    await draft.getByText('Version 2').waitFor();

    await draft.getByRole('button', { name: 'Regenerate…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Regenerate the draft' });
    await dialog.getByLabel('Feedback (optional)').fill('Shorter please.');
    await dialog.getByRole('button', { name: 'Regenerate draft' }).click();
    await draft.getByText('Version 3').waitFor({ timeout: 30_000 });
    await draft.getByRole('button', { name: 'Approve' }).waitFor();

    const versions = page.getByRole('region', { name: 'Versions' });
    const items = versions.getByRole('listitem');
    await waitFor(async () => (await items.count()) === 3, 'three versions');
    assert.match(await items.nth(0).innerText(), /^v1[\s\S]*Generated[\s\S]*Edited as v2/);
    assert.match(await items.nth(1).innerText(), /^v2[\s\S]*Edited[\s\S]*Regenerated as v3/);
    assert.match(await items.nth(2).innerText(), /^v3[\s\S]*Regenerated[\s\S]*after the feedback “Shorter please\.”[\s\S]*Current/);
    assert.doesNotMatch(await versions.innerText(), /Rejected/);

    await page.getByRole('link', { name: 'Trace' }).first().click();
    await page.getByRole('heading', { name: 'Run trace' }).waitFor();
    const titles = page.getByRole('region', { name: 'Attempts' }).locator('.attempt-title');
    await waitFor(async () => (await titles.count()) === 5, 'five attempts');
    assert.deepEqual((await titles.allInnerTexts()).slice(3), ['Draft · version 1', 'Draft · version 3 (regenerated)']);
    const edited = page.getByRole('row').filter({ hasText: 'Draft edited' });
    assert.match(await edited.innerText(), /v2/);
    assert.deepEqual(consoleErrors, []);
  });
});

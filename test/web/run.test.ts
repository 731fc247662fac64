// Scenario (b): a person creates a lead (the form shows the server's per-field messages), adds a call by pasting
// its transcript, starts a run and watches its four steps finish live over Server-Sent Events, reads each step's
// output as prose and lists, asks for a new version of the draft, approves it, and opens the run's trace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserUnavailable, SessionClient, startCompanySite, TRANSCRIPT, waitFor, type Leadrun, type Site } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe('a run in the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let site: Site;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    // The website answers slowly, so RESEARCH is seen running before it completes.
    site = await startCompanySite({ delayMs: 1500 });
    ui = await openWebUi();
    ({ server, page, consoleErrors } = ui);
    client = ui.client!;
  });
  after(async () => {
    await ui?.close();
    await site?.close();
  });

  it('lead → call → run, followed live → regenerate → approve → trace', async () => {
    await page.goto(`${server.url}/leads`);
    await page.getByText('No leads yet').waitFor();
    await page.getByRole('button', { name: 'New lead' }).click();
    const form = page.getByRole('dialog', { name: 'New lead' });
    await form.getByLabel('Name').fill('Priya Raman');
    await form.getByLabel('E-mail').fill('priya@');
    await form.getByLabel('Company (optional)', { exact: true }).fill('Northwind Freight');
    await form.getByLabel('Company website').fill('ftp://northwind.example');
    await form.getByRole('button', { name: 'Create lead' }).click();

    // The server's 400 names both fields; each message sits under its field and the field is marked invalid.
    const email = form.getByLabel('E-mail');
    await form.getByText('Enter an e-mail address like name@company.com (nothing after the @).').waitFor();
    await form.getByText('Enter a web address such as www.example.com or https://example.com.').waitFor();
    assert.equal(await email.getAttribute('aria-invalid'), 'true');
    const describedBy = await email.getAttribute('aria-describedby');
    assert.ok(describedBy, 'the e-mail field is described by its error');
    assert.match(await page.locator(`[id="${describedBy}"]`).innerText(), /Enter an e-mail address/);
    // The form moves focus once the answer has rendered: awaited, not read at the instant the message appears.
    await waitFor(() => email.evaluate((el) => el === (globalThis as any).document.activeElement), 'focus moves to the first invalid field');

    await email.fill('priya.raman@northwind-freight.com');
    await form.getByLabel('Company website').fill(site.url);
    await form.getByRole('button', { name: 'Create lead' }).click();
    await page.waitForURL(/\/leads\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: 'Priya Raman', level: 1 }).waitFor();
    const leadId = page.url().split('/').pop()!;

    // Add a call by pasting its transcript.
    await page.getByText('No calls yet').waitFor();
    await page.getByRole('button', { name: 'Add call' }).first().click();
    const callForm = page.getByRole('dialog', { name: 'Add a call' });
    await callForm.getByLabel('Title').fill('Discovery call');
    await callForm.getByLabel('Transcript').fill(TRANSCRIPT);
    await callForm.getByRole('button', { name: 'Add call' }).click();
    await callForm.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'Discovery call' }).waitFor();

    // Start a run from the call; the run page follows it over SSE.
    const streams: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events') && (request.headers().accept ?? '').includes('text/event-stream')) streams.push(request.url());
    });
    await page.getByRole('button', { name: 'Draft a follow-up from Discovery call' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').pop()!;

    // RESEARCH is seen working (the site is slow), then every step completes, with no reload.
    const progress = page.getByRole('region', { name: 'Progress' });
    await progress.locator('li[aria-current="step"]', { hasText: 'Research' }).waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });
    for (const step of ['Research', 'Analysis', 'Strategy', 'Draft']) {
      assert.match(await progress.getByRole('listitem').filter({ hasText: step }).innerText(), /Done in/, `${step} is done`);
    }
    assert.ok(streams.length >= 1, 'the run page opened an event stream');
    assert.match(await page.locator('.page-actions').innerText(), /Awaiting approval/);

    // Each step's output, for a person: facts with their source links, lists, the strategy, the draft.
    const research = page.getByRole('region', { name: 'Company research' });
    await research.getByText('More than 340 carriers plan their weekly loads with Northwind.', { exact: true }).waitFor();
    assert.ok(await research.locator(`a[href^="${site.url}"]`).count() > 0, 'facts link to the pages they came from');
    const analysis = page.getByRole('region', { name: 'What the call revealed' });
    await analysis.getByRole('heading', { name: /Pain points/ }).waitFor();
    assert.ok(await analysis.getByRole('listitem').count() >= 2, 'pains, objections and signals are lists');
    // Each item says which transcript lines it was read from, shown on hover and, clicked, quoted beneath it.
    const pains = analysis.getByRole('region', { name: 'Pain points' });
    const source = pains.getByRole('button', { name: /^lines? \d/ }).first();
    assert.match(String(await source.getAttribute('title')), /^2: Priya: Happy to\. Honestly, planning the weekly loads/m);
    await source.click();
    await pains.locator('.source-quote').getByText(/planning the weekly loads takes our dispatchers two full days/).waitFor();
    assert.equal(await source.getAttribute('aria-expanded'), 'true');
    await page.getByRole('region', { name: 'Strategy' }).getByText('Angle').waitFor();
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByText('priya.raman@northwind-freight.com').waitFor();
    const body = await page.locator('.run-main').innerText();
    assert.doesNotMatch(body, /[{}]|"engine"|"painPoints"/, 'no raw JSON on the page');

    // Regenerate with feedback: the run goes back to WRITER and comes back with version 2.
    await draft.getByRole('button', { name: 'Regenerate…' }).click();
    const regenerate = page.getByRole('dialog', { name: 'Regenerate the draft' });
    await regenerate.getByLabel('Feedback').fill('Shorter, and mention the pilot first.');
    await regenerate.getByRole('button', { name: 'Regenerate draft' }).click();
    await draft.getByText('Version 2').waitFor({ timeout: 30_000 });
    await draft.getByRole('button', { name: 'Approve' }).waitFor();

    await draft.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText('Draft approved').waitFor();
    await draft.getByText('Approved', { exact: true }).waitFor();
    await page.locator('.page-actions').getByText('Approved').waitFor();
    assert.equal(await draft.getByRole('button', { name: 'Approve' }).count(), 0, 'no decision is offered once approved');

    const stored = (await client.ok('GET', `/api/v1/runs/${runId}`)).data;
    assert.equal(stored.status, 'COMPLETED');
    assert.equal(stored.emailDraft.status, 'APPROVED');
    assert.equal(stored.emailDraft.version, 2);
    assert.equal(stored.leadId, leadId);

    // The trace: every attempt with its duration and engine, the regeneration and its feedback.
    await page.getByRole('link', { name: 'Trace' }).first().click();
    await page.waitForURL(`${server.url}/runs/${runId}/trace`);
    await page.getByRole('heading', { name: 'Run trace' }).waitFor();
    const attempts = page.getByRole('region', { name: 'Attempts' }).getByRole('listitem');
    await waitFor(async () => (await attempts.count()) === 5, 'five attempts (four steps, WRITER twice)');
    assert.match(await attempts.first().innerText(), /Research[\s\S]*Completed[\s\S]*offline/);
    await page.getByText('Feedback: “Shorter, and mention the pilot first.”').waitFor();

    // The run appears on the lead's page with its draft subject.
    await page.goto(`${server.url}/leads/${leadId}`);
    await page.getByRole('region', { name: 'Runs' }).getByText('Approved').waitFor();

    assert.deepEqual(consoleErrors, []);
  });
});

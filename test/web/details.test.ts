// The small things of the web UI, each where it could go wrong: opening it signed out logs no failed request;
// an over-long transcript keeps its character counter in view; a call shows its transcript's format; an unreadable
// website is reported in one sentence; "Regenerate" says feedback is optional and works without it; the trace names
// each draft version; the regeneration is audited as run.regenerated; "Pipeline time" leaves out the wait for
// review; /docs is leadrun's own page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { pipelineMs } from '../../web/src/lib/pipeline.ts';
import {
  browserUnavailable, parseDuration, SessionClient, showsDuration, TRANSCRIPT, waitFor, type Leadrun,
} from './support.ts';
import { openWebUi, type TestBrowser, type WebUi } from './browser.ts';

const VIEW = { viewport: { width: 1280, height: 900 }, locale: 'en-US' };

/** Every console error and every answer of 400 or more a page gets, failed requests included. */
function watchFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') failures.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  page.on('response', (response) => { if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`); });
  return failures;
}

describe('details of the web UI', { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];
  let run: any;

  let ui: WebUi;
  before(async () => {
    ui = await openWebUi({ context: VIEW, signedIn: false });
    ({ server, page, consoleErrors, context, browser } = ui);
  });
  after(async () => {
    await ui?.close();
  });

  it('opens signed out, at first run and at sign-in, with no failed request and no console error', async () => {
    const firstRun = watchFailures(page);
    await page.goto(`${server.url}/leads`);
    await page.waitForURL(`${server.url}/setup`);
    await page.getByRole('heading', { name: 'Set up your workspace' }).waitFor();
    assert.deepEqual(firstRun, []);

    client = await SessionClient.setUp(context, server.url);
    const visitor = await browser.newContext(VIEW);
    try {
      const signedOut = await visitor.newPage();
      const failures = watchFailures(signedOut);
      await signedOut.goto(`${server.url}/runs`);
      await signedOut.getByRole('heading', { name: 'Sign in' }).waitFor();
      // An ended session is the same: its cookie is sent, and nobody is signed in.
      await visitor.addCookies([{ name: 'leadrun_session', value: 'a'.repeat(43), url: server.url }]);
      await signedOut.reload();
      await signedOut.getByRole('heading', { name: 'Sign in' }).waitFor();
      assert.deepEqual(failures, []);
    } finally {
      await visitor.close();
    }
  });

  it('keeps the character counter in view when the transcript is too long', async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Ada Lovelace' });
    await page.goto(`${server.url}/leads/${lead.id}`);
    await page.getByRole('button', { name: 'Add call' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a call' });
    const transcript = dialog.getByLabel('Transcript');
    await dialog.getByText('0 / 200,000 characters', { exact: true }).waitFor();
    await transcript.fill(`Ada: ${'x'.repeat(199_996)}`);
    await dialog.getByRole('button', { name: 'Add call' }).click();
    await dialog.getByText('A transcript can be at most 200,000 characters.').waitFor();
    const counter = dialog.getByText('200,001 / 200,000 characters · 1 too many', { exact: true });
    assert.ok(await counter.isVisible(), 'the counter is shown with the error');
    const counterId = await counter.evaluate((el) => el.closest('p')!.id);
    assert.ok((await transcript.getAttribute('aria-describedby'))?.split(' ').includes(counterId), 'the counter describes the field');
    await transcript.fill('Ada: hello');
    await dialog.getByText('10 / 200,000 characters', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it("shows each call's transcript format on the lead page", async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Marcus Feld' });
    const vtt = 'WEBVTT\n\n1\n00:00:01.200 --> 00:00:04.000\n<v Jonas Meyer>Hi Marcus.</v>\n\n'
      + '2\n00:00:04.500 --> 00:00:09.000\n<v Marcus Feld>Hello Jonas.</v>\n';
    await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Zoom call', transcript: vtt });
    await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Notes', transcript: 'Marcus wants a demo.' });
    await page.goto(`${server.url}/leads/${lead.id}`);
    const calls = page.locator('.call');
    await calls.filter({ hasText: 'Zoom call' }).getByText('WebVTT (Zoom/Teams)', { exact: true }).waitFor();
    await calls.filter({ hasText: 'Notes' }).getByText('Plain text', { exact: true }).waitFor();
  });

  it('reports a website that cannot be read in one sentence, never with ".."', async () => {
    // A fully qualified name (final dot) that never resolves (RFC 2606).
    const lead = await client.ok('POST', '/api/v1/leads', {
      name: 'Priya Raman', email: 'priya@northwind-logistics.example', companyName: 'Northwind Logistics', companyWebsite: 'http://northwind-logistics.invalid./',
    });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Discovery call', transcript: TRANSCRIPT });
    const started = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    run = started;
    await page.goto(`${server.url}/runs/${started.id}`);
    await page.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });
    const callout = page.getByRole('region', { name: 'Company research' }).locator('.callout-warning');
    const text = (await callout.innerText()).trim();
    assert.match(text, /^northwind-logistics\.invalid could not be read: .*[^.]\. The draft leans on the call alone\.$/);
    assert.ok(!text.includes('..'), text);
  });

  it('regenerates without feedback, names each draft version in the trace and audits it as run.regenerated', async () => {
    const draft = page.getByRole('region', { name: 'E-mail draft' });
    await draft.getByRole('button', { name: 'Regenerate…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Regenerate the draft' });
    const feedback = dialog.getByLabel('Feedback (optional)');
    assert.equal(await feedback.inputValue(), '');
    const hint = await feedback.getAttribute('aria-describedby');
    assert.match(await page.locator(`[id="${hint}"]`).innerText(), /Leave it empty/);
    // A person reads the draft before deciding: at least a second passes after it was ready, on the server's clock
    // (the same machine's), so that the run's wall time is plainly more than its pipeline time.
    const ready = Date.parse((await client.ok('GET', `/api/v1/runs/${run.id}`)).data.completedAt);
    await waitFor(async () => Date.now() - ready >= 1000, 'a second of review');
    await dialog.getByRole('button', { name: 'Regenerate draft' }).click();
    await draft.getByText('Version 2').waitFor({ timeout: 30_000 });
    await draft.getByRole('button', { name: 'Approve' }).waitFor();

    await page.getByRole('link', { name: 'Trace' }).first().click();
    await page.getByRole('heading', { name: 'Run trace' }).waitFor();
    const titles = page.getByRole('region', { name: 'Attempts' }).locator('.attempt-title');
    await waitFor(async () => (await titles.count()) === 5, 'five attempts');
    assert.deepEqual(await titles.allInnerTexts(), [
      'Research · attempt 1', 'Analysis · attempt 1', 'Strategy · attempt 1', 'Draft · version 1', 'Draft · version 2 (regenerated)',
    ]);
    const timeline = await page.locator('.waterfall-label').allInnerTexts();
    assert.deepEqual(timeline, ['Research', 'Analysis', 'Strategy', 'Draft v1', 'Draft v2']);

    await page.goto(`${server.url}/settings/audit`);
    const entry = page.getByRole('row').filter({ hasText: 'run.regenerated' });
    await entry.waitFor();
    assert.match(await entry.innerText(), /success[\s\S]*200[\s\S]*Web app/);
    assert.equal(await page.getByRole('row').filter({ hasText: 'run.rejected' }).count(), 0, 'a regeneration is not a rejection');
  });

  it('shows the pipeline time of a regenerated run, not the time it waited for review', async () => {
    const done = (await client.ok('GET', `/api/v1/runs/${run.id}`)).data;
    const steps = pipelineMs(done.steps)!;
    const wall = Date.parse(done.completedAt) - Date.parse(done.startedAt);
    // The run waited at least a second for the decision before WRITER ran again.
    assert.ok(wall - steps >= 1000, `the run waited: ${wall} ms in all, ${steps} ms of steps`);

    await page.goto(`${server.url}/runs/${run.id}`);
    const details = page.getByRole('complementary', { name: 'Run details' });
    const value = details.locator('div', { has: page.getByText('Pipeline time', { exact: true }) }).locator('dd');
    const onRunPage = parseDuration(await value.innerText());
    assert.ok(showsDuration(onRunPage, steps) && !showsDuration(onRunPage, wall), `run page: ${onRunPage} ms for ${steps} ms of steps, ${wall} ms in all`);

    await page.goto(`${server.url}/runs`);
    const row = page.getByRole('row').filter({ hasText: 'Priya Raman' });
    const inList = parseDuration(await row.locator('[data-col="took"]').innerText());
    assert.ok(showsDuration(inList, steps) && !showsDuration(inList, wall), `runs list: ${inList} ms`);
    assert.equal(await page.getByRole('columnheader', { name: 'Pipeline time' }).count(), 1);
  });

  it("shows /docs as leadrun's API reference, with leadrun's mark and no console error", async () => {
    const docs = await context.newPage();
    // Swagger UI renders the whole API document in the page: 2 s here, and past 20 s on a loaded machine.
    docs.setDefaultTimeout(60_000);
    const failures = watchFailures(docs);
    await docs.goto(`${server.url}/docs`);
    await docs.locator('.opblock-summary').first().waitFor();
    assert.equal(await docs.title(), 'leadrun API reference');
    const logo = docs.locator('.topbar img');
    await logo.waitFor();
    const shown = await logo.evaluate((img: any) => ({ data: img.src.startsWith('data:image/svg+xml;base64,'), width: img.naturalWidth }));
    assert.ok(shown.data && shown.width > 0, `the mark is drawn: ${JSON.stringify(shown)}`);
    assert.equal(await docs.locator('.download-url-wrapper').isVisible(), false, 'no Explore box');
    const method = await docs.locator('.opblock-get .opblock-summary-method').first().evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor);
    assert.equal(method, 'rgb(51, 70, 201)', "GET in leadrun's accent");
    assert.deepEqual(failures, []);
    await docs.close();
    assert.deepEqual(consoleErrors, []);
  });

  it('turns its spinners only for a person who has not asked for reduced motion', async () => {
    // The tests' pages ask for reduced motion (./browser.ts); a person's browser, by default, does not.
    const spinner = (target: Page) => target.evaluate(() => {
      const doc = (globalThis as any).document;
      const element = doc.createElement('span');
      element.className = 'spinner';
      doc.body.append(element);
      const { animationName, animationIterationCount } = (globalThis as any).getComputedStyle(element);
      element.remove();
      return { animationName, animationIterationCount };
    });
    assert.deepEqual(await spinner(page), { animationName: 'spin', animationIterationCount: '1' });
    const moving = await browser.newContext({ ...VIEW, reducedMotion: 'no-preference' });
    const person = await moving.newPage();
    await person.goto(`${server.url}/leads`);
    await person.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.deepEqual(await spinner(person), { animationName: 'spin', animationIterationCount: 'infinite' });
    await moving.close();
  });
});

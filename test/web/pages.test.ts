// Every page the client's router knows opens on a reload (the server answers its path with the app), an unknown
// path gets the app's own not-found page with a 404, and the API's unknown paths keep their JSON problem. The list
// of pages is the one both sides read (src/http/ui/app-pages.ts), so a page added to the router is tested here.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { APP_PAGES } from '../../src/http/ui/app-pages.ts';
import { browserUnavailable, SessionClient, TRANSCRIPT, type Leadrun } from './support.ts';
import { openWebUi, type WebUi } from './browser.ts';

describe("the web UI's pages on a reload", { skip: browserUnavailable() ?? false }, () => {
  let server: Leadrun;
  let context: BrowserContext;
  let page: Page;
  let client: SessionClient;
  let consoleErrors: string[];

  let ui: WebUi;
  before(async () => {
    // Without a worker: the run and the batch stay queued, which is all a page needs to open.
    ui = await openWebUi({ server: { args: ['--no-worker'], storage: 'postgres' }, context: { viewport: { width: 1280, height: 800 } }, signedIn: false });
    ({ server, page, consoleErrors, context } = ui);
    client = await SessionClient.setUp(context, server.url);
  });
  after(async () => {
    await ui?.close();
  });

  it('opens every page of the router on a reload, with the HTML of the app and a 200', async () => {
    const lead = await client.ok('POST', '/api/v1/leads', { name: 'Priya Raman' });
    const call = await client.ok('POST', `/api/v1/leads/${lead.id}/calls`, { title: 'Call', transcript: TRANSCRIPT });
    const run = await client.ok('POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
    const batch = (await client.ok('POST', '/api/v1/runs/batch', { runs: [{ leadId: lead.id, callId: call.id }] })).data[0];
    const ids: Record<string, string> = {
      '/leads/:id': lead.id, '/runs/:id': run.id, '/runs/:id/trace': run.id, '/runs/batches/:id': batch.batchId,
    };
    for (const pattern of APP_PAGES) {
      const id = () => ids[pattern] ?? assert.fail(`an id for ${pattern}`);
      const path = pattern.includes(':id') ? pattern.replace(':id', id()) : pattern;
      const answer = await page.goto(`${server.url}${path}`);
      assert.equal(answer?.status(), 200, path);
      assert.match(answer?.headers()['content-type'] ?? '', /^text\/html/, path);
      await page.locator('main h1').first().waitFor();
      const notFound = page.getByRole('heading', { name: 'This page does not exist' });
      assert.equal(await notFound.count(), 0, `${path} is a page`);
      // A reload of the page shows it again.
      assert.equal((await page.reload())?.status(), 200, `${path} reloaded`);
      await page.locator('main h1').first().waitFor();
      assert.equal(new URL(page.url()).pathname, path);
    }
    assert.deepEqual(consoleErrors, []);
  });

  it("answers an unknown path with the app's not-found page and a 404", async () => {
    for (const path of ['/settings/nothing-here', '/no-such-page', '/leads/import/extra']) {
      const answer = await page.goto(`${server.url}${path}`);
      assert.equal(answer?.status(), 404, path);
      assert.match(answer?.headers()['content-type'] ?? '', /^text\/html/, path);
      await page.getByRole('heading', { name: 'This page does not exist' }).waitFor();
      await page.getByRole('button', { name: 'Go to leads' }).waitFor();
    }
  });

  it('keeps the JSON problem for an unknown path of the API', async () => {
    for (const path of ['/api/v1/nothing-here', '/ui/api/nothing-here', '/api/nothing', '/assets/missing.js']) {
      const answer = await context.request.get(`${server.url}${path}`);
      assert.equal(answer.status(), 404, path);
      assert.match(answer.headers()['content-type'] ?? '', /^application\/problem\+json/, path);
      assert.equal((await answer.json()).status, 404, path);
    }
  });

  it('says a lead that does not exist does not, with a way back to the leads (not "Try again")', async () => {
    await page.goto(`${server.url}/leads/${randomUUID()}`);
    await page.getByRole('heading', { name: 'This lead does not exist' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Try again' }).count(), 0);
    await page.getByRole('link', { name: 'Back to leads' }).click();
    await page.waitForURL(`${server.url}/leads`);
  });
});

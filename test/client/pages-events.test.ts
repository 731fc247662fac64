// @leadrun/client's page-level lists and its live iterator over a run's events, against a real leadrun on loopback
// (the app and its worker), on each database: `leads.page()` and `runs.page()` hand over the cursor of the next
// page; `runs.events(id)` yields every event once, in order, until the run rests, also when the stream breaks (a
// loopback proxy cuts it after the first event) and is opened again with Last-Event-ID.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, type Lead, type LeadrunClient, type RunEvent } from '../../packages/client/src/index.ts';
import { BACKENDS, TRANSCRIPT, startTestApp, type TestApp } from '../helpers.ts';
import { startProxy, type Proxy } from './support.ts';

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The events are 1, 2, 3… with none missed or repeated, the first `run.queued`, the last the run's rest. */
function assertWhole(events: RunEvent[], from = 1): void {
  const seen = JSON.stringify(events.map((e) => [e.id, e.type]));
  assert.deepEqual(events.map((e) => e.id), events.map((_, i) => from + i), seen);
  if (from === 1) assert.equal(events[0]?.type, 'run.queued');
  assert.equal(events.at(-1)?.type, 'run.awaiting_approval');
}

for (const kind of BACKENDS) {
  describe(`@leadrun/client pages and live events (${kind})`, () => {
    let t: TestApp;
    let key: string;
    let client: LeadrunClient;
    let proxy: Proxy;

    before(async () => {
      t = await startTestApp(kind);
      const workspace = await t.workspace('pro');
      key = (await t.key(workspace.id)).key;
      client = createClient({ baseUrl: t.url, apiKey: key });
      proxy = await startProxy(t.url);
    });
    after(async () => {
      await proxy?.close();
      await t?.close();
    });

    /** A run still QUEUED (no worker runs it yet), for a new lead with a call. */
    async function queuedRun(name: string) {
      const lead = await client.leads.create({ name });
      const call = await client.calls.create(lead.id, { transcript: TRANSCRIPT });
      return client.runs.create({ leadId: lead.id, callId: call.id });
    }

    it('hands over leads a page at a time, with the cursor of the next page and the filters kept', async () => {
      const leads = Array.from({ length: 5 }, (_, i) => ({ name: `Paged ${i}`, companyName: 'Paging Co' }));
      await client.leads.import({ leads });
      await client.leads.create({ name: 'Not Listed' });
      const seen: Lead[] = [];
      const cursors: Array<string | null> = [];
      let cursor: string | undefined;
      do {
        const { data, nextCursor } = await client.leads.page({ q: 'Paged', limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...data);
        cursors.push(nextCursor);
        cursor = nextCursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen.map((l) => l.name).sort(), ['Paged 0', 'Paged 1', 'Paged 2', 'Paged 3', 'Paged 4']);
      assert.equal(cursors.length, 3);
      assert.ok(cursors.slice(0, 2).every((c) => typeof c === 'string' && c.length > 0), JSON.stringify(cursors));
      assert.equal(cursors[2], null, 'the last page has no next');
      // The same leads, in the same order, as the iterator gives them.
      const iterated = await all(client.leads.list({ q: 'Paged', limit: 2 }));
      assert.deepEqual(seen.map((l) => l.id), iterated.map((l) => l.id));

      const runs = await client.runs.page({ limit: 1 });
      assert.deepEqual(runs, { data: [], nextCursor: null });
    });

    it('follows a run live, event by event, and ends when the run rests', async () => {
      const run = await queuedRun('Live Events');
      const streaming = all(client.runs.events(run.id));
      const worker = await t.startWorker();
      try {
        const events = await streaming;
        assertWhole(events);
        assert.ok(events.some((e) => e.type === 'step.completed' && e.node === 'WRITER'));
        assert.deepEqual(await client.runs.listEvents(run.id), events, 'the same events as the JSON list');

        // From a later point: only what came after it, and at once, the run being at rest.
        const later = await all(client.runs.events(run.id, { after: 2 }));
        assertWhole(later, 3);
      } finally {
        await worker.stop();
      }
    });

    it('opens a broken stream again with Last-Event-ID, missing and repeating nothing', async () => {
      const run = await queuedRun('Broken Live Events');
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key });
      const path = `/api/v1/runs/${run.id}/events`;
      let cut = 0;
      proxy.seen.length = 0;
      proxy.decide = (req) => (req.url === path && cut++ === 0 ? 'cut-after-first-event' : 'pass');
      const reopened = proxy.arrival((r) => r.url === path && r.headers['last-event-id'] !== undefined);
      const streaming = all(viaProxy.runs.events(run.id));
      let worker;
      try {
        await reopened;
        worker = await t.startWorker();
        assertWhole(await streaming);
        const streams = proxy.seen.filter((r) => r.url === path);
        assert.equal(streams[0]!.headers['last-event-id'], undefined);
        assert.equal(streams[1]!.headers['last-event-id'], '1', 'opened again after the one event seen');
        assert.ok(streams.every((r) => r.headers.accept === 'text/event-stream'));
      } finally {
        proxy.decide = () => 'pass';
        await worker?.stop();
      }
    });

    it('may be left early, and refuses an unknown run with its LeadrunError', async () => {
      const run = await queuedRun('Left Early');
      for await (const event of client.runs.events(run.id)) {
        assert.equal(event.type, 'run.queued');
        break;
      }
      const unknown = all(client.runs.events('00000000-0000-4000-8000-000000000000'));
      await assert.rejects(unknown, { name: 'LeadrunError', status: 404 });
      await client.runs.cancel(run.id);
    });
  });
}

// @leadrun/client against a real leadrun on loopback (the app, its worker and a webhook job runner), on PostgreSQL
// and PGlite: every method once, pagination, retries (a lost answer, a 429 with Retry-After), runs.wait by the
// events stream and by polling, the errors, and webhooks.verify over a real signed delivery.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient, LeadrunError, LeadrunTimeoutError, WebhookVerificationError, type LeadrunClient, type Run } from '../../packages/client/src/index.ts';
import { retryAfterMs } from '../../packages/client/src/transport.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, TRANSCRIPT, startTestApp, type TestApp } from '../helpers.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startProxy, startWebhookRunner, type Proxy } from './support.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function rejects<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${type.name}, but it resolved`);
}

for (const kind of BACKENDS) {
  describe(`@leadrun/client (${kind})`, () => {
    let t: TestApp;
    let key: string;
    let client: LeadrunClient;
    let proxy: Proxy;
    let receiver: WebhookReceiver;
    let runner: JobRunner;
    let worker: JobRunner;

    /** A lead with a call, ready for a run. */
    async function leadWithCall(name = 'Ada Lovelace') {
      const lead = await client.leads.create({ name, email: `${name.split(' ')[0]!.toLowerCase()}@example.net`, companyName: 'Analytical Engines' });
      const call = await client.calls.create(lead.id, { transcript: TRANSCRIPT, title: 'Discovery' });
      return { lead, call };
    }

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true } });
      const workspace = await t.workspace('pro');
      key = (await t.key(workspace.id)).key;
      client = createClient({ baseUrl: t.url, apiKey: key });
      proxy = await startProxy(t.url);
      receiver = await startWebhookReceiver();
      worker = await t.startWorker();
      runner = await startWebhookRunner(t);
    });
    after(async () => {
      await runner?.stop();
      await receiver?.close();
      await proxy?.close();
      await t?.close();
    });

    it('reads, writes, counts, imports and exports leads, and keeps their calls', async () => {
      const lead = await client.leads.create({ name: 'Grace Hopper', email: 'grace@example.net', companyName: 'Navy' });
      assert.match(lead.id, UUID);
      assert.equal((await client.leads.get(lead.id)).name, 'Grace Hopper');
      const updated = await client.leads.update(lead.id, { status: 'QUALIFIED', companyName: null });
      assert.equal(updated?.status, 'QUALIFIED');
      assert.equal(updated?.companyName, null);

      const imported = await client.leads.import('name,email,company\nAlan Turing,alan@example.net,Bletchley\nKatherine Johnson,,NASA\n');
      assert.equal(imported.created, 2, JSON.stringify(imported));
      const json = await client.leads.import([{ name: 'Margaret Hamilton', email: 'margaret@example.net' }], { dedupe: 'email' });
      assert.equal(json.created, 1);
      assert.equal(await client.leads.count({ q: 'Turing' }), 1);
      assert.equal(await client.leads.count(), 4);

      const csv = await client.leads.export({ q: 'Hamilton' });
      assert.match(csv, /^\uFEFF?name,email,companyName/);
      assert.match(csv, /Margaret Hamilton,margaret@example\.net/);
      const chunks: string[] = [];
      const decoder = new TextDecoder();
      for await (const chunk of await client.leads.exportStream({ status: 'QUALIFIED' })) chunks.push(decoder.decode(chunk, { stream: true }));
      assert.match(chunks.join(''), /Grace Hopper/);

      const call = await client.calls.create(lead.id, { transcript: TRANSCRIPT, title: 'Intro' });
      assert.deepEqual((await all(client.calls.list(lead.id))).map((c) => c.id), [call.id]);
      await client.calls.delete(lead.id, call.id);
      assert.deepEqual(await all(client.calls.list(lead.id)), []);

      await client.leads.delete(lead.id);
      const gone = await rejects(client.leads.get(lead.id), LeadrunError);
      assert.equal(gone.status, 404);
      assert.equal(gone.code, 'not_found');
    });

    it('lists 120 leads over three pages, following the Link header with the filters kept', async () => {
      await client.leads.import({ leads: Array.from({ length: 120 }, (_, i) => ({ name: `Paged Lead ${String(i).padStart(3, '0')}`, companyName: 'Paging Co' })) });
      const pages: string[] = [];
      const counting = createClient({ baseUrl: t.url, apiKey: key, fetch: (input, init) => { pages.push(String(input)); return fetch(input, init); } });
      const leads = await all(counting.leads.list({ q: 'Paged', limit: 50 }));
      assert.equal(leads.length, 120);
      assert.equal(new Set(leads.map((l) => l.id)).size, 120);
      assert.equal(pages.length, 3);
      assert.ok(pages.slice(1).every((url) => url.includes('cursor=') && url.includes('q=Paged')), pages.join('\n'));
      // Newest first, as the API lists them.
      const created = leads.map((l) => l.createdAt);
      assert.deepEqual(created, [...created].sort().reverse());
    });

    it('starts a run once when the answer to its POST is lost, retrying with the same Idempotency-Key', async () => {
      const { lead, call } = await leadWithCall('Lost Answer');
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key, maxRetryDelayMs: 50 });
      let dropped = 0;
      proxy.seen.length = 0;
      proxy.decide = (req) => (req.method === 'POST' && req.url === '/api/v1/runs' && dropped++ === 0 ? 'drop-answer' : 'pass');
      try {
        const run = await viaProxy.runs.create({ leadId: lead.id, callId: call.id });
        assert.equal(run.leadId, lead.id);
        const posts = proxy.seen.filter((r) => r.method === 'POST');
        assert.equal(posts.length, 2, 'the POST was sent again');
        assert.match(String(posts[0]!.headers['idempotency-key']), UUID);
        assert.equal(posts[1]!.headers['idempotency-key'], posts[0]!.headers['idempotency-key']);
        assert.deepEqual((await all(client.runs.list({ leadId: lead.id }))).map((r) => r.id), [run.id], 'one run, not two');
      } finally {
        proxy.decide = () => 'pass';
      }
      // A second call is a second request: a new key, a new run.
      const again = await client.runs.create({ leadId: lead.id, callId: call.id });
      assert.equal((await all(client.runs.list({ leadId: lead.id }))).length, 2);
      await client.runs.wait(again.id, { timeoutMs: 30_000 });
    });

    it('retries a 429 after its Retry-After, but never repeats a PATCH', async () => {
      const lead = await client.leads.create({ name: 'Rate Limited' });
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key });
      let refused = 0;
      proxy.decide = (req) => (req.method === 'GET' && refused++ === 0
        ? { status: 429, headers: { 'retry-after': '1', 'content-type': 'application/problem+json' }, body: JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, code: 'rate_limited', detail: 'slow down', requestId: 'r1' }) }
        : 'pass');
      try {
        const started = Date.now();
        assert.equal((await viaProxy.leads.get(lead.id)).id, lead.id);
        assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);
        assert.equal(refused, 2);

        proxy.seen.length = 0;
        proxy.decide = () => ({ status: 503, headers: { 'retry-after': '0' }, body: 'maintenance' });
        const error = await rejects(viaProxy.leads.update(lead.id, { name: 'Twice?' }), LeadrunError);
        assert.equal(error.status, 503);
        assert.equal(error.code, 'http_error');
        assert.equal(proxy.seen.length, 1, 'a PATCH has no Idempotency-Key: it is not repeated');

        // Bounded: a server that keeps answering 503 is asked 1 + retries times.
        proxy.seen.length = 0;
        const bounded = createClient({ baseUrl: proxy.url, apiKey: key, retries: 2 });
        assert.equal((await rejects(bounded.leads.get(lead.id), LeadrunError)).status, 503);
        assert.equal(proxy.seen.length, 3);
      } finally {
        proxy.decide = () => 'pass';
      }
      assert.equal(retryAfterMs('120'), 120_000);
      assert.equal(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1)), 30_000);
      assert.equal(retryAfterMs('soon'), null);
    });

    it('waits for a run by its events stream, decides it, and reads its drafts', async () => {
      const { lead, call } = await leadWithCall('Stream Waiter');
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key });
      proxy.seen.length = 0;
      // No worker until the client follows the stream: the run is still QUEUED when the wait begins.
      await worker.stop();
      const run = await viaProxy.runs.create({ leadId: lead.id, callId: call.id });
      const streaming = proxy.arrival((r) => r.url === `/api/v1/runs/${run.id}/events`);
      const waiting = viaProxy.runs.wait(run.id, { timeoutMs: 30_000 });
      await streaming;
      worker = await t.startWorker();
      const rested = await waiting;
      assert.equal(rested.status, 'AWAITING_APPROVAL');
      assert.ok(proxy.seen.some((r) => r.url === `/api/v1/runs/${run.id}/events` && r.headers.accept === 'text/event-stream'), 'the stream was followed');
      assert.ok(proxy.seen.filter((r) => r.url === `/api/v1/runs/${run.id}`).length <= 3, 'and not polled');

      const events = await client.runs.listEvents(run.id);
      assert.equal(events[0]?.type, 'run.queued');
      assert.ok(events.some((e) => e.type === 'run.awaiting_approval'));

      const edited = await client.runs.editDraft(run.id, { subject: 'A pilot for month-end reporting' });
      assert.equal(edited?.emailDraft?.subject, 'A pilot for month-end reporting');
      const versions = await client.runs.drafts(run.id);
      assert.deepEqual(versions.map((v) => v.version), [1, 2]);

      // Rejected with regenerate, it runs again; waited for past its first rest with `until`.
      const regenerating = await client.runs.reject(run.id, { regenerate: true, feedback: 'Shorter, please.' });
      assert.ok(regenerating && ['QUEUED', 'RUNNING'].includes(regenerating.status), regenerating?.status);
      const again = await client.runs.wait(run.id, { until: (r) => r.status === 'AWAITING_APPROVAL' && (r.emailDraft?.version ?? 0) >= 3, timeoutMs: 30_000 });
      assert.equal(again.emailDraft?.version, 3);

      const approved = await client.runs.approve(run.id, { deliver: 'none' });
      assert.equal(approved?.status, 'COMPLETED');
      // No delivery failed: retrying one is refused, with the problem's fields.
      const refused = await rejects(client.runs.retryDelivery(run.id), LeadrunError);
      assert.equal(refused.status, 409);
      assert.equal(refused.code, 'invalid_state');
      assert.equal(refused.title, refused.problem?.title);
      assert.ok(refused.detail.length > 0);
      assert.ok(refused.requestId);
    });

    it('resumes a broken events stream with Last-Event-ID', async () => {
      const { lead, call } = await leadWithCall('Broken Stream');
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key });
      await worker.stop();
      const run = await viaProxy.runs.create({ leadId: lead.id, callId: call.id });
      const streams = () => proxy.seen.filter((r) => r.url === `/api/v1/runs/${run.id}/events`);
      let cut = 0;
      proxy.decide = (req) => (req.url === `/api/v1/runs/${run.id}/events` && cut++ === 0 ? 'cut-after-first-event' : 'pass');
      try {
        const resumed = proxy.arrival((r) => r.url === `/api/v1/runs/${run.id}/events` && r.headers['last-event-id'] !== undefined);
        const waiting = viaProxy.runs.wait(run.id, { timeoutMs: 30_000 });
        await resumed;
        worker = await t.startWorker();
        assert.equal((await waiting).status, 'AWAITING_APPROVAL');
        assert.equal(streams()[0]!.headers['last-event-id'], undefined);
        assert.equal(streams()[1]!.headers['last-event-id'], '1', 'resumed after the one event seen');
      } finally {
        proxy.decide = () => 'pass';
      }
    });

    it('falls back to polling when a proxy refuses event streams, and gives up at timeoutMs', async () => {
      const { lead, call } = await leadWithCall('Poll Waiter');
      const viaProxy = createClient({ baseUrl: proxy.url, apiKey: key });
      proxy.seen.length = 0;
      proxy.decide = (req) => (String(req.headers.accept).includes('text/event-stream') ? { status: 406, body: 'no streams here' } : 'pass');
      try {
        await worker.stop();
        const run = await viaProxy.runs.create({ leadId: lead.id, callId: call.id });
        const polling = proxy.arrival((r) => r.url === `/api/v1/runs/${run.id}` && proxy.seen.filter((s) => s.url === r.url).length >= 2);
        const waiting = viaProxy.runs.wait(run.id, { pollIntervalMs: 50, timeoutMs: 30_000 });
        await polling;
        worker = await t.startWorker();
        const rested = await waiting;
        assert.equal(rested.status, 'AWAITING_APPROVAL');
        assert.equal(proxy.seen.filter((r) => r.url.endsWith('/events')).length, 1, 'the stream was tried once');
        assert.ok(proxy.seen.filter((r) => r.url === `/api/v1/runs/${run.id}`).length >= 2, 'then the run was polled');

        const timedOut = await rejects(viaProxy.runs.wait(run.id, { until: (r) => r.status === 'COMPLETED', pollIntervalMs: 50, timeoutMs: 300 }), LeadrunTimeoutError);
        assert.match(timedOut.message, /300 ms/);
        const controller = new AbortController();
        const aborted = viaProxy.runs.wait(run.id, { until: () => false, pollIntervalMs: 50, signal: controller.signal });
        controller.abort(new Error('stopped by the caller'));
        await assert.rejects(aborted, /stopped by the caller/);
        assert.equal((await rejects(client.runs.cancel(run.id), LeadrunError)).code, 'invalid_state', 'a run at rest cannot be cancelled');
      } finally {
        proxy.decide = () => 'pass';
      }
    });

    it('starts runs in a batch and cancels one', async () => {
      const a = await leadWithCall('Batch One');
      const b = await leadWithCall('Batch Two');
      const batch = await client.runs.batch([{ leadId: a.lead.id, callId: a.call.id }, { leadId: b.lead.id, callId: b.call.id }]);
      assert.deepEqual(batch.map((r) => r.leadId), [a.lead.id, b.lead.id]);
      assert.equal(batch[0]!.batchId, batch[1]!.batchId);
      assert.equal((await all(client.runs.list({ batchId: batch[0]!.batchId ?? undefined }))).length, 2);
      const cancelled = await client.runs.cancel(batch[1]!.id).catch((error: unknown) => error);
      // The worker may have finished it already; either way the answer is the API's, typed.
      if (cancelled instanceof LeadrunError) assert.equal(cancelled.code, 'invalid_state');
      else assert.equal((cancelled as Run).status, 'CANCELLED');
      await client.runs.wait(batch[0]!.id, { timeoutMs: 30_000 });
    });

    it('answers every refusal as a LeadrunError carrying the problem document', async () => {
      const invalid = await rejects(client.leads.create({ name: '', email: 'not an address' }), LeadrunError);
      assert.equal(invalid.status, 400);
      assert.equal(invalid.code, 'invalid_request');
      assert.ok(invalid.errors.some((e) => e.field === 'email'), JSON.stringify(invalid.errors));
      assert.match(String(invalid.requestId), /\S/);
      assert.equal(invalid.problem?.status, 400);
      assert.ok(invalid instanceof Error && invalid.name === 'LeadrunError');

      const stranger = createClient({ baseUrl: t.url, apiKey: 'sk_live_not_a_key' });
      const unauthorized = await rejects(all(stranger.leads.list()), LeadrunError);
      assert.equal(unauthorized.status, 401);
      assert.ok(unauthorized.headers.get('www-authenticate'));

      assert.throws(() => createClient({ baseUrl: '', apiKey: key }), TypeError);
      const unreachable = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: key, retries: 1, maxRetryDelayMs: 10 });
      await assert.rejects(unreachable.leads.count(), TypeError);
    });

    it('manages webhook endpoints and verifies a real delivery, refusing tampered ones', async () => {
      const endpoint = await client.webhooks.create({ url: receiver.url, description: 'CRM sync', events: ['lead.created', 'lead.updated'] });
      assert.match(endpoint.secret, /^whsec_/);
      assert.equal((await client.webhooks.get(endpoint.id)).description, 'CRM sync');
      assert.ok((await client.webhooks.list()).some((e) => e.id === endpoint.id));
      assert.deepEqual((await client.webhooks.update(endpoint.id, { events: ['lead.created'] })).events, ['lead.created']);

      const lead = await client.leads.create({ name: 'Hooked Lead' });
      const received = await receiver.next((r) => r.json?.type === 'lead.created' && r.json.data.id === lead.id);
      const event = await client.webhooks.verify(received.body, received.headers as Record<string, string>, endpoint.secret);
      if (event.type !== 'lead.created') assert.fail(event.type);
      assert.equal(event.data.name, 'Hooked Lead'); // typed as a Lead by the narrowing above
      // A Headers object does as well as Node's header record.
      await client.webhooks.verify(received.body, new Headers(received.headers as Record<string, string>), endpoint.secret);

      const reasonOf = async (body: string, headers: ReceivedWebhook['headers'], secret: string, now?: Date) =>
        (await rejects(client.webhooks.verify(body, headers as Record<string, string>, secret, now ? { now } : {}), WebhookVerificationError)).reason;
      assert.equal(await reasonOf(received.body.replace('Hooked Lead', 'Hacked Lead'), received.headers, endpoint.secret), 'invalid_signature');
      assert.equal(await reasonOf(received.body, received.headers, `whsec_${Buffer.alloc(32, 7).toString('base64')}`), 'invalid_signature');
      const sentAt = Number(received.headers['webhook-timestamp']) * 1000;
      assert.equal(await reasonOf(received.body, received.headers, endpoint.secret, new Date(sentAt + 6 * 60_000)), 'timestamp_out_of_tolerance');
      assert.equal(await reasonOf(received.body, { ...received.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600) }, endpoint.secret), 'timestamp_out_of_tolerance');
      assert.equal(await reasonOf(received.body, { ...received.headers, 'webhook-signature': undefined }, endpoint.secret), 'missing_headers');
      assert.equal(await reasonOf(received.body, { ...received.headers, 'webhook-signature': 'v1,%%%' }, endpoint.secret), 'invalid_signature');

      // The log, a replay, a test event and a rolled secret.
      const deliveries = await all(client.webhooks.deliveries(endpoint.id));
      assert.ok(deliveries.length >= 1);
      const replay = await client.webhooks.retryDelivery(endpoint.id, deliveries[0]!.id);
      assert.notEqual(replay.id, deliveries[0]!.id);
      const test = await client.webhooks.test(endpoint.id);
      const testEvent = await receiver.next((r) => r.json?.type === 'webhook.test');
      assert.equal((await client.webhooks.verify(testEvent.body, testEvent.headers as Record<string, string>, endpoint.secret)).type, 'webhook.test');
      assert.match(test.id, UUID);
      const rolled = await client.webhooks.rotateSecret(endpoint.id);
      assert.notEqual(rolled.secret, endpoint.secret);
      // During the roll-over both secrets sign: either one verifies.
      await client.webhooks.test(endpoint.id);
      const both = await receiver.next((r) => r.json?.type === 'webhook.test' && String(r.headers['webhook-signature']).includes(' '));
      for (const secret of [endpoint.secret, rolled.secret]) await client.webhooks.verify(both.body, both.headers as Record<string, string>, secret);
      await client.webhooks.delete(endpoint.id);
      assert.equal((await rejects(client.webhooks.get(endpoint.id), LeadrunError)).status, 404);
    });
  });
}

// GET /api/v1/runs/{id}/events: the run's event log as JSON, and live as Server-Sent Events until the run rests.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, startRun } from './support.ts';

interface SseMessage {
  id: string | null;
  event: string;
  data: any;
}

/** Reads a text/event-stream response message by message. */
async function* readSse(res: Response): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n').filter((l) => !l.startsWith(':'));
      if (lines.length === 0) continue;
      const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? null;
      yield { id: field('id'), event: field('event') ?? 'message', data: JSON.parse(field('data') ?? 'null') };
    }
  }
}

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    let otherKey: string;
    let lead: any;
    let call: any;

    before(async () => {
      t = await startTestApp(kind);
      const A = await t.workspace('pro');
      const B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      otherKey = (await t.key(B.id)).key;
      lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines' });
      call = await createCall(t, key, lead.id);
    });
    after(() => t?.close());

    const stream = (runId: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/api/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers } });

    it('streams a queued run live, step by step, and ends once it awaits approval', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      const res = await stream(run.id);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.ok(res.headers.get('x-request-id'));
      const seen: SseMessage[] = [];
      let worker: Awaited<ReturnType<TestApp['startWorker']>> | null = null;
      for await (const message of readSse(res)) {
        seen.push(message);
        // Only once the stream has shown the queued run does a worker start: what follows arrives live.
        if (message.event === 'run.queued') worker = await t.startWorker();
      }
      await worker?.stop();
      const types = seen.map((m) => m.event);
      assert.deepEqual(types, [
        'run.queued',
        'step.started', 'step.completed', 'step.started', 'step.completed',
        'step.started', 'step.completed', 'step.started', 'step.completed',
        'run.awaiting_approval', 'end',
      ]);
      assert.deepEqual(seen.filter((m) => m.event === 'step.completed').map((m) => m.data.node), ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER']);
      for (const m of seen.filter((x) => x.event === 'step.completed')) {
        assert.equal(m.data.attempt, 1);
        assert.equal(m.data.engine, 'offline');
        assert.equal(typeof m.data.durationMs, 'number');
        assert.equal(m.id, String(m.data.id));
      }
      const ids = seen.filter((m) => m.id).map((m) => Number(m.id));
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids increase');
      assert.deepEqual(seen.at(-1)?.data, { status: 'AWAITING_APPROVAL' });
    });

    it('lists the same events as JSON, and resumes after Last-Event-ID or ?after=', async () => {
      const worker = await t.startWorker();
      const run = await startRun(t, key, lead.id, call.id);
      await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
      await worker.stop();
      const all = await t.api('GET', `/api/v1/runs/${run.id}/events`, { key });
      assert.equal(all.status, 200, all.text);
      assert.equal(all.json.data.length, 10);
      assert.deepEqual(Object.keys(all.json.data[0]).sort(), ['at', 'attempt', 'durationMs', 'engine', 'error', 'id', 'model', 'node', 'type', 'usage']);
      const fifth = all.json.data[4].id;
      const later = await t.api('GET', `/api/v1/runs/${run.id}/events?after=${fifth}`, { key });
      assert.deepEqual(later.json.data, all.json.data.slice(5));
      const resumed: SseMessage[] = [];
      for await (const m of readSse(await stream(run.id, { 'last-event-id': String(fifth) }))) resumed.push(m);
      assert.deepEqual(resumed.filter((m) => m.id).map((m) => Number(m.id)), all.json.data.slice(5).map((e: any) => e.id));
      assert.equal(resumed.at(-1)?.event, 'end');
    });

    it('answers 404 for an unknown, malformed or foreign run, as JSON and as a stream', async () => {
      const run = await startRun(t, key, lead.id, call.id);
      assertProblem(await t.api('GET', `/api/v1/runs/${randomUUID()}/events`, { key }), 404, 'not_found');
      assertProblem(await t.api('GET', '/api/v1/runs/nope/events', { key }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: otherKey }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events`, { key: otherKey, headers: { accept: 'text/event-stream' } }), 404, 'not_found');
      assertProblem(await t.api('GET', `/api/v1/runs/${run.id}/events?after=-1`, { key }), 400, 'invalid_request');
    });

    it('ends open streams promptly when the server shuts down', async () => {
      const own = await startTestApp(kind);
      try {
        const A = await own.workspace('pro');
        const k = (await own.key(A.id)).key;
        const l = await createLead(own, k);
        const c = await createCall(own, k, l.id);
        const run = await startRun(own, k, l.id, c.id); // no worker: the run stays QUEUED and the stream stays open
        const res = await fetch(`${own.url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' } });
        const messages = readSse(res);
        assert.equal((await messages.next()).value?.event, 'run.queued');
        const began = performance.now();
        const closing = own.app.close();
        for await (const _ of messages) { /* drain until the server ends the stream */ }
        await closing;
        assert.ok(performance.now() - began < 5_000, 'the stream did not hold the shutdown');
      } finally {
        await own.close().catch(() => {});
      }
    });
  });
}

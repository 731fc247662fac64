// OpenTelemetry: with an OTLP endpoint set, every step attempt of a run is a span in the run's own trace, and a
// model's answer is a `chat {model}` span with the GenAI semantic-convention attributes.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Engine } from '../../src/agent/engine.ts';
import { startTelemetry, type Telemetry } from '../../src/observability/telemetry.ts';
import { startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { testOfflineEngine } from '../support/cpu.ts';

const offlineEngine = testOfflineEngine();

interface ExportedSpan {
  name: string;
  traceId: string;
  attributes: Record<string, unknown>;
  status?: { code?: number };
}

/** A collector that keeps every span posted to /v1/traces (OTLP/HTTP with JSON). */
function startCollector() {
  const spans: ExportedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body);
        for (const rs of parsed.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              const attributes: Record<string, unknown> = {};
              for (const a of span.attributes ?? []) attributes[a.key] = Object.values(a.value ?? {})[0];
              spans.push({ name: span.name, traceId: span.traceId, attributes, status: span.status });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise<{ url: string; spans: ExportedSpan[]; close(): Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${address.port}`, spans, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

describe('run traces (pglite)', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let telemetry: Telemetry;
  let t: TestApp;
  let key: string;

  before(async () => {
    collector = await startCollector();
    telemetry = await startTelemetry(collector.url, 'leadrun-test');
    t = await startTestApp('pglite');
    const ws = await t.workspace('pro');
    key = (await t.key(ws.id)).key;
  });
  after(async () => {
    await t?.close();
    await telemetry?.shutdown();
    await collector?.close();
  });

  async function runOnce(engine: Engine): Promise<{ id: string; traceId: string }> {
    const worker = await t.startWorker({ engine, requestModel: 'gpt-test' });
    const lead = (await t.api('POST', '/api/v1/leads', { key, body: { name: 'Ada Lovelace', companyName: 'Analytical Engines' } })).json;
    const call = (await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body: { transcript: 'Ada: Reporting takes four days.' } })).json;
    const run = (await t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: call.id } })).json;
    await waitForRun(t, key, run.id, (r) => r.status === 'AWAITING_APPROVAL');
    await worker.stop();
    const row = await t.database.db.selectFrom('runs').select('trace_id').where('id', '=', run.id).executeTakeFirstOrThrow();
    await telemetry.shutdown(); // flushes what the batch processor holds
    telemetry = await startTelemetry(collector.url, 'leadrun-test');
    return { id: run.id, traceId: row.trace_id };
  }

  it('exports one span per step attempt, in the run\'s own trace', async () => {
    const run = await runOnce(offlineEngine);
    const steps = collector.spans.filter((s) => s.attributes['leadrun.run.id'] === run.id);
    assert.deepEqual(steps.map((s) => s.name).sort(), ['leadrun.step ANALYSIS', 'leadrun.step RESEARCH', 'leadrun.step STRATEGY', 'leadrun.step WRITER']);
    for (const span of steps) {
      assert.equal(span.traceId.toLowerCase(), run.traceId, 'the span is in the run\'s trace');
      assert.equal(span.attributes['leadrun.step.attempt'], 1);
      assert.equal(span.attributes['leadrun.engine'], 'offline');
    }
    assert.equal(collector.spans.filter((s) => s.name.startsWith('chat ')).length, 0, 'no model, no model-call spans');
  });

  it('records a model\'s answer as a GenAI chat span with model and token usage', async () => {
    const usage = { inputTokens: 120, outputTokens: 45, totalTokens: 165 };
    const asModel = <T>(result: Promise<{ output: T }>) => result.then(({ output }) => ({
      output: { ...(output as object), engine: 'model' } as T, model: 'gpt-test-2026', promptVersion: 'test-v1', usage,
    }));
    const modelEngine: Engine = {
      name: 'model',
      analyse: (ctx) => asModel(offlineEngine.analyse(ctx)),
      strategise: (ctx) => asModel(offlineEngine.strategise(ctx)),
      write: (ctx) => asModel(offlineEngine.write(ctx)),
    };
    const run = await runOnce(modelEngine);
    const chats = collector.spans.filter((s) => s.name === 'chat gpt-test-2026' && s.traceId.toLowerCase() === run.traceId);
    assert.equal(chats.length, 3, 'ANALYSIS, STRATEGY and WRITER each asked the model');
    for (const span of chats) {
      assert.equal(span.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(span.attributes['gen_ai.request.model'], 'gpt-test');
      assert.equal(span.attributes['gen_ai.response.model'], 'gpt-test-2026');
      assert.equal(Number(span.attributes['gen_ai.usage.input_tokens']), 120);
      assert.equal(Number(span.attributes['gen_ai.usage.output_tokens']), 45);
    }
    const total = await t.api('GET', `/api/v1/runs/${run.id}`, { key });
    assert.equal(total.json.data.tokensUsed, 3 * 165, 'the run counts every token its steps spent');
    const analysis = total.json.data.steps.find((s: any) => s.node === 'ANALYSIS');
    assert.deepEqual(analysis.usage, usage);
    assert.equal(analysis.model, 'gpt-test-2026');
    assert.equal(analysis.promptVersion, 'test-v1');
  });
});

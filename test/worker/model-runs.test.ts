// Whole runs on the model engine: the worker, the real AI SDK client and a local OpenAI-compatible endpoint on
// loopback, with a company website served locally for RESEARCH. Retries, permanent failures, the token budget and
// the grounding guard, as a user of the API sees them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createModelEngine } from '../../src/agent/engines/model.ts';
import { startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { chat, rateLimited, status, startOpenAIServer, messageText, type OpenAIServer } from '../support/openai-server.ts';
import { ANSWERS, answer, COMPANY_PAGE, FACT, stepOf, USAGE } from '../support/model-answers.ts';
import { createProspect, startRunViaApi, startWebsite, type Website } from './support.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

describe('runs on the model engine (pglite)', () => {
  let t: TestApp;
  let llm: OpenAIServer;
  let site: Website;
  let key: string;

  before(async () => {
    llm = await startOpenAIServer();
    site = await startWebsite(COMPANY_PAGE);
    t = await startTestApp('pglite');
    key = (await t.key((await t.workspace('pro')).id)).key;
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await llm?.close();
  });

  const engine = (timeoutMs = 5_000) => createModelEngine({ baseUrl: llm.baseUrl, apiKey: 'sk-test-secret-key', model: 'gpt-test', timeoutMs });

  async function run(options: { tokenBudget?: number; timeoutMs?: number } = {}) {
    const worker = await t.startWorker({ engine: engine(options.timeoutMs), allowPrivateHosts: true, requestModel: 'gpt-test', ...(options.tokenBudget ? { tokenBudget: options.tokenBudget } : {}) });
    try {
      const runId = await startRunViaApi(t, key, await createProspect(t, key, site.url));
      return await waitForRun(t, key, runId, atRest, 30_000);
    } finally {
      await worker.stop();
    }
  }

  it('writes a draft that cites the research, with model, prompt version and tokens on every step', async () => {
    llm.setDefault(answer);
    const done = await run();
    assert.equal(done.status, 'AWAITING_APPROVAL', JSON.stringify(done.steps.map((s: any) => s.error)));
    assert.ok(done.emailDraft.body.includes(FACT), 'the draft cites the research');
    assert.equal(done.steps[0].output.facts.some((f: any) => f.text === FACT), true);
    for (const step of done.steps.slice(1)) {
      assert.equal(step.engine, 'model');
      assert.equal(step.model, 'gpt-test-2026');
      assert.match(step.promptVersion, /^(analysis|strategy|writer)-v\d+$/);
      assert.deepEqual(step.usage, { inputTokens: 400, outputTokens: 100, totalTokens: 500 });
      assert.equal(step.output.engine, 'model');
    }
    assert.deepEqual(done.steps[3].output.grounding, { grounded: true, rewritten: false, unsupported: [] });
    assert.equal(done.tokensUsed, 1500);
    const writer = llm.requests.filter((r) => stepOf(r) === 'writer').at(-1)!;
    assert.ok(messageText(writer, 'user').includes(FACT), 'the writer was given the research');
  });

  it('retries a 429 and a malformed answer, and the run still completes', async () => {
    let analysisCalls = 0;
    llm.setDefault((request) => {
      if (stepOf(request) !== 'analysis') return answer(request);
      analysisCalls += 1;
      if (analysisCalls === 1) return rateLimited(0);
      if (analysisCalls === 2) return chat('this is not JSON at all', { usage: USAGE });
      return answer(request);
    });
    const done = await run();
    assert.equal(done.status, 'AWAITING_APPROVAL');
    const analysis = done.steps.find((s: any) => s.node === 'ANALYSIS');
    assert.equal(analysis.attempts, 3);
    const events = (await t.api('GET', `/api/v1/runs/${done.id}/events`, { key })).json.data.filter((e: any) => e.node === 'ANALYSIS');
    const retries = events.filter((e: any) => e.type === 'step.retrying');
    assert.equal(retries.length, 2);
    assert.match(retries[0].error, /429/);
    assert.match(retries[1].error, /schema|JSON/i);
    assert.equal(retries[1].deferred, false, 'a failed attempt is no step put off');
    assert.equal(done.tokensUsed, 500 /* the malformed answer */ + 3 * 500 /* ANALYSIS, STRATEGY, WRITER */, 'every token spent is counted');
  });

  it('fails a step at once when the endpoint refuses the credentials, without leaking the key', async () => {
    llm.setDefault((request) => (stepOf(request) === 'strategy' ? status(401, { message: 'Incorrect API key provided: sk-test-secret-key' }) : answer(request)));
    const done = await run();
    assert.equal(done.status, 'FAILED');
    assert.deepEqual(done.steps.map((s: any) => s.status), ['COMPLETED', 'COMPLETED', 'FAILED', 'SKIPPED']);
    const strategy = done.steps[2];
    assert.equal(strategy.attempts, 1, 'a refused key is not retried');
    assert.match(strategy.error, /401/);
    assert.ok(!JSON.stringify(done).includes('sk-test-secret-key'), 'the API key never reaches a run');
    assert.ok(done.completedAt);
  });

  it('fails a step after three attempts at a failing endpoint, with a readable error', async () => {
    llm.setDefault((request) => (stepOf(request) === 'writer' ? status(503, { message: 'overloaded' }) : answer(request)));
    const done = await run();
    assert.equal(done.status, 'FAILED');
    assert.equal(done.steps[3].status, 'FAILED');
    assert.equal(done.steps[3].attempts, 3);
    assert.match(done.steps[3].error, /503/);
    assert.match(done.error, /^WRITER failed: /);
    assert.equal(done.emailDraft, null);
  });

  it('gives up on a model that does not answer in time', async () => {
    llm.setDefault((request) => (stepOf(request) === 'analysis' ? { kind: 'hang' } : answer(request)));
    const done = await run({ timeoutMs: 200 });
    assert.equal(done.status, 'FAILED');
    assert.equal(done.steps[1].attempts, 3);
    assert.match(done.steps[1].error, /did not answer within/);
  });

  it('stops at the run\'s token budget', async () => {
    llm.setDefault(answer);
    const done = await run({ tokenBudget: 900 });
    assert.equal(done.status, 'FAILED');
    assert.deepEqual(done.steps.map((s: any) => s.status), ['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED']);
    assert.match(done.steps[3].error, /budget/i);
    assert.equal(done.steps[3].attempts, 1);
  });

  it('rewrites a draft that invents a claim about the company, once', async () => {
    let writes = 0;
    llm.setDefault((request) => {
      if (stepOf(request) !== 'writer') return answer(request);
      writes += 1;
      const invented = { subject: 'Your Berlin office', body: 'Hi Ada,\n\nI hear your 300-person Berlin office is growing fast.\n\nBest,\nSam' };
      return chat(writes === 1 ? invented : ANSWERS.writer, { usage: USAGE });
    });
    const done = await run();
    assert.equal(done.status, 'AWAITING_APPROVAL');
    assert.equal(writes, 2);
    const grounding = done.steps[3].output.grounding;
    assert.equal(grounding.rewritten, true);
    assert.equal(grounding.grounded, true);
    assert.ok(!done.emailDraft.body.includes('Berlin'));
    assert.deepEqual(done.steps[3].usage, { inputTokens: 800, outputTokens: 200, totalTokens: 1000 }, 'both calls are counted');
  });
});

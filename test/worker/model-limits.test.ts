// Runs bound only by the model provider: the worker with the model engine and its call limiter, against a local
// OpenAI-compatible endpoint that takes its time and refuses requests beyond its rate with 429 + Retry-After. At
// most LLM_MAX_CONCURRENCY calls are in flight, a Retry-After holds every call back (in every worker process), and
// a step the provider refused is put off without counting as an attempt: every run completes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createModelCallLimiter } from '../../src/agent/engines/limiter.ts';
import { createModelEngine } from '../../src/agent/engines/model.ts';
import { systemClock } from '../../src/clock.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, type TestApp } from '../helpers.ts';
import { answer, COMPANY_PAGE } from '../support/model-answers.ts';
import { rateLimited, startOpenAIServer, type OpenAIServer, type OpenAIServerOptions, type RecordedRequest } from '../support/openai-server.ts';
import { assertFinishedOnce, createProspect, eventually, startRunViaApi, startWebsite, type Website } from './support.ts';

for (const kind of BACKENDS) {
  describe(`runs bound by the model provider (${kind})`, () => {
    let t: TestApp;
    let site: Website;
    let key: string;
    const servers: OpenAIServer[] = [];

    before(async () => {
      site = await startWebsite(COMPANY_PAGE);
      t = await startTestApp(kind);
      key = (await t.key((await t.workspace('pro')).id)).key;
    });
    after(async () => {
      await t?.close();
      await site?.close();
      for (const server of servers) await server.close();
    });

    /** A model endpoint of its own for each test: its limit and pauses start afresh. */
    async function endpoint(options: OpenAIServerOptions): Promise<OpenAIServer> {
      const llm = await startOpenAIServer(options);
      servers.push(llm);
      llm.setDefault(answer);
      return llm;
    }

    /** A worker as `leadrun worker` makes it: a limiter of its own on the shared database; the key tells workers apart. */
    function startWorker(llm: OpenAIServer, max: number, apiKey = 'sk-test-worker-a') {
      const limiter = createModelCallLimiter({ db: t.database.db, clock: systemClock, baseUrl: llm.baseUrl, model: 'gpt-test', max, logger: silentLogger });
      const engine = createModelEngine({ baseUrl: llm.baseUrl, apiKey, model: 'gpt-test', timeoutMs: 5_000, limiter });
      return t.startWorker({ engine, concurrency: max, allowPrivateHosts: true });
    }

    async function startRuns(count: number): Promise<string[]> {
      const runIds: string[] = [];
      for (let i = 0; i < count; i++) runIds.push(await startRunViaApi(t, key, await createProspect(t, key, site.url)));
      return runIds;
    }

    /** Lets the workers work until every run is at rest, stops them, and asserts each run finished once, each step at its first attempt. */
    async function settle(runIds: string[], workers: JobRunner[]): Promise<void> {
      try {
        await eventually('every run to reach AWAITING_APPROVAL or FAILED', async () => {
          const rows = await t.database.db.selectFrom('runs').select('status').where('id', 'in', runIds).execute();
          return rows.every((r) => r.status === 'AWAITING_APPROVAL' || r.status === 'FAILED');
        }, 30_000, 50);
      } finally {
        for (const worker of workers) await worker.stop();
      }
      for (const runId of runIds) await assertFinishedOnce(t.database.db, runId);
    }

    const retries = (runIds: string[]) => t.database.db.selectFrom('run_events').select(['node', 'error'])
      .where('run_id', 'in', runIds).where('type', '=', 'step.retrying').execute();

    /** Requests that arrived between `from` and `to` (Date.now() values). */
    const arrivedBetween = (requests: RecordedRequest[], from: number, to: number) => requests.filter((r) => r.at > from && r.at < to);

    it('has at most LLM_MAX_CONCURRENCY calls in flight, however many runs the worker holds', async () => {
      const llm = await endpoint({ delayMs: 200 });
      const runIds = await startRuns(6);
      await settle(runIds, [await startWorker(llm, 2)]);
      assert.equal(llm.requests.length, 18, 'three calls a run');
      assert.equal(llm.maxInFlight, 2);
    });

    it('starts no call before a 429\'s Retry-After ends, and puts the refused step off without counting an attempt', async () => {
      const llm = await endpoint({ delayMs: 100 });
      llm.reply(rateLimited(1));
      const runIds = await startRuns(4);
      await settle(runIds, [await startWorker(llm, 4)]); // every step took one attempt
      const refused = llm.requests[0]!;
      assert.deepEqual(arrivedBetween(llm.requests, refused.at + 300, refused.at + 900), [], 'no call during the pause');
      const retried = await retries(runIds);
      assert.equal(retried.length, 1, 'one step put off, for the one 429');
      assert.match(retried[0]!.error!, /429 Too Many Requests.*retry after 1 s/);
    });

    it('completes every run against a provider that refuses beyond its rate, putting off only the refused steps', async () => {
      const llm = await endpoint({ delayMs: 100, rateLimit: { requests: 3, windowMs: 500 } });
      const runIds = await startRuns(4);
      await settle(runIds, [await startWorker(llm, 6)]);
      assert.ok(llm.refusedAt.length > 0, 'the provider refused some calls');
      assert.equal((await retries(runIds)).length, llm.refusedAt.length, 'one step put off per 429, none retried otherwise');
      for (const refusal of llm.refusedAt) {
        assert.deepEqual(arrivedBetween(llm.requests, refusal + 300, refusal + 900), [], 'no call while the endpoint asked to wait');
      }
    });

    it('shares a Retry-After between two worker processes', { skip: kind !== 'postgres' && 'two processes share a PostgreSQL database' }, async () => {
      const llm = await endpoint({ delayMs: 200 });
      llm.reply(rateLimited(2));
      const runIds = await startRuns(12);
      await settle(runIds, [await startWorker(llm, 4, 'sk-test-worker-a'), await startWorker(llm, 4, 'sk-test-worker-b')]);
      const refused = llm.requests[0]!;
      // The other process reads the pause within a second, and calls no more until it ends.
      assert.deepEqual(arrivedBetween(llm.requests, refused.at + 1_300, refused.at + 1_900), [], 'no call from either during the pause');
      for (const worker of ['a', 'b']) {
        const calls = llm.requests.filter((r) => r.headers.authorization === `Bearer sk-test-worker-${worker}` && r.at > refused.at + 1_900);
        assert.ok(calls.length > 0, `worker ${worker} still had calls to make after the pause`);
      }
      assert.equal((await retries(runIds)).length, 1);
    });
  });
}

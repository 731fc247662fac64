// Runs bound only by the model provider: the worker with the model engine and its call limiter, against a local
// OpenAI-compatible endpoint that takes its time and refuses requests beyond its rate with 429 + Retry-After. At
// most LLM_MAX_CONCURRENCY calls are in flight, a Retry-After holds every call back (in every worker process), and
// a step the provider refused is put off without counting as an attempt: every run completes. But not for ever: a
// step refused for longer than LLM_RATE_LIMIT_GIVE_UP_MINUTES fails its run, and a 429 saying the quota is used up
// (insufficient_quota) fails the step at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createModelCallLimiter, endpointKey } from '../../src/agent/engines/limiter.ts';
import { createModelEngine } from '../../src/agent/engines/model.ts';
import { systemClock } from '../../src/clock.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, type TestApp } from '../helpers.ts';
import { answer, COMPANY_PAGE } from '../support/model-answers.ts';
import { rateLimited, startOpenAIServer, status, type OpenAIServer, type OpenAIServerOptions, type RecordedRequest } from '../support/openai-server.ts';
import { assertFinishedOnce, createProspect, eventually, runReaches, startRunViaApi, startWebsite, stepsOf, type Website } from './support.ts';

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
    function startWorker(llm: OpenAIServer, max: number, apiKey = 'sk-test-worker-a', giveUpAfterMs?: number) {
      const limiter = createModelCallLimiter({ db: t.database.db, clock: systemClock, baseUrl: llm.baseUrl, model: 'gpt-test', max, logger: silentLogger });
      const engine = createModelEngine({ baseUrl: llm.baseUrl, apiKey, model: 'gpt-test', timeoutMs: 5_000, limiter });
      return t.startWorker({ engine, concurrency: max, allowPrivateHosts: true, ...(giveUpAfterMs !== undefined ? { giveUpAfterMs } : {}) });
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

    /**
     * When the endpoint's pause ends (a Date.now() value), as the worker that heard its one 429 shared it: the moment it
     * heard it plus the Retry-After. The moment the endpoint sent the 429 is earlier by as long as a loaded machine takes.
     */
    async function pauseEnd(llm: OpenAIServer): Promise<number> {
      const row = await t.database.db.selectFrom('model_endpoints').select('paused_until')
        .where('endpoint', '=', endpointKey(llm.baseUrl, 'gpt-test')).executeTakeFirstOrThrow();
      return row.paused_until!.getTime();
    }

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
      llm.reply(rateLimited(2));
      const runIds = await startRuns(4);
      await settle(runIds, [await startWorker(llm, 4)]); // every step took one attempt
      // From a second after the 429 was heard: a call let through before may arrive that late on a busy machine, but none
      // is started until the 2 s are over.
      const end = await pauseEnd(llm);
      assert.deepEqual(arrivedBetween(llm.requests, end - 1_000, end), [], 'no call during the pause');
      const retried = await retries(runIds);
      assert.equal(retried.length, 1, 'one step put off, for the one 429');
      assert.match(retried[0]!.error!, /^waiting on the model provider, not counted as an attempt \(put off since .*\): .*429 Too Many Requests.*retry after 2 s/);
      const marks = await t.database.db.selectFrom('run_steps').select('put_off_since').where('run_id', 'in', runIds).execute();
      assert.ok(marks.every((m) => m.put_off_since === null), 'a completed step keeps no put-off mark');
    });

    it('fails the run, naming the refusals, once an endpoint that always answers 429 has put a step off past the limit', async () => {
      const llm = await endpoint({});
      llm.setDefault(rateLimited(1));
      const [runId] = await startRuns(1);
      const worker = await startWorker(llm, 2, 'sk-test-worker-a', 1_500); // the limit: 1.5 s instead of an hour
      try {
        const run = await runReaches(t.database.db, runId!, 'FAILED', 20_000);
        assert.match(run.error!, /^ANALYSIS failed: the model endpoint has refused its calls for \d+ s \(since .*; the limit is 2 s, LLM_RATE_LIMIT_GIVE_UP_MINUTES\)\. Its last answer: .*429 Too Many Requests/);
      } finally {
        await worker.stop();
      }
      const steps = await stepsOf(t.database.db, runId!);
      assert.deepEqual(steps.map((s) => [s.node, s.status, s.attempts]), [
        ['RESEARCH', 'COMPLETED', 1], ['ANALYSIS', 'FAILED', 1], ['STRATEGY', 'SKIPPED', 0], ['WRITER', 'SKIPPED', 0],
      ]);
      assert.match(steps[1]!.error!, /refused its calls/);
      assert.ok(llm.requests.length >= 2 && llm.requests.length <= 4, `called again after each pause, then gave up (${llm.requests.length} calls)`);
      const events = await t.database.db.selectFrom('run_events').select(['type', 'node', 'error']).where('run_id', '=', runId!).orderBy('seq').execute();
      const putOff = events.filter((e) => e.type === 'step.retrying');
      assert.equal(putOff.length, llm.requests.length - 1, 'every refusal but the last put the step off, and said so');
      for (const event of putOff) assert.match(event.error!, /^waiting on the model provider/);
      assert.deepEqual(events.slice(-2).map((e) => e.type), ['step.failed', 'run.failed']);
      const shown = await t.api('GET', `/api/v1/runs/${runId}`, { key });
      assert.equal(shown.json.data.status, 'FAILED');
      assert.match(shown.json.data.error, /refused its calls/);
    });

    it('fails the step at once on a 429 that says the quota is used up (insufficient_quota), without putting it off', async () => {
      const llm = await endpoint({});
      llm.setDefault(status(429, {
        body: { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } },
        headers: { 'retry-after': '1' },
      }));
      const [runId] = await startRuns(1);
      const worker = await startWorker(llm, 2);
      try {
        const run = await runReaches(t.database.db, runId!, 'FAILED', 10_000);
        assert.match(run.error!, /^ANALYSIS failed: the model endpoint answered 429 Too Many Requests: You exceeded your current quota.*insufficient_quota/);
      } finally {
        await worker.stop();
      }
      assert.equal(llm.requests.length, 1, 'no second call: another attempt cannot help');
      assert.deepEqual(await retries([runId!]), [], 'not put off, not retried');
    });

    it('still puts off a 429 whose body only looks like a quota error (a rate limit named otherwise, not JSON, 1 MiB, nested 10,000 deep)', async () => {
      const llm = await endpoint({ delayMs: 50 });
      llm.reply(
        status(429, { body: { error: { message: 'insufficient_quota', type: 'requests', code: 'rate_limit_exceeded' } }, headers: { 'retry-after': '1' } }),
        status(429, { body: '{"error": {"code": "insufficient_quota"', headers: { 'retry-after': '1' } }),
        // A body over 64 KiB is not parsed at all: 1 MiB that would say insufficient_quota is a rate limit like any other.
        status(429, { body: { error: { code: 'insufficient_quota', message: 'x'.repeat(1024 * 1024) } }, headers: { 'retry-after': '1' } }),
        // Under 64 KiB, but nested as deep as it can be: parsed (or refused) in one pass, and not a quota error.
        status(429, { body: `${'{"error":'.repeat(6_000)}"insufficient_quota"${'}'.repeat(6_000)}`, headers: { 'retry-after': '1' } }),
      );
      const runIds = await startRuns(1);
      await settle(runIds, [await startWorker(llm, 1)]);
      assert.equal((await retries(runIds)).length, 4, 'every refusal put the step off');
    });

    it('completes every run against a provider that refuses beyond its rate, putting off only the refused steps', async () => {
      // One call a second, none saved up: the runs' calls come closer together than that however slow the machine,
      // so some are refused (at three per half second, a loaded machine once spread them out enough that none were).
      const llm = await endpoint({ delayMs: 100, rateLimit: { requests: 1, windowMs: 1_000 } });
      const runIds = await startRuns(4);
      await settle(runIds, [await startWorker(llm, 6)]);
      assert.ok(llm.refusedAt.length > 0, 'the provider refused some calls');
      assert.equal((await retries(runIds)).length, llm.refusedAt.length, 'one step put off per 429, none retried otherwise');
      // Each 429 says 1 s. From half a second after it: a call started before it was heard may arrive that late.
      for (const refusal of llm.refusedAt) {
        assert.deepEqual(arrivedBetween(llm.requests, refusal + 500, refusal + 950), [], 'no call while the endpoint asked to wait');
      }
    });

    it('shares a Retry-After between two worker processes', { skip: kind !== 'postgres' && 'two processes share a PostgreSQL database' }, async () => {
      const llm = await endpoint({ delayMs: 200 });
      llm.reply(rateLimited(3));
      const runIds = await startRuns(12);
      await settle(runIds, [await startWorker(llm, 4, 'sk-test-worker-a'), await startWorker(llm, 4, 'sk-test-worker-b')]);
      // The other process reads the pause within a second, and calls no more until it ends; half a second more for a
      // call it started just before to arrive on a loaded machine.
      const end = await pauseEnd(llm);
      assert.deepEqual(arrivedBetween(llm.requests, end - 1_500, end), [], 'no call from either during the pause');
      for (const worker of ['a', 'b']) {
        const calls = llm.requests.filter((r) => r.headers.authorization === `Bearer sk-test-worker-${worker}` && r.at > end);
        assert.ok(calls.length > 0, `worker ${worker} still had calls to make after the pause`);
      }
      assert.equal((await retries(runIds)).length, 1);
    });
  });
}

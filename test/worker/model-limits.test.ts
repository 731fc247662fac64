// Runs bound only by the model provider: the worker with the model engine and its call limiter, against a local
// OpenAI-compatible endpoint that takes its time and refuses requests beyond its rate with 429 + Retry-After. At
// most LLM_MAX_CONCURRENCY calls are in flight, a Retry-After holds every call back (in every worker process), and
// a step the provider refused is put off without counting as an attempt: every run completes. But not for ever: a
// step refused for longer than LLM_RATE_LIMIT_GIVE_UP_MINUTES fails its run, and a 429 saying the quota is used up
// (insufficient_quota) fails the step at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { createModelCallLimiter, endpointKey, type ModelCallLimiter } from '../../src/agent/engines/limiter.ts';
import { createModelEngine } from '../../src/agent/engines/model.ts';
import { systemClock } from '../../src/clock.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, type TestApp } from '../helpers.ts';
import { answer, COMPANY_PAGE } from '../support/model-answers.ts';
import { rateLimited, startOpenAIServer, status, type OpenAIServer, type OpenAIServerOptions } from '../support/openai-server.ts';
import { assertFinishedOnce, createProspect, eventually, runReaches, startRunViaApi, startWebsite, stepsOf, type Website } from './support.ts';

/**
 * What a worker's limiter did, as its engine saw it: when each call was given its slot, and when each 429 was heard,
 * with the wait its Retry-After asked for; and when its statements came back saying the endpoint is paused, and until
 * when. Kept in the test's process, on its one clock: when the provider's server saw a call says nothing sound of when
 * the worker started it, on a machine that can hold either back for a second.
 */
interface Slots {
  granted: number[];
  heard429: Array<{ at: number; retryAfterMs: number | null }>;
  pausesRead: Array<{ at: number; until: number }>;
}

const newSlots = (): Slots => ({ granted: [], heard429: [], pausesRead: [] });

/** The limiter's database, keeping in `slots` each pause its statements read (they return `paused_until`). */
function readingPauses(slots: Slots): KyselyPlugin {
  return {
    transformQuery: ({ node }) => node,
    async transformResult({ result }) {
      for (const row of result.rows as Array<{ paused_until?: Date | null }>) {
        if (row.paused_until) slots.pausesRead.push({ at: Date.now(), until: row.paused_until.getTime() });
      }
      return result;
    },
  };
}

function recording(limiter: ModelCallLimiter, slots: Slots): ModelCallLimiter {
  return {
    async acquire(signal) {
      const slot = await limiter.acquire(signal);
      slots.granted.push(Date.now());
      return {
        release(outcome) {
          if (typeof outcome === 'object') slots.heard429.push({ at: Date.now(), retryAfterMs: outcome.rateLimitedForMs });
          return slot.release(outcome);
        },
      };
    },
  };
}

/** Slots given while a 429 held the endpoint: after it was heard, before its Retry-After ran out. */
const grantedWhilePaused = (slots: Slots) =>
  slots.heard429.flatMap((heard) => slots.granted.filter((at) => at > heard.at && at < heard.at + (heard.retryAfterMs ?? 0)));

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

    /** A worker as `leadrun worker` makes it: a limiter of its own on the shared database (its slots kept in `slots`). */
    function startWorker(llm: OpenAIServer, max: number, options: { giveUpAfterMs?: number; slots?: Slots } = {}) {
      const { giveUpAfterMs, slots } = options;
      const db = slots ? t.database.db.withPlugin(readingPauses(slots)) : t.database.db;
      const shared = createModelCallLimiter({ db, clock: systemClock, baseUrl: llm.baseUrl, model: 'gpt-test', max, logger: silentLogger });
      const limiter = slots ? recording(shared, slots) : shared;
      const engine = createModelEngine({ baseUrl: llm.baseUrl, apiKey: 'sk-test-worker', model: 'gpt-test', timeoutMs: 5_000, limiter });
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
        }, 60_000, 50);
      } finally {
        for (const worker of workers) await worker.stop();
      }
      for (const runId of runIds) await assertFinishedOnce(t.database.db, runId);
    }

    const retries = (runIds: string[]) => t.database.db.selectFrom('run_events').select(['node', 'error', 'deferred'])
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
      const slots = newSlots();
      await settle(runIds, [await startWorker(llm, 4, { slots })]); // every step took one attempt
      assert.deepEqual(slots.heard429.map((heard) => heard.retryAfterMs), [2_000]);
      assert.deepEqual(grantedWhilePaused(slots), [], 'no call during the pause');
      assert.equal(slots.granted.length, llm.requests.length, 'every call took a slot');
      const retried = await retries(runIds);
      assert.equal(retried.length, 1, 'one step put off, for the one 429');
      assert.equal(retried[0]!.deferred, true, 'the event says the step was put off, not failed');
      assert.match(retried[0]!.error!, /^waiting on the model provider, not counted as an attempt \(put off since .*\): .*429 Too Many Requests.*retry after 2 s/);
      const marks = await t.database.db.selectFrom('run_steps').select('put_off_since').where('run_id', 'in', runIds).execute();
      assert.ok(marks.every((m) => m.put_off_since === null), 'a completed step keeps no put-off mark');
    });

    it('fails the run, naming the refusals, once an endpoint that always answers 429 has put a step off past the limit', async () => {
      const llm = await endpoint({});
      llm.setDefault(rateLimited(1));
      const [runId] = await startRuns(1);
      const worker = await startWorker(llm, 2, { giveUpAfterMs: 1_500 }); // the limit: 1.5 s instead of an hour
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

    it('still puts off a 429 whose body only looks like a quota error (a rate limit named otherwise, not JSON, 1 MiB, nested 6,000 deep)', async () => {
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
      const slots = newSlots();
      await settle(runIds, [await startWorker(llm, 6, { slots })]);
      assert.ok(llm.refusedAt.length > 0, 'the provider refused some calls');
      assert.equal((await retries(runIds)).length, llm.refusedAt.length, 'one step put off per 429, none retried otherwise');
      assert.deepEqual(slots.heard429.map((heard) => heard.retryAfterMs), llm.refusedAt.map(() => 1_000), 'each 429 heard, saying 1 s');
      assert.deepEqual(grantedWhilePaused(slots), [], 'no call started while the endpoint asked to wait');
      assert.equal(slots.granted.length, llm.requests.length, 'every call took a slot');
    });

    it('shares a Retry-After between two worker processes', { skip: kind !== 'postgres' && 'two processes share a PostgreSQL database' }, async () => {
      const llm = await endpoint({ delayMs: 200 });
      llm.reply(rateLimited(3));
      const runIds = await startRuns(12);
      const [a, b] = [newSlots(), newSlots()];
      await settle(runIds, [await startWorker(llm, 4, { slots: a }), await startWorker(llm, 4, { slots: b })]);
      const [heard, other] = a.heard429.length > 0 ? [a, b] : [b, a];
      assert.deepEqual(heard.heard429.map((h) => h.retryAfterMs), [3_000]);
      assert.deepEqual(other.heard429, []);
      assert.deepEqual(grantedWhilePaused(heard), [], 'no call from the process that heard the 429 during the pause');
      // The other process reads the pause within a second or so, and starts no call from then until it ends.
      const end = await pauseEnd(llm);
      assert.ok(other.pausesRead.some((read) => read.until === end && read.at < end), 'the other process read the pause before its end');
      const knewOfPause = (at: number) => other.pausesRead.some((read) => read.at < at && at < read.until);
      assert.deepEqual(other.granted.filter(knewOfPause), [], 'nor from the other, once it had read it');
      assert.ok(a.granted.some((at) => at > end) && b.granted.some((at) => at > end), 'both still had calls to make after the pause');
      assert.equal(a.granted.length + b.granted.length, llm.requests.length, 'every call took a slot');
      assert.equal((await retries(runIds)).length, 1);
    });
  });
}

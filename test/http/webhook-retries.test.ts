// A webhook delivery's retries are the job runner's (issue 40), on both backends with a real receiver on loopback:
// the kind's RetryPolicy spaces them by the default schedule exactly (a manual clock), the delivery's attempts and
// its attempt log mirror the count the runner keeps on the job, and after the seventh failure the job is DEAD and the
// delivery FAILED. A run's later delivery that waits behind its earlier one uses no attempt by waiting. A delivery job
// queued by the version before (its attempts counted afresh, 5 of them) takes the delivery's count (0060).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock, systemClock, type Clock } from '../../src/clock.ts';
import { emitWebhookEvent } from '../../src/domain/webhooks/events.ts';
import { RETRY_DELAYS_MS, webhookHandler } from '../../src/jobs/handlers/webhook-deliver.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, type TestApp } from '../helpers.ts';
import { eventually } from '../worker/support.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

for (const kind of BACKENDS) {
  describe(`webhook retries (${kind})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    const runners: JobRunner[] = [];
    let workspaceId: string;
    let key: string;

    async function startRunner(clock: Clock, retryDelaysMs?: number[]) {
      const runner = new JobRunner({
        database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger,
        handlers: [webhookHandler({ leaseMs: 20_000, timeoutMs: 10_000, ...(retryDelaysMs ? { retryDelaysMs } : {}) })],
        pollMs: 30, drainMs: 500,
      });
      await runner.start();
      runners.push(runner);
    }
    const db = () => t.database.db;
    const delivery = (id: string) => db().selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const jobOf = (deliveryId: string) => db().selectFrom('jobs').selectAll().where('key', '=', deliveryId).executeTakeFirstOrThrow();
    const attemptLog = async (deliveryId: string) => (await db().selectFrom('webhook_attempts').select(['attempt', 'at', 'status_code'])
      .where('delivery_id', '=', deliveryId).orderBy('attempt').execute());

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true } });
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      key = (await t.key(ws.id, ['runs:read', 'webhooks:read', 'webhooks:write'])).key;
      receiver = await startWebhookReceiver();
    });
    // A test's runner never works the next test's deliveries, whatever the test came to.
    afterEach(async () => {
      for (const runner of runners.splice(0)) await runner.stop();
    });
    after(async () => {
      await receiver?.close();
      await t?.close();
    });

    it('retries on the kind\'s policy: the default schedule to the millisecond, the runner\'s count mirrored, FAILED after the seventh', async () => {
      receiver.answer = () => ({ status: 500, body: 'not now' });
      const endpoint = (await t.api('POST', '/api/v1/webhooks', { key, body: { url: receiver.url, events: ['run.started'] } })).json;
      const test = await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key });
      const id = test.json.data.id;
      assert.ok(id, test.text);
      // A second ahead of the API's clock, so that what the API has queued is due for this runner.
      const clock = new ManualClock(new Date(Date.now() + 1000));
      await startRunner(clock);

      for (let attempt = 1; attempt <= 7; attempt++) {
        // The attempt is recorded, and the runner has queued the job again (or left it DEAD after the last).
        const job = await eventually(`attempt ${attempt} recorded and the job queued`, async () => {
          const row = await jobOf(id);
          return row.attempts === attempt && row.status !== 'RUNNING' ? row : undefined;
        });
        const row = await delivery(id);
        assert.equal(row.attempts, attempt, 'the delivery mirrors the runner\'s count');
        const log = await attemptLog(id);
        assert.deepEqual(log.map((a) => [a.attempt, a.status_code]), Array.from({ length: attempt }, (_, i) => [i + 1, 500]));
        if (attempt < 7) {
          const delay = RETRY_DELAYS_MS[attempt - 1]!;
          assert.equal(job.status, 'QUEUED');
          assert.equal(row.status, 'PENDING');
          assert.equal(job.available_at.getTime() - log.at(-1)!.at.getTime(), delay, `the wait after attempt ${attempt}`);
          assert.equal(row.next_attempt_at?.getTime(), job.available_at.getTime(), 'the delivery shows when the runner retries');
          clock.advance(delay);
        } else {
          assert.equal(job.status, 'DEAD');
        }
      }
      const failed = await eventually('FAILED', async () => { const row = await delivery(id); return row.status === 'FAILED' ? row : undefined; });
      assert.equal(failed.attempts, 7);
      assert.equal(failed.next_attempt_at, null);
      assert.equal(failed.last_status, 500);
      assert.match(failed.last_error ?? '', /500/);
      assert.equal(receiver.received.filter((r) => r.headers['webhook-id'] === failed.event_id).length, 7);
      receiver.answer = () => ({ status: 204 });
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('a run\'s later delivery waits behind its earlier one without using an attempt, then goes out once', async () => {
      let refused = 0;
      receiver.answer = (r) => (r.json?.type === 'run.started' && refused++ < 2 ? { status: 503 } : { status: 204 });
      const endpoint = (await t.api('POST', '/api/v1/webhooks', { key, body: { url: receiver.url, events: ['run.started', 'run.completed'] } })).json;
      const runId = randomUUID();
      const at = new Date();
      await db().transaction().execute(async (trx) => {
        await emitWebhookEvent(trx, workspaceId, 'run.started', { id: runId, status: 'RUNNING' }, { at, runId });
        await emitWebhookEvent(trx, workspaceId, 'run.completed', { id: runId, status: 'COMPLETED' }, { at, runId });
      });
      const [earlier, later] = await db().selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpoint.id).orderBy('seq').execute();
      await startRunner(systemClock, [200, 200]);

      // While the earlier one is being retried, the later one has been claimed and has waited, its count untouched.
      await eventually('the earlier one\'s first failure', async () => (await delivery(earlier!.id)).attempts >= 1);
      await eventually('the later one waiting', async () => {
        const job = await jobOf(later!.id);
        return job.status === 'QUEUED' && job.available_at > job.created_at;
      });
      assert.equal((await jobOf(later!.id)).attempts, 0);

      const done = await eventually('both delivered', async () => {
        const rows = await Promise.all([delivery(earlier!.id), delivery(later!.id)]);
        return rows.every((r) => r.status === 'SUCCEEDED') ? rows : undefined;
      });
      assert.deepEqual(done.map((d) => d.attempts), [3, 1]);
      assert.deepEqual((await attemptLog(later!.id)).map((a) => a.attempt), [1]);
      assert.equal((await jobOf(later!.id)).attempts, 1);
      const types = receiver.received.filter((r) => r.json?.data?.id === runId).map((r) => r.json.type);
      assert.deepEqual(types, ['run.started', 'run.started', 'run.started', 'run.completed']);
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });

    it('0060 gives a live delivery job of the version before the delivery\'s count and the new bound', async () => {
      const endpoint = (await t.api('POST', '/api/v1/webhooks', { key, body: { url: receiver.url, events: ['run.started'] } })).json;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await t.api('POST', `/api/v1/webhooks/${endpoint.id}/test`, { key })).json.data.id);
      const [, running, done] = ids as [string, string, string];
      // As the version before left them: the job's count afresh after each retry, the delivery's own, 5 attempts.
      await db().updateTable('webhook_deliveries').set({ attempts: 3 }).where('id', 'in', ids).execute();
      await db().updateTable('jobs').set({ attempts: 0, max_attempts: 5 }).where('key', 'in', ids).execute();
      await db().updateTable('jobs').set({ status: 'RUNNING', attempts: 1 }).where('key', '=', running).execute();
      await db().updateTable('jobs').set({ status: 'DONE' }).where('key', '=', done).execute();

      const migration = await readFile(new URL('../../src/db/migrations/0060_webhook_job_attempts.sql', import.meta.url), 'utf8');
      await sql.raw(migration).execute(db());
      const counts = await Promise.all(ids.map(async (id) => { const j = await jobOf(id); return [j.attempts, j.max_attempts]; }));
      // The running claim is the delivery's fourth attempt; a finished job is left as it was.
      assert.deepEqual(counts, [[3, 21], [4, 21], [0, 5]]);
      await t.api('DELETE', `/api/v1/webhooks/${endpoint.id}`, { key });
    });
  });
}

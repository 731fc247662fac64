// Webhook deliveries are fair between workspaces and endpoints (issue 38), on both backends: an endpoint that never
// answers, with hundreds of deliveries queued before anyone else's, must not hold up another workspace's endpoint;
// nor may a workspace whose many hanging endpoints could fill every slot of a runner. An endpoint that times out is
// put off, longer each time in a row, until it answers.
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { webhookHandler } from '../../src/jobs/handlers/webhook-deliver.ts';
import { emitWebhookEvent, WEBHOOK_DELIVER } from '../../src/domain/webhooks/events.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, silentLogger, startTestApp, type TestApp } from '../helpers.ts';
import { eventually } from '../worker/support.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** A server on loopback that accepts every connection and never reads or answers a byte. */
interface SilentServer {
  url: string;
  /** Connections accepted so far. */
  connections: () => number;
  /** Resolves once `count` connections have been accepted. */
  reached: (count: number) => Promise<void>;
  close: () => Promise<void>;
}

async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<net.Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    for (const waiter of waiters.filter((w) => w.count <= accepted)) waiter.resolve();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    connections: () => accepted,
    reached: (count) => (accepted >= count
      ? Promise.resolve()
      : new Promise((resolve) => waiters.push({ count, resolve }))),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const HANGING_DELIVERIES = 300;

for (const kind of BACKENDS) {
  describe(`webhook fairness (${kind})`, () => {
    let t: TestApp;
    let silent: SilentServer;
    let receiver: WebhookReceiver;
    let runner: JobRunner | null = null;

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true } });
      silent = await startSilentServer();
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await runner?.stop();
      await silent?.close();
      await receiver?.close();
      await t?.close();
    });

    const workspace = () => t.workspace('pro');
    async function endpointOf(workspaceId: string, url: string): Promise<string> {
      const { key } = await t.key(workspaceId, ['webhooks:read', 'webhooks:write', 'leads:read']);
      const made = await t.api('POST', '/api/v1/webhooks', { key, body: { url, events: ['lead.updated'] } });
      assert.equal(made.status, 201, made.text);
      return made.json.id;
    }

    it("delivers a workspace's event in seconds while another's endpoint hangs with hundreds queued", async (ctx) => {
      const a = await t.workspace('pro');
      const b = await t.workspace('pro');
      const hanging = await endpointOf(a.id, silent.url);
      const healthy = await endpointOf(b.id, receiver.url);
      // A's deliveries are all queued first, so that a first-in-first-out queue would put B's behind every one of them.
      await t.database.db.transaction().execute(async (trx) => {
        for (let i = 0; i < HANGING_DELIVERIES; i++) {
          await emitWebhookEvent(trx, a.id, 'lead.updated', { id: `a-${i}` }, { at: new Date() });
        }
      });
      await t.database.db.transaction().execute((trx) =>
        emitWebhookEvent(trx, b.id, 'lead.updated', { id: 'b-0' }, { at: new Date() }));

      // A hung attempt is given up after 1 s, a tenth of the real 10 s: before the fix B waited out 300 of them, 4 at a
      // time (about 75 s); now it must arrive while A's endpoint still hangs.
      const started = performance.now();
      runner = new JobRunner({
        database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu,
        logger: silentLogger,
        handlers: [webhookHandler({ leaseMs: 10_000, retryDelaysMs: [60_000], timeoutMs: 1_000 })],
        pollMs: 30, drainMs: 200,
      });
      await runner.start();
      const got = await receiver.next((r) => r.json?.data?.id === 'b-0', 5_000);
      const tookMs = Math.round(performance.now() - started);
      ctx.diagnostic(`B's event took ${tookMs} ms, ${HANGING_DELIVERIES} deliveries to a hanging endpoint ahead of it`);
      assert.equal(got.json.type, 'lead.updated');
      // A's endpoint held two slots, its cap; once both attempts timed out it was put off rather than tried again.
      const putOff = await eventually('the hanging endpoint to be put off', async () => {
        const row = await t.database.db.selectFrom('webhook_endpoints').select(['timeouts', 'put_off_until'])
          .where('id', '=', hanging).executeTakeFirstOrThrow();
        return row.timeouts === 2 ? row : undefined;
      });
      assert.equal(silent.connections(), 2);
      assert.ok(putOff.put_off_until && putOff.put_off_until.getTime() > Date.now());
      await runner.stop();
      runner = null;

      // Nothing of A's was lost or sent twice: every delivery is still there, none attempted more than once.
      const rows = await t.database.db.selectFrom('webhook_deliveries').select(['status', 'attempts'])
        .where('endpoint_id', '=', hanging).execute();
      assert.equal(rows.length, HANGING_DELIVERIES);
      assert.ok(rows.every((r) => r.status === 'PENDING'));
      assert.equal(rows.filter((r) => r.attempts === 1).length, 2, 'the two that timed out, once each');
      assert.equal(rows.filter((r) => r.attempts === 0).length, HANGING_DELIVERIES - 2);
      const live = await t.database.db.selectFrom('jobs').select('id')
        .where('kind', '=', 'webhook.deliver').where('workspace_id', '=', a.id)
        .where('status', 'in', ['QUEUED', 'RUNNING']).execute();
      assert.equal(live.length, HANGING_DELIVERIES);
      const delivered = await t.database.db.selectFrom('webhook_deliveries').select(['status'])
        .where('endpoint_id', '=', healthy).execute();
      assert.deepEqual(delivered.map((r) => r.status), ['SUCCEEDED']);
    });

    it("leaves a slot for another workspace while one's endpoints hang in every other slot", async (ctx) => {
      const a = await workspace();
      const b = await workspace();
      // A server of its own, so that only these endpoints' connections are counted.
      const many = await startSilentServer();
      try {
        for (let i = 0; i < 6; i++) await endpointOf(a.id, many.url);
        await endpointOf(b.id, receiver.url);
        await t.database.db.transaction().execute(async (trx) => {
          for (let i = 0; i < 60; i++) {
            await emitWebhookEvent(trx, a.id, 'lead.updated', { id: `a2-${i}` }, { at: new Date() });
          }
        });
        // The real 10 s timeout: a slot that A's endpoints took stays taken for the rest of the test.
        runner = new JobRunner({
          database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu,
          logger: silentLogger, pollMs: 30, drainMs: 200,
          handlers: [webhookHandler({ leaseMs: 30_000, concurrency: 4 })],
        });
        await runner.start();
        // A has six endpoints with deliveries due; it takes three of the four slots, and no more.
        await many.reached(3);
        const started = performance.now();
        await t.database.db.transaction().execute((trx) =>
          emitWebhookEvent(trx, b.id, 'lead.updated', { id: 'b2-0' }, { at: new Date() }));
        await receiver.next((r) => r.json?.data?.id === 'b2-0', 3_000);
        const tookMs = Math.round(performance.now() - started);
        ctx.diagnostic(`B's event took ${tookMs} ms while A's endpoints hung in 3 of 4 slots`);
        assert.equal(many.connections(), 3);
        await runner.stop();
        runner = null;
      } finally {
        await many.close();
      }
    });

    it('puts off an endpoint after each time-out, twice as long each time in a row, until a success', async () => {
      const clock = new ManualClock(new Date(Date.now() + 60_000));
      const flaky = await startWebhookReceiver();
      try {
        flaky.answer = () => 'hang';
        const a = await workspace();
        const id = await endpointOf(a.id, flaky.url);
        const state = () => t.database.db.selectFrom('webhook_endpoints').select(['timeouts', 'put_off_until'])
          .where('id', '=', id).executeTakeFirstOrThrow();
        // The endpoint's count is written with the attempt; the delivery's job is handed back with its next time just
        // after, from the clock as it then reads: the clock moves on only once the job is back in the queue.
        // Waited for as long as a loaded machine may take (the whole suite shares two cores): no time is asserted.
        const timeoutsReach = (count: number) => eventually(`${count} timeouts`, async () => {
          const row = await state();
          if (row.timeouts !== count) return undefined;
          // This endpoint's job only: the deliveries the tests before left to hanging endpoints may be in flight.
          const running = await t.database.db.selectFrom('jobs').select('id')
            .where('kind', '=', WEBHOOK_DELIVER).where('lane', '=', id).where('status', '=', 'RUNNING').execute();
          return running.length === 0 ? row : undefined;
        }, 60_000);
        await t.database.db.transaction().execute((trx) =>
          emitWebhookEvent(trx, a.id, 'lead.updated', { id: 'flaky-0' }, { at: clock.now() }));
        runner = new JobRunner({
          database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu,
          logger: silentLogger, pollMs: 30, drainMs: 200,
          // Long enough for the last answer on a loaded machine; the hangs only cost the test a second each.
          handlers: [webhookHandler({ leaseMs: 10_000, retryDelaysMs: [50, 50], timeoutMs: 1_000 })],
        });
        await runner.start();

        const first = await timeoutsReach(1);
        assert.equal(first.put_off_until?.getTime(), clock.now().getTime() + 5_000);
        clock.advance(5_000);
        const second = await timeoutsReach(2);
        assert.equal(second.put_off_until?.getTime(), clock.now().getTime() + 10_000);
        flaky.answer = () => ({ status: 204 });
        clock.advance(10_000);
        const cleared = await timeoutsReach(0);
        assert.equal(cleared.put_off_until, null);
        assert.equal(flaky.received.length, 3);
        await runner.stop();
        runner = null;
      } finally {
        await flaky.close();
      }
    });
  });
}

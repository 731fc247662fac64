// The fair claim of webhook deliveries (src/domain/webhooks/claim.ts) on both backends, with a manual clock: lanes are
// taken in turn by workspace, then endpoint; an endpoint never has more than its cap in flight, nor a workspace more
// than its share of a runner; one put off is skipped until its time; a disabled one is not capped; a lease that ran
// out frees its place; an import's jobs carry their lanes; a job without a lane is still taken; claims at once never
// take a job twice; a claim among thousands of pending deliveries stays quick.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.ts';
import { claimWebhookDelivery } from '../../src/domain/webhooks/claim.ts';
import { emitLeadsCreated, queueWebhookDelivery, WEBHOOK_DELIVER } from '../../src/domain/webhooks/events.ts';
import { enqueueJob } from '../../src/jobs/sql/enqueueJob.ts';
import type { ClaimedJob } from '../../src/jobs/types.ts';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../helpers.ts';

const LEASE_MS = 30_000;

for (const kind of BACKENDS) {
  describe(`webhook delivery claim (${kind})`, () => {
    let testDb: TestDatabase;
    const clock = new ManualClock('2026-03-02T09:00:00.000Z');
    const db = () => testDb.database.db;

    before(async () => { testDb = await createTestDatabase(kind); });
    after(async () => { await testDb?.drop(); });
    beforeEach(async () => {
      await sql`DELETE FROM jobs`.execute(db());
      await sql`DELETE FROM webhook_events`.execute(db());
      await sql`DELETE FROM webhook_endpoints`.execute(db());
    });

    async function workspace(): Promise<string> {
      const id = randomUUID();
      await db().insertInto('workspaces')
        .values({ id, name: `w-${id.slice(0, 6)}`, plan: 'PRO', created_at: clock.now() }).execute();
      return id;
    }
    async function endpoint(workspaceId: string): Promise<string> {
      const id = randomUUID();
      await db().insertInto('webhook_endpoints').values({
        id, workspace_id: workspaceId, url: 'http://127.0.0.1:9/hooks', events: [], read_scopes: ['leads:read', 'runs:read'],
        secret: 'sealed', enabled: true, created_at: clock.now(), updated_at: clock.now(),
      }).execute();
      return id;
    }
    /** `count` deliveries of one event each to the endpoint, a millisecond apart: their jobs queue in this order. */
    async function queue(workspaceId: string, endpointId: string, count: number): Promise<void> {
      await db().transaction().execute(async (trx) => {
        for (let i = 0; i < count; i++) {
          const eventId = randomUUID();
          await trx.insertInto('webhook_events').values({
            id: eventId, workspace_id: workspaceId, type: 'lead.updated',
            payload: JSON.stringify({ type: 'lead.updated' }),
            occurred_at: clock.now(), run_id: null, lead_id: null,
          }).execute();
          const at = new Date(clock.now().getTime() - 60_000 + i);
          await queueWebhookDelivery(trx, workspaceId, eventId, endpointId, null, at);
        }
      });
    }
    /** A claim a millisecond after the last: endpoints are served in the order of when they were last served. */
    const claim = (owner = 'runner-1', workspacePerRunner = 100) => {
      clock.advance(1);
      return claimWebhookDelivery(db(), owner, clock.now(), LEASE_MS, { endpoint: 2, workspacePerRunner });
    };
    /** The endpoint of a claimed job, from its lane. */
    async function laneOf(job: ClaimedJob): Promise<string | null> {
      const row = await db().selectFrom('jobs').select('lane').where('id', '=', job.id).executeTakeFirstOrThrow();
      return row.lane;
    }
    async function claimAll(owner?: string, workspacePerRunner?: number): Promise<string[]> {
      const lanes: string[] = [];
      for (let job = await claim(owner, workspacePerRunner); job; job = await claim(owner, workspacePerRunner)) {
        lanes.push(String(await laneOf(job)));
      }
      return lanes;
    }

    it('takes workspaces in turn, then endpoints, two of an endpoint at most, whatever was queued first', async () => {
      const a = await workspace();
      const b = await workspace();
      const [a1, a2] = [await endpoint(a), await endpoint(a)];
      const b1 = await endpoint(b);
      await queue(a, a1!, 50);
      await queue(a, a2!, 50);
      await queue(b, b1, 3);

      const lanes = await claimAll();
      // B's endpoint is among the first two claims: A was served first or second, never all the way through.
      assert.ok(lanes.slice(0, 2).includes(b1), JSON.stringify(lanes));
      // A's two endpoints alternate in A's turns rather than one taking both.
      assert.deepEqual(lanes.filter((l) => l !== b1).slice(0, 2).sort(), [a1, a2].sort());
      assert.equal(lanes.length, 6, 'two per endpoint, then every lane is at its cap');
      for (const lane of [a1, a2, b1]) assert.equal(lanes.filter((l) => l === lane).length, 2);

      // A job that ends frees its endpoint's place: the next claim takes that endpoint's next delivery.
      const running = await db().selectFrom('jobs').select('id')
        .where('lane', '=', b1).where('status', '=', 'RUNNING').execute();
      await db().updateTable('jobs').set({ status: 'DONE', finished_at: clock.now() })
        .where('id', '=', running[0]!.id).execute();
      const next = await claim();
      assert.equal(next && await laneOf(next), b1);
      assert.equal(await claim(), null);

      // Leases that ran out (their runners died) no longer count: each job is taken over, still two per endpoint.
      clock.advance(LEASE_MS + 1);
      const again = await claimAll();
      assert.equal(again.length, 6, JSON.stringify(again));
    });

    it("leaves a runner's last slot to other workspaces: one takes at most its share of a runner", async () => {
      const a = await workspace();
      const b = await workspace();
      const ofA = [await endpoint(a), await endpoint(a), await endpoint(a)];
      const b1 = await endpoint(b);
      for (const e of ofA) await queue(a, e, 5);
      await queue(b, b1, 5);

      // A runner of four slots: A's three endpoints get one each, B's endpoint its two, then A is at its share.
      const first = await claimAll('runner-1', 3);
      assert.equal(first.filter((l) => ofA.includes(l)).length, 3, JSON.stringify(first));
      assert.equal(first.filter((l) => l === b1).length, 2);
      assert.equal(first.length, 5);
      // Another runner's share is its own: A's endpoints each take a second delivery there, up to their cap.
      const second = await claimAll('runner-2', 3);
      assert.deepEqual([...second].sort(), [...ofA].sort());
    });

    it('skips an endpoint put off for timing out until its time, and does not cap a disabled one', async () => {
      const a = await workspace();
      const slow = await endpoint(a);
      const off = await endpoint(a);
      await queue(a, slow, 3);
      await queue(a, off, 5);
      await db().updateTable('webhook_endpoints')
        .set({ put_off_until: new Date(clock.now().getTime() + 10_000), timeouts: 1 })
        .where('id', '=', slow).execute();
      await db().updateTable('webhook_endpoints').set({ enabled: false }).where('id', '=', off).execute();

      // The disabled endpoint's five are all taken (its handler only marks them FAILED); the put-off one's none.
      assert.deepEqual(await claimAll(), [off, off, off, off, off]);
      clock.advance(10_000);
      assert.deepEqual(await claimAll(), [slow, slow]);
    });

    it("puts an import's lead.created deliveries in their endpoints' lanes", async () => {
      const a = await workspace();
      const [e1, e2] = [await endpoint(a), await endpoint(a)];
      await db().transaction().execute(async (trx) => {
        for (const name of ['Ada', 'Grace']) {
          await trx.insertInto('leads').values({
            id: randomUUID(), workspace_id: a, name, email: null, company_name: null, company_website: null,
            status: 'DISCOVERY',
            assigned_to_user_id: null, created_at: clock.now(), updated_at: clock.now(),
          }).execute();
        }
        await emitLeadsCreated(trx, a, sql`true`, clock.now());
      });
      const jobs = await db().selectFrom('jobs as j').innerJoin('webhook_deliveries as d', (join) =>
        join.on(sql<boolean>`d.id::text = j.key`)).select(['j.lane', 'd.endpoint_id']).execute();
      assert.equal(jobs.length, 4);
      assert.ok(jobs.every((j) => j.lane === j.endpoint_id));
      assert.deepEqual([...new Set(jobs.map((j) => j.lane))].sort(), [e1, e2].sort());
    });

    it('still takes a delivery job written without a lane', async () => {
      const a = await workspace();
      const job = await db().transaction().execute((trx) => enqueueJob(trx, {
        kind: WEBHOOK_DELIVER, key: randomUUID(), workspaceId: a, payload: { deliveryId: randomUUID() }, maxAttempts: 5,
        availableAt: clock.now(),
      }));
      assert.equal((await claim())?.id, job.id);
      assert.equal(await claim(), null);
    });

    it('never gives one job to two claims made at once', async () => {
      const endpoints: string[] = [];
      for (let i = 0; i < 4; i++) {
        const w = await workspace();
        const e = await endpoint(w);
        endpoints.push(e);
        await queue(w, e, 10);
      }
      const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => claim(`runner-${i}`)));
      const ids = claims.filter((c): c is ClaimedJob => c !== null).map((c) => c.id);
      assert.equal(new Set(ids).size, ids.length, 'no job taken twice');
      const running = await db().selectFrom('jobs').select(['lane']).where('status', '=', 'RUNNING').execute();
      assert.equal(running.length, ids.length);
      // Claims racing for one endpoint's last place: one wins, the other looks again and takes another endpoint (or
      // finds every other one locked by a claim under way, and its slot looks again later).
      for (const e of endpoints) assert.ok(running.filter((r) => r.lane === e).length <= 2);
      assert.equal(ids.length + (await claimAll()).length, 8, 'every endpoint filled to its cap, and no further');
    });

    it('claims quickly among thousands of pending deliveries', async (ctx) => {
      const hanging = await workspace();
      const flood = await endpoint(hanging);
      await sql`
        WITH events AS (
          INSERT INTO webhook_events (id, workspace_id, type, payload, occurred_at)
          SELECT gen_random_uuid(), ${hanging}::uuid, 'lead.updated', '{}'::jsonb, ${clock.now()}::timestamptz
          FROM generate_series(1, 5000)
          RETURNING id),
        deliveries AS (
          INSERT INTO webhook_deliveries (id, workspace_id, event_id, endpoint_id, status, attempts, next_attempt_at,
                                          created_at, updated_at)
          SELECT gen_random_uuid(), ${hanging}::uuid, e.id, ${flood}::uuid, 'PENDING', 0, ${clock.now()}::timestamptz,
                 ${clock.now()}::timestamptz, ${clock.now()}::timestamptz
          FROM events e
          RETURNING id)
        INSERT INTO jobs (id, workspace_id, kind, key, lane, payload, status, attempts, max_attempts, available_at,
                          created_at, updated_at)
        SELECT gen_random_uuid(), ${hanging}::uuid, ${WEBHOOK_DELIVER}, d.id::text, ${flood},
               jsonb_build_object('deliveryId', d.id),
               'QUEUED', 0, 5, ${clock.now()}::timestamptz, ${clock.now()}::timestamptz, ${clock.now()}::timestamptz
        FROM deliveries d`.execute(db());
      const others: string[] = [];
      for (let i = 0; i < 20; i++) {
        const w = await workspace();
        const e = await endpoint(w);
        others.push(e);
        await queue(w, e, 5);
      }
      await sql`ANALYZE jobs`.execute(db());
      // Every endpoint's two in flight, the most the cap lets be taken: fewer would leave the last workspaces in turn
      // (ties in when each was served are broken by id) with one each, the flooded one among them by chance.
      const claims = 21 * 2;
      const started = performance.now();
      const lanes: string[] = [];
      for (let i = 0; i < claims; i++) {
        const job = await claim();
        assert.ok(job);
        lanes.push(String(await laneOf(job)));
      }
      const perClaimMs = (performance.now() - started) / claims;
      ctx.diagnostic(`${perClaimMs.toFixed(2)} ms a claim among ${5_000 + 20 * 5} pending deliveries on 21 endpoints`);
      // The flooded endpoint got its two, every other endpoint its share: none waited behind the 5,000.
      assert.equal(lanes.filter((l) => l === flood).length, 2);
      for (const e of others) assert.ok(lanes.includes(e), 'every other endpoint was served');
      // Generous for a shared machine: a claim that read every pending delivery would take far longer than this.
      assert.ok(perClaimMs < 100, `${perClaimMs} ms a claim`);
    });
  });
}

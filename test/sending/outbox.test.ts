// sendAt on approval and the outbox (DESIGN §14), on both backends through a real SMTP server: `next_window` and an
// instant make the delivery SCHEDULED with `scheduledFor`, listed in GET /api/v1/outbox and sent at its time; a past
// instant is refused before anything is approved; send-now sends past the window, cancel makes it CANCELLED and it
// is never sent; a follow-up due outside the window waits for it in the lead's time zone. Another workspace's key
// sees none of it and changes none of it; each change is audited.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, auditRows, nextLink } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { countBy, deliveriesOf, deliveryRunner, runsAwaitingApproval, sendingWorkspace } from './support.ts';

// A Monday, 19:00 UTC: after the default window (08:00-18:00 UTC) has closed.
const MONDAY_EVENING = '2026-03-02T19:00:00.000Z';

for (const kind of BACKENDS) {
  describe(`sendAt and the outbox (${kind})`, () => {
    let t: TestApp;
    let clock: ManualClock;
    let smtp: TestSmtpServer;
    let runner: JobRunner | null = null;

    before(async () => {
      clock = new ManualClock(MONDAY_EVENING);
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, rateLimitPerMinute: 1_000_000 } });
      await t.startWorker();
    });
    afterEach(async () => {
      await runner?.stop();
      runner = null;
      await smtp?.close();
      clock.set(MONDAY_EVENING);
    });
    after(async () => { await t?.close(); });

    const approve = (key: string, runId: string, body: unknown) => t.api('POST', `/api/v1/runs/${runId}/approve`, { key, body });

    it('schedules for the next window or an instant, lists, sends now, cancels, and sends the rest at their time', async () => {
      smtp = await startSmtpServer();
      const f = await sendingWorkspace(t, smtp, { minGapSeconds: 0 });
      const [a, b, c, d] = await runsAwaitingApproval(t, f, 4);

      assertInvalid(await approve(f.key, a.id, { deliver: 'send', sendAt: '2026-03-02T18:00:00Z' }), ['sendAt']);
      assertInvalid(await approve(f.key, a.id, { deliver: 'send', sendAt: 'tomorrow' }), ['sendAt']);
      assert.equal((await t.api('GET', `/api/v1/runs/${a.id}`, { key: f.key })).json.data.status, 'AWAITING_APPROVAL', 'nothing approved');

      const next = await approve(f.key, a.id, { deliver: 'send', sendAt: 'next_window' });
      assert.equal(next.status, 200, next.text);
      assert.equal(next.json.data.emailDraft.delivery.status, 'SCHEDULED');
      assert.equal(next.json.data.emailDraft.delivery.scheduledFor, '2026-03-03T08:00:00.000Z');
      const at = await approve(f.key, b.id, { deliver: 'send', sendAt: '2026-03-02T21:30:00+01:00' });
      assert.equal(at.json.data.emailDraft.delivery.scheduledFor, '2026-03-02T20:30:00.000Z');
      for (const run of [c, d]) assert.equal((await approve(f.key, run.id, { deliver: 'send', sendAt: 'next_window' })).status, 200);

      const first = await t.api('GET', '/api/v1/outbox?limit=3', { key: f.key });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(Object.keys(first.json.data[0]).sort(), ['id', 'runId', 'scheduledFor', 'to', 'touch', 'waitingFor']);
      // The soonest first: b's instant tonight, then the three waiting for Tuesday's window.
      assert.deepEqual([first.json.data[0].runId, first.json.data[0].waitingFor, first.json.data[0].scheduledFor], [b.id, 'sendAt', '2026-03-02T20:30:00.000Z']);
      for (const entry of first.json.data.slice(1)) assert.deepEqual([entry.waitingFor, entry.scheduledFor], ['window', '2026-03-03T08:00:00.000Z']);
      assert.equal(first.json.data[0].to, b.emailDraft.to);
      const link = nextLink(first);
      assert.ok(link, 'a next page');
      const second = await t.api('GET', link!, { key: f.key });
      assert.equal(second.json.data.length, 1);
      const listed = [...first.json.data, ...second.json.data].map((e: any) => e.runId);
      assert.deepEqual([...listed].sort(), [a.id, b.id, c.id, d.id].sort());

      runner = deliveryRunner(t, clock);
      await runner.start();
      const entryOf = (runId: string) => [...first.json.data, ...second.json.data].find((e: any) => e.runId === runId);

      // Another workspace's key: an empty outbox, and a 404 for this one's deliveries.
      const other = await t.workspace();
      const otherKey = (await t.key(other.id)).key;
      assert.deepEqual((await t.api('GET', '/api/v1/outbox', { key: otherKey })).json.data, []);
      assertProblem(await t.api('POST', `/api/v1/outbox/${entryOf(c.id).id}/send-now`, { key: otherKey, body: {} }), 404, 'not_found');
      assertProblem(await t.api('DELETE', `/api/v1/outbox/${entryOf(c.id).id}`, { key: otherKey }), 404, 'not_found');
      assertProblem(await t.api('DELETE', '/api/v1/outbox/not-a-uuid', { key: f.key }), 404, 'not_found');
      const readOnly = (await t.key(f.workspaceId, ['runs:read'])).key;
      assertProblem(await t.api('DELETE', `/api/v1/outbox/${entryOf(c.id).id}`, { key: readOnly }), 403);

      // Send now: past the window.
      const now = await t.api('POST', `/api/v1/outbox/${entryOf(c.id).id}/send-now`, { key: f.key, body: {} });
      assert.equal(now.status, 204, now.text);
      await smtp.waitFor(1);
      assert.equal(smtp.received[0]!.envelope.to[0], c.emailDraft.to);
      // Cancel: never sent, not even when its time comes.
      const cancelled = await t.api('DELETE', `/api/v1/outbox/${entryOf(d.id).id}`, { key: f.key });
      assert.equal(cancelled.status, 204, cancelled.text);
      assertProblem(await t.api('DELETE', `/api/v1/outbox/${entryOf(d.id).id}`, { key: f.key }), 409, 'invalid_state');
      assertProblem(await t.api('POST', `/api/v1/outbox/${entryOf(c.id).id}/send-now`, { key: f.key, body: {} }), 409, 'invalid_state');
      const jobs = await t.database.db.selectFrom('jobs').select('id').where('key', '=', entryOf(d.id).id).where('status', '=', 'QUEUED').execute();
      assert.equal(jobs.length, 0, 'the cancelled delivery has no job left');

      clock.set('2026-03-02T20:30:00.000Z');
      await smtp.waitFor(2);
      assert.equal(smtp.received[1]!.envelope.to[0], b.emailDraft.to, 'the instant asked for');
      // Recorded before the clock jumps a night ahead: a job still RUNNING then would have outlived its lease, and a
      // runner taking it over sends it again, as after a crash.
      await eventually('the instant\'s delivery recorded', async () =>
        (await deliveriesOf(t, f.workspaceId)).some((r) => r.run_id === b.id && r.status === 'DELIVERED'));
      clock.set('2026-03-03T08:00:00.000Z');
      await smtp.waitFor(3);
      assert.equal(smtp.received[2]!.envelope.to[0], a.emailDraft.to, 'the next window');
      const rows = await eventually('all settled', async () => {
        const all = await deliveriesOf(t, f.workspaceId);
        return countBy(all).DELIVERED === 3 ? all : undefined;
      });
      assert.deepEqual(countBy(rows), { DELIVERED: 3, CANCELLED: 1 });
      assert.equal(smtp.received.length, 3);
      const run = await t.api('GET', `/api/v1/runs/${d.id}`, { key: f.key });
      assert.equal(run.json.data.emailDraft.delivery.status, 'CANCELLED');
      assert.equal(run.json.data.emailDraft.status, 'APPROVED');

      const actions = (await auditRows(t, { workspaceId: f.workspaceId })).map((row) => row.action);
      assert.ok(actions.includes('draft.delivery_sent_now'));
      assert.ok(actions.includes('draft.delivery_cancelled'));
      const types = (await t.database.db.selectFrom('run_events').select('type').where('run_id', '=', d.id).execute()).map((e) => e.type);
      assert.ok(types.includes('draft.delivery_scheduled') && types.includes('draft.delivery_cancelled'), types.join());
    });

    it('holds a follow-up due outside the window until the window opens in the lead\'s time zone', async () => {
      smtp = await startSmtpServer();
      const f = await sendingWorkspace(t, smtp, { minGapSeconds: 0, timeZone: 'UTC' });
      const [run] = await runsAwaitingApproval(t, f, 1, { timeZone: 'America/New_York' });
      // Due Tuesday 12:00 UTC, which is 07:00 in New York: before its window (08:00-18:00 local).
      const res = await approve(f.key, run.id, { deliver: 'send', sendAt: '2026-03-03T12:00:00Z' });
      assert.equal(res.status, 200, res.text);
      // A follow-up keeps to the window: what the sequence's delivery sets (DESIGN §13).
      await t.database.db.updateTable('email_deliveries').set({ respect_window: true }).where('run_id', '=', run.id).execute();
      runner = deliveryRunner(t, clock);
      await runner.start();
      clock.set('2026-03-03T12:00:00.000Z');
      const held = await eventually('held for the window', async () => {
        const [row] = await deliveriesOf(t, f.workspaceId);
        return row?.waiting_for === 'window' ? row : undefined;
      });
      assert.equal(held.status, 'SCHEDULED');
      assert.equal(held.scheduled_for?.toISOString(), '2026-03-03T13:00:00.000Z', '08:00 in New York');
      assert.equal(smtp.received.length, 0);
      clock.set('2026-03-03T13:00:00.000Z');
      await smtp.waitFor(1);
    });
  });
}

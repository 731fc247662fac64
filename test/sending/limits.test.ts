// Per-sender limits across worker processes (DESIGN §14), on both backends, through a real SMTP server: two job
// runners racing over ten deliveries of one sender with a daily limit of 3 send exactly 3 today, none twice, and put
// the other 7 SCHEDULED for the next window; the next day sends 3 more. The least gap between two sends holds on
// the injected clock, and what waits for it is listed as waiting for `gap`.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { countBy, deliveriesOf, deliveryRunner, runsAwaitingApproval, sendingWorkspace } from './support.ts';

// A Monday, 09:00 UTC: inside the default window.
const MONDAY = '2026-03-02T09:00:00.000Z';

for (const kind of BACKENDS) {
  describe(`per-sender limits (${kind})`, () => {
    let t: TestApp;
    let clock: ManualClock;
    let smtp: TestSmtpServer;
    let runners: JobRunner[] = [];
    // On PostgreSQL the second runner has connections of its own, as another worker process would.
    let second: Database | null = null;

    before(async () => {
      clock = new ManualClock(MONDAY);
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, rateLimitPerMinute: 1_000_000 } });
      await t.startWorker();
    });
    afterEach(async () => {
      for (const runner of runners.splice(0)) await runner.stop();
      await smtp?.close();
      clock.set(MONDAY);
    });
    after(async () => {
      await second?.close();
      await t?.close();
    });

    const startRunners = async (count: number, random?: () => number) => {
      second ??= t.databaseUrl ? await openDatabase({ databaseUrl: t.databaseUrl }) : null;
      runners = Array.from({ length: count }, (_, i) => deliveryRunner(t, clock, random, i === 1 && second ? second : t.database));
      for (const runner of runners) await runner.start();
    };

    it('sends exactly dailyLimit a day across two runners, none twice; the rest wait for the next window', async () => {
      smtp = await startSmtpServer();
      const f = await sendingWorkspace(t, smtp, { dailyLimit: 3, minGapSeconds: 0 });
      const runs = await runsAwaitingApproval(t, f, 10);
      for (const run of runs) {
        const res = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key: f.key, body: { deliver: 'send' } });
        assert.equal(res.status, 200, res.text);
      }
      await startRunners(2);

      const settled = await eventually('3 sent and 7 waiting', async () => {
        const rows = await deliveriesOf(t, f.workspaceId);
        const counts = countBy(rows);
        return counts.DELIVERED === 3 && counts.SCHEDULED === 7 ? rows : undefined;
      }, 30_000);
      // The next window after today: Tuesday 08:00 UTC.
      for (const row of settled.filter((r) => r.status === 'SCHEDULED')) {
        assert.equal(row.waiting_for, 'daily_limit');
        assert.equal(row.scheduled_for?.toISOString(), '2026-03-03T08:00:00.000Z');
      }
      const counter = await t.database.db.selectFrom('sender_counters').selectAll().where('workspace_id', '=', f.workspaceId).execute();
      assert.equal(counter.length, 1);
      assert.equal(counter[0]!.sent, 3);
      assert.equal(smtp.received.length, 3, 'three messages reached the server');

      const outbox = await t.api('GET', '/api/v1/outbox?limit=100', { key: f.key });
      assert.equal(outbox.status, 200, outbox.text);
      assert.equal(outbox.json.data.length, 7);
      assert.ok(outbox.json.data.every((e: any) => e.waitingFor === 'daily_limit' && e.scheduledFor === '2026-03-03T08:00:00.000Z'));

      // Send now goes past the window, never past the limit: it waits again for tomorrow.
      const pushed = outbox.json.data[0];
      const now = await t.api('POST', `/api/v1/outbox/${pushed.id}/send-now`, { key: f.key, body: {} });
      assert.equal(now.status, 204, now.text);
      await eventually('held again by the daily limit', async () => {
        const row = (await deliveriesOf(t, f.workspaceId)).find((r) => r.id === pushed.id);
        return row?.status === 'SCHEDULED' && row.waiting_for === 'daily_limit' && row.scheduled_for?.toISOString() === '2026-03-03T08:00:00.000Z';
      });
      assert.equal(smtp.received.length, 3, 'still three sent today');

      // Tuesday morning: three more, the other four wait for Wednesday.
      clock.set('2026-03-03T08:00:00.000Z');
      const tuesday = await eventually('6 sent and 4 waiting', async () => {
        const rows = await deliveriesOf(t, f.workspaceId);
        const counts = countBy(rows);
        // Settled: the four left over have been claimed and put back for Wednesday, not merely not yet claimed.
        const heldAgain = rows.filter((r) => r.status === 'SCHEDULED').every((r) => r.scheduled_for?.toISOString() !== '2026-03-03T08:00:00.000Z');
        return counts.DELIVERED === 6 && counts.SCHEDULED === 4 && heldAgain ? rows : undefined;
      }, 30_000);
      assert.ok(tuesday.filter((r) => r.status === 'SCHEDULED').every((r) => r.scheduled_for?.toISOString() === '2026-03-04T08:00:00.000Z'));
      await smtp.waitFor(6);
      const ids = smtp.received.map((mail) => mail.parsed.messageId);
      assert.equal(new Set(ids).size, 6, 'no message was sent twice');
      assert.equal(smtp.received.length, 6);
      const events = await t.database.db.selectFrom('run_events').select(['type']).where('workspace_id', '=', f.workspaceId)
        .where('type', '=', 'draft.delivery_scheduled').execute();
      assert.ok(events.length >= 7, 'each delivery put back to wait has its run event');
    });

    it('keeps the least gap between two sends of a sender on the injected clock', async () => {
      smtp = await startSmtpServer();
      const f = await sendingWorkspace(t, smtp, { dailyLimit: 50, minGapSeconds: 90 });
      const runs = await runsAwaitingApproval(t, f, 3);
      for (const run of runs) {
        const res = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key: f.key, body: { deliver: 'send' } });
        assert.equal(res.status, 200, res.text);
      }
      await startRunners(2, () => 0.5);
      const first = await eventually('1 sent and 2 waiting for the gap', async () => {
        const rows = await deliveriesOf(t, f.workspaceId);
        const counts = countBy(rows);
        return counts.DELIVERED === 1 && counts.SCHEDULED === 2 ? rows : undefined;
      }, 30_000);
      // 90 s and a tenth more (jitter 0.5 of at most a fifth): 09:01:39.
      for (const row of first.filter((r) => r.status === 'SCHEDULED')) {
        assert.equal(row.waiting_for, 'gap');
        assert.equal(row.scheduled_for?.toISOString(), '2026-03-02T09:01:39.000Z');
      }
      clock.set('2026-03-02T09:01:00.000Z');
      // Not yet due: nothing leaves before its time (the runners poll every 20 ms).
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(countBy(await deliveriesOf(t, f.workspaceId)).DELIVERED, 1);

      clock.set('2026-03-02T09:01:39.000Z');
      const second = await eventually('2 sent, 1 waiting', async () => {
        const rows = await deliveriesOf(t, f.workspaceId);
        const counts = countBy(rows);
        return counts.DELIVERED === 2 && counts.SCHEDULED === 1 ? rows : undefined;
      }, 30_000);
      const sent = second.filter((r) => r.status === 'DELIVERED').map((r) => r.delivered_at!.getTime()).sort();
      assert.ok(sent[1]! - sent[0]! >= 90_000, `the second left ${sent[1]! - sent[0]!} ms after the first`);
      const waiting = second.find((r) => r.status === 'SCHEDULED')!;
      assert.equal(waiting.waiting_for, 'gap');
      assert.equal(waiting.scheduled_for?.toISOString(), '2026-03-02T09:03:18.000Z');
      assert.equal(smtp.received.length, 2);
    });
  });
}

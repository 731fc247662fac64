// A delivery's claim is one transaction (src/jobs/handlers/email-deliver.ts), on both backends, through a real SMTP
// server: the suppression list is read before the sender's slot is taken, so a suppressed delivery ends SUPPRESSED
// without using the daily limit, and the next delivery of the sender still goes today.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { suppressAddress } from '../../src/domain/suppressions/suppress.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { countBy, deliveriesOf, deliveryRunner, runsAwaitingApproval, sendingWorkspace } from './support.ts';

// A Monday, 09:00 UTC: inside the default window.
const MONDAY = '2026-03-02T09:00:00.000Z';

for (const kind of BACKENDS) {
  describe(`a delivery's claim (${kind})`, () => {
    let t: TestApp;
    let clock: ManualClock;
    let smtp: TestSmtpServer;
    let runner: JobRunner | null = null;

    before(async () => {
      clock = new ManualClock(MONDAY);
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, rateLimitPerMinute: 1_000_000 } });
      await t.startWorker();
      smtp = await startSmtpServer();
    });
    afterEach(async () => {
      await runner?.stop();
      runner = null;
    });
    after(async () => {
      await smtp?.close();
      await t?.close();
    });

    it('takes no slot of the daily limit for a suppressed delivery: the next one of the sender goes today', async () => {
      const f = await sendingWorkspace(t, smtp, { dailyLimit: 1, minGapSeconds: 0 });
      const [refused, sent] = await runsAwaitingApproval(t, f, 2);
      for (const run of [refused, sent]) {
        const res = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key: f.key, body: { deliver: 'send' } });
        assert.equal(res.status, 200, res.text);
      }
      // Suppressed after the approval, before any worker claims it: whichever of the two is claimed first, the
      // suppressed one must not use the sender's only slot of the day.
      const refusedTo = refused.emailDraft.to as string;
      await t.database.db.transaction().execute((trx) => suppressAddress(trx, {
        workspaceId: f.workspaceId, email: refusedTo, reason: 'unsubscribed', source: 'unsubscribe_link', at: clock.now(),
      }));
      runner = deliveryRunner(t, clock);
      await runner.start();

      const settled = await eventually('one suppressed, one delivered', async () => {
        const rows = await deliveriesOf(t, f.workspaceId);
        const counts = countBy(rows);
        return counts.SUPPRESSED === 1 && counts.DELIVERED === 1 ? rows : false;
      }, 30_000);
      assert.equal(settled.find((r) => r.status === 'SUPPRESSED')!.run_id, refused.id);
      assert.equal(settled.find((r) => r.status === 'SUPPRESSED')!.attempts, 0);
      const slots = await t.database.db.selectFrom('email_deliveries').select(['run_id', 'slot_taken_at'])
        .where('workspace_id', '=', f.workspaceId).execute();
      assert.equal(slots.find((r) => r.run_id === refused.id)!.slot_taken_at, null);
      assert.ok(slots.find((r) => r.run_id === sent.id)!.slot_taken_at);
      const counter = await t.database.db.selectFrom('sender_counters').select(['sent'])
        .where('workspace_id', '=', f.workspaceId).executeTakeFirstOrThrow();
      assert.equal(counter.sent, 1);
      assert.deepEqual(smtp.received.filter((m) => m.envelope.to.includes(refusedTo)), []);
      assert.equal(smtp.received.filter((m) => m.envelope.to.includes(sent.emailDraft.to)).length, 1);
    });
  });
}

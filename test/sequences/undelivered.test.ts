// A follow-up that cannot go does not stall its sequence (DESIGN §13), on both backends, with an injected clock and a
// real SMTP server: a follow-up the server refuses for good (its delivery FAILED) and one taken off the outbox (its
// delivery CANCELLED) are SKIPPED with the reason, with a `touch.skipped` event, in the transaction that ends the
// delivery; the next touch is then due from that moment, or the enrolment FINISHED.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import { addBusinessDays } from '../../src/domain/sequences/schedule.ts';
import { writeFollowUp } from '../../src/agent/follow-up/index.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const HOUR = 60 * 60_000;
const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

for (const kind of BACKENDS) {
  describe(`follow-ups that cannot go (${kind})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let runner: JobRunner | null = null;
    // A Wednesday at 10:00 UTC, inside the default window (08:00-18:00 UTC).
    const clock = new ManualClock('2026-01-14T10:00:00.000Z');

    const startRunner = async () => {
      runner = new JobRunner({
        database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
        handlers: [deliveryHandler({ clock, leaseMs: 10_000, retry: { maxAttempts: 2, delay: () => 50 } })], pollMs: 20, drainMs: 1_000,
      });
      await runner.start();
    };
    const stopRunner = async () => { await runner?.stop(); runner = null; };

    before(async () => {
      t = await startTestApp(kind, { clock, config: { allowPrivateHosts: true, secretsKey: randomBytes(32), rateLimitPerMinute: 1_000_000 } });
      await t.startWorker();
      smtp = await startSmtpServer();
    });
    afterEach(async () => {
      await stopRunner();
      smtp.answer = () => ({ accept: true });
      clock.set('2026-01-14T10:00:00.000Z');
    });
    after(async () => {
      await stopRunner();
      await smtp?.close();
      await t?.close();
    });

    /** A workspace sending through the test server, a sequence of `steps` auto follow-ups, and a run enrolled in it whose touch 1 went. */
    async function enrolledAndFirstSent(steps: number) {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
      }, t.deps.secrets(), null, clock));
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Bumps', steps: Array.from({ length: steps }, (_, i) => (
        { waitDays: 1, instruction: `Bump ${i + 1}.`, review: 'auto' })) } })).json.data;
      const email = `lead-${randomBytes(3).toString('hex')}@example.net`;
      const lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', email });
      const call = await createCall(t, key, lead.id);
      const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, atRest);
      assert.equal(run.status, 'AWAITING_APPROVAL');
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send', sequenceId: sequence.id } });
      assert.equal(approved.status, 200, approved.text);
      await startRunner();
      await touchIs(key, run.id, 1, 'SENT');
      return { key, runId: run.id as string, email };
    }

    const touches = async (key: string, runId: string) => {
      const res = await t.api('GET', `/api/v1/runs/${runId}/touches`, { key });
      assert.equal(res.status, 200, res.text);
      return res.json.data as any[];
    };
    const touchIs = (key: string, runId: string, number: number, status: string) =>
      eventually(`touch ${number} ${status}`, async () => {
        const list = await touches(key, runId);
        return list[number - 1]?.status === status ? list : false;
      }, 20_000, 150);
    const pass = () => runSchedulerPass(t.database.db, clock, writeFollowUp);
    const toDue = async (key: string, runId: string, number: number) => {
      const dueAt = (await touches(key, runId))[number - 1].dueAt;
      assert.ok(dueAt, `touch ${number} has a due time`);
      clock.set(dueAt);
    };
    const sequenceEvents = async (runId: string) => (await t.database.db.selectFrom('run_events').select(['type', 'attempt', 'error'])
      .where('run_id', '=', runId).orderBy('seq').execute())
      .filter((e) => e.type.startsWith('sequence.') || e.type.startsWith('touch.'))
      .map((e) => `${e.type}${e.attempt ? ` ${e.attempt}` : ''}${e.type === 'touch.skipped' ? ` ${e.error}` : ''}`);

    it('skips a follow-up whose delivery FAILED (delivery_failed) and sends the next one from then, in the thread', async () => {
      const { key, runId, email } = await enrolledAndFirstSent(2);
      const [firstMail] = smtp.received.filter((m) => m.envelope.to.includes(email));
      // The server refuses every follow-up to this lead for good (a 550 ends the delivery after one attempt).
      smtp.answer = (mail) => (mail.envelope.to.includes(email) && /In-Reply-To:/i.test(mail.raw.toString())
        ? { code: 550, message: 'Mailbox unavailable' } : { accept: true });
      await toDue(key, runId, 2);
      await pass();
      await pass();
      const failed = await touchIs(key, runId, 2, 'SKIPPED');
      assert.equal(failed[1].skipReason, 'delivery_failed');
      assert.equal(failed[1].delivery.status, 'FAILED');
      const skippedAt = clock.now();
      // The sequence goes on: touch 3 counts its business day from the failure, not from touch 1.
      assert.equal(failed[2].status, 'SCHEDULED');
      assert.equal(failed[2].dueAt, addBusinessDays(skippedAt, 1).toISOString());
      assert.equal((await t.api('GET', `/api/v1/runs/${runId}`, { key })).json.data.sequence.nextTouchAt, failed[2].dueAt);

      smtp.answer = () => ({ accept: true });
      await toDue(key, runId, 3);
      await pass();
      await pass();
      await touchIs(key, runId, 3, 'SENT');
      assert.equal((await t.api('GET', `/api/v1/runs/${runId}`, { key })).json.data.sequence.status, 'FINISHED');
      const mails = smtp.received.filter((m) => m.envelope.to.includes(email));
      assert.equal(mails.length, 2, 'touch 1 and touch 3; the refused touch 2 was never accepted');
      const [first, third] = await Promise.all([firstMail!, mails[1]!].map((m) => simpleParser(m.raw)));
      assert.equal(third!.inReplyTo, first!.messageId, 'touch 3 replies to the last e-mail that went');
      assert.deepEqual(await sequenceEvents(runId), [
        'sequence.enrolled', 'touch.sent 1', 'touch.drafted 2', 'touch.approved 2', 'touch.skipped 2 delivery_failed',
        'touch.drafted 3', 'touch.approved 3', 'touch.sent 3', 'sequence.finished',
      ]);
    });

    it('skips a follow-up taken off the outbox (cancelled) and finishes the sequence after the last', async () => {
      const { key, runId, email } = await enrolledAndFirstSent(1);
      // Due Thursday 10:00; at 19:00 the window has closed, so the follow-up waits in the outbox for Friday 08:00.
      await toDue(key, runId, 2);
      clock.advance(9 * HOUR);
      await pass();
      await pass();
      const deliveryId = (await t.database.db.selectFrom('touches').select('delivery_id').where('run_id', '=', runId)
        .where('number', '=', 2).executeTakeFirstOrThrow()).delivery_id!;
      const waiting = await eventually('the follow-up waits for the window', async () => {
        const list = await t.api('GET', '/api/v1/outbox', { key });
        return list.json.data.find((d: any) => d.id === deliveryId);
      });
      assert.equal(waiting.touch, 2);
      const cancelled = await t.api('DELETE', `/api/v1/outbox/${deliveryId}`, { key });
      assert.ok(cancelled.status < 300, cancelled.text);

      const after = await touches(key, runId);
      assert.equal(after[1].status, 'SKIPPED');
      assert.equal(after[1].skipReason, 'cancelled');
      assert.equal(after[1].delivery.status, 'CANCELLED');
      assert.equal((await t.api('GET', `/api/v1/runs/${runId}`, { key })).json.data.sequence.status, 'FINISHED');
      assert.deepEqual((await sequenceEvents(runId)).slice(-2), ['touch.skipped 2 cancelled', 'sequence.finished']);
      clock.advance(24 * HOUR);
      await pass();
      assert.equal(smtp.received.filter((m) => m.envelope.to.includes(email)).length, 1, 'only touch 1 went');
    });
  });
}

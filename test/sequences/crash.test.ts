// A worker process killed between the SMTP server's answer to a follow-up and the commit that records it (DESIGN §5,
// §13): another worker takes the delivery over and resends it once, with the same Message-ID and the same thread
// headers, so the buyer's mail client shows one e-mail; the touch is SENT once, has one delivery, one `touch.sent`,
// and the sequence goes on once. No second delivery is ever made for the touch. PostgreSQL only: several processes
// share one database only there.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { systemClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { changeSendingSettings } from '../../src/domain/sending/settings.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import { writeFollowUp } from '../../src/agent/follow-up/index.ts';
import { spawnLeadrun, type LeadrunProcess } from '../cli/support.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

describe('postgres: a worker killed between the SMTP answer to a follow-up and its commit', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let t: TestApp;
  const children: LeadrunProcess[] = [];
  const secretsKey = randomBytes(32);
  after(async () => {
    for (const child of children.splice(0)) await child.kill('SIGKILL');
    await t?.close();
  });

  it('resends the follow-up once with its Message-ID and thread, SENT once, and the sequence goes on once', async () => {
    t = await startTestApp('postgres', { config: { allowPrivateHosts: true, secretsKey } });
    const smtp = await startSmtpServer();
    const db = t.database.db;
    try {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await db.transaction().execute(async (trx) => {
        await saveMailSettings(trx, ws.id, {
          fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
        }, t.deps.secrets(), null, systemClock);
        // The window always open and no gap: the follow-up goes the moment it is due, whenever the test runs.
        await changeSendingSettings(trx, ws.id, { days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00', minGapSeconds: 0 }, null, systemClock);
      });
      const sequence = (await t.api('POST', '/api/v1/sequences', { key, body: { name: 'Bumps', steps: [
        { waitDays: 1, instruction: 'A short bump.', review: 'auto' },
        { waitDays: 2, instruction: 'A last note.', review: 'required' },
      ] } })).json.data;

      const child = spawnLeadrun(['worker'], {
        DATABASE_URL: t.databaseUrl!, ALLOW_PRIVATE_HOSTS: 'true', RUN_LEASE_SECONDS: '1', SECRETS_KEY: secretsKey.toString('base64'), LOG_LEVEL: 'info',
      });
      children.push(child);
      const email = `lead-${randomBytes(3).toString('hex')}@example.net`;
      const lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', email });
      const call = await createCall(t, key, lead.id);
      const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, atRest, 60_000);
      assert.equal(run.status, 'AWAITING_APPROVAL');
      // Touch 1 is accepted; the server has the whole of the follow-up, and before it answers, the worker dies.
      smtp.answer = async (_mail, attempt) => {
        if (attempt === 2) await child.kill('SIGKILL');
        return { accept: true };
      };
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, { key, body: { deliver: 'send', sequenceId: sequence.id } });
      assert.equal(approved.status, 200, approved.text);
      await eventually('touch 1 sent', async () => (await db.selectFrom('touches').select('status').where('run_id', '=', run.id)
        .where('number', '=', 1).executeTakeFirstOrThrow()).status === 'SENT', 30_000);

      // A business day passes: touch 2 is due now; the scheduler writes it and queues its delivery for the worker.
      const now = new Date();
      await db.updateTable('touches').set({ due_at: now, ready_at: now }).where('run_id', '=', run.id).where('number', '=', 2).execute();
      await runSchedulerPass(db, systemClock, writeFollowUp);
      await runSchedulerPass(db, systemClock, writeFollowUp);
      await eventually('the follow-up to reach the server and its worker to die', async () => smtp.attempts >= 2 && !child.isAlive(), 30_000);
      const touch2 = await db.selectFrom('touches').select(['status', 'delivery_id']).where('run_id', '=', run.id).where('number', '=', 2).executeTakeFirstOrThrow();
      assert.equal(touch2.status, 'APPROVED', 'the answer was never recorded');
      const stuck = await db.selectFrom('email_deliveries').select(['status', 'attempts']).where('id', '=', touch2.delivery_id!).executeTakeFirstOrThrow();
      assert.deepEqual(stuck, { status: 'DELIVERING', attempts: 1 });

      // The scheduler passes again while the delivery is stuck: it makes no second delivery of the touch.
      await runSchedulerPass(db, systemClock, writeFollowUp);
      const runner = new JobRunner({
        database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
        handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 6, delay: (_attempt, hint) => hint ?? 50 } })], pollMs: 50, drainMs: 1_000,
      });
      await runner.start();
      try {
        await eventually('touch 2 sent', async () => (await db.selectFrom('touches').select('status').where('run_id', '=', run.id)
          .where('number', '=', 2).executeTakeFirstOrThrow()).status === 'SENT', 30_000);
      } finally {
        await runner.stop();
      }
      const delivered = await db.selectFrom('email_deliveries').select(['status', 'attempts', 'message_id']).where('run_id', '=', run.id)
        .where('touch', '=', 2).execute();
      assert.equal(delivered.length, 1, 'one delivery of the touch');
      assert.equal(delivered[0]!.status, 'DELIVERED');
      assert.equal(delivered[0]!.attempts, 2);

      const mails = await Promise.all(smtp.received.filter((m) => m.envelope.to.includes(email)).map((m) => simpleParser(m.raw)));
      assert.equal(mails.length, 3, 'touch 1, and touch 2 resent once');
      const [first, second, again] = mails;
      assert.equal(second!.messageId, delivered[0]!.message_id, 'the follow-up keeps its Message-ID');
      assert.equal(again!.messageId, second!.messageId, 'the resend is the same message to the mail client');
      assert.equal(again!.inReplyTo, first!.messageId);
      assert.equal(again!.subject, second!.subject);

      const events = (await db.selectFrom('run_events').select(['type', 'attempt']).where('run_id', '=', run.id).orderBy('seq').execute())
        .filter((e) => e.type.startsWith('touch.') && e.attempt === 2).map((e) => e.type);
      assert.deepEqual(events, ['touch.drafted', 'touch.approved', 'touch.sent']);
      const touch3 = await db.selectFrom('touches').select(['status', 'due_at']).where('run_id', '=', run.id).where('number', '=', 3).executeTakeFirstOrThrow();
      assert.equal(touch3.status, 'SCHEDULED');
      assert.ok(touch3.due_at, 'the next touch is due once touch 2 went');
    } finally {
      await smtp.close();
    }
  });
});

// "Draft a response" (DESIGN §16, src/domain/replies/response.ts) end to end, on both backends, with an injected
// clock, a real SMTP server and a private Dovecot: an interested reply found in the inbox stops the sequence and has
// its response asked for at once; WRITER writes it in the scheduler's pass (AWAITING_APPROVAL, never in the follow-up
// queue); asking again answers the same touch; approved, it is sent in the thread, In-Reply-To the buyer's reply,
// though the sequence is STOPPED, and the reply leaves Replies to answer. A run approved without a sequence answers
// too, through a thread of its own that is never shown as a sequence. Refused: a reply of a class that is not answered,
// another workspace's reply, a response to a suppressed address at approval.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { checkReplies } from '../../src/mail/replies.ts';
import { loadMailTransport, saveMailSettings, type ImapSettings } from '../../src/domain/mail-settings/settings.ts';
import { runSchedulerPass } from '../../src/domain/sequences/scheduler.ts';
import { SEQUENCES_TICK } from '../../src/domain/sequences/tick.ts';
import { writeFollowUp } from '../../src/agent/follow-up/index.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { replyMessage } from './support.ts';

/** Ada's reply to `inReplyTo`, with its Message-ID. */
function buyerReply(from: string, inReplyTo: string, body: string): { raw: string; messageId: string } {
  const messageId = `<${randomBytes(8).toString('hex')}@buyer.example>`;
  return { raw: replyMessage(inReplyTo, 'Wed, 14 Jan 2026 11:00:00 +0000', body, { from: `Ada Lovelace <${from}>`, messageId }), messageId };
}

for (const kind of BACKENDS) {
  describe(`draft a response (${kind})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let dovecot: Dovecot;
    let runner: JobRunner | null = null;
    // A Wednesday at 10:00 UTC, inside the send window.
    const clock = new ManualClock('2026-01-14T10:00:00.000Z');

    before(async () => {
      [t, smtp, dovecot] = await Promise.all([
        startTestApp(kind, { clock, config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } }), startSmtpServer(), startDovecot(),
      ]);
      await t.startWorker();
      runner = new JobRunner({
        database: t.database, clock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
        handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 3, delay: () => 50 } })], pollMs: 20, drainMs: 1_000,
      });
      await runner.start();
    });
    afterEach(() => { clock.set('2026-01-14T10:00:00.000Z'); });
    after(async () => {
      await runner?.stop();
      await Promise.all([smtp?.close(), dovecot?.stop()]);
      await t?.close();
    });

    /** A workspace that sends over the test SMTP server and reads the Dovecot inbox, and a lead's e-mail sent. */
    async function sent(sequenceId?: string | null) {
      const ws = await t.workspace('pro');
      const { key } = await t.key(ws.id);
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password },
      }, t.deps.secrets(), null, clock));
      const imap: ImapSettings = (await loadMailTransport(t.database.db, ws.id, t.deps.secrets(), t.deps.config)).imap!;
      const check = () => checkReplies(t.database.db, ws.id, imap, clock, { allowPrivateHosts: true, cpu: t.deps.cpu });
      const email = `ada-${randomBytes(4).toString('hex')}@buyer.example`;
      const lead = await createLead(t, key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', email, status: 'CONTACTED' });
      const call = await createCall(t, key, lead.id);
      const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, (r) => r.status === 'AWAITING_APPROVAL');
      const approved = await t.api('POST', `/api/v1/runs/${run.id}/approve`, {
        key, body: { deliver: 'send', ...(sequenceId === undefined ? {} : { sequenceId }) },
      });
      assert.equal(approved.status, 200, approved.text);
      const first = await eventually('the first e-mail', async () => {
        const mail = smtp.received.find((m) => m.envelope.to.includes(email));
        return mail ? simpleParser(mail.raw) : false;
      }, 20_000);
      assert.ok(first.messageId);
      return { workspaceId: ws.id, key, email, leadId: lead.id as string, runId: run.id as string, first, check };
    }

    const touches = async (key: string, runId: string) => (await t.api('GET', `/api/v1/runs/${runId}/touches`, { key })).json.data as any[];
    const touchIs = (key: string, runId: string, number: number, status: string) =>
      eventually(`touch ${number} ${status}`, async () => {
        const touch = (await touches(key, runId)).find((x) => x.number === number);
        return touch?.status === status ? touch : false;
      }, 20_000, 50);
    const pass = () => runSchedulerPass(t.database.db, clock, writeFollowUp);
    /**
     * The mailbox's pace (DESIGN §14) holds a second e-mail a minute or two after the first: once the delivery of
     * touch `number` waits for it, the clock moves to its time. Never while a send is under way: a clock that jumps
     * past a job's lease hands the job to another runner.
     */
    const afterPace = async (runId: string, number: number) => {
      const delivery = await eventually(`touch ${number}'s delivery claimed or waiting`, async () => {
        const row = await t.database.db.selectFrom('email_deliveries').select(['status', 'scheduled_for']).where('run_id', '=', runId)
          .where('touch', '=', number).executeTakeFirst();
        return row && (row.status === 'DELIVERED' || (row.status === 'SCHEDULED' && row.scheduled_for)) ? row : false;
      }, 20_000);
      if (delivery.status === 'SCHEDULED') clock.set(delivery.scheduled_for!);
    };
    const toAnswer = async (key: string) => (await t.api('GET', '/api/v1/replies?toAnswer=true', { key })).json.data as any[];

    it('drafts the response to an interested reply when it is read, and sends it in the thread once approved', async (c) => {
      const lead = await sent();
      const reply = buyerReply(lead.email, lead.first.messageId!, 'Thanks, this is interesting. Could we talk on Tuesday? And what would a pilot cost?');
      await dovecot.deliver(reply.raw);
      assert.equal((await lead.check()).found, 1);
      const run = (await t.api('GET', `/api/v1/runs/${lead.runId}`, { key: lead.key })).json.data;
      assert.deepEqual([run.sequence.status, run.sequence.stopReason], ['STOPPED', 'replied']);

      // Asked for at once, touch 4 after the two skipped follow-ups, and the scheduler's job brought forward to now.
      const [listed] = await toAnswer(lead.key);
      assert.equal(listed.classification, 'interested');
      assert.deepEqual(listed.response, { number: 4, status: 'SCHEDULED' });
      const tick = await t.database.db.selectFrom('jobs').select('available_at').where('kind', '=', SEQUENCES_TICK).where('status', '=', 'QUEUED').executeTakeFirst();
      if (tick) assert.ok(tick.available_at <= clock.now(), 'the scheduler is due now');

      await pass();
      const written = await touchIs(lead.key, lead.runId, 4, 'AWAITING_APPROVAL');
      assert.equal(written.kind, 'response');
      assert.equal(written.replyId, listed.id);
      assert.equal(written.draft.subject, `Re: ${lead.first.subject}`);
      assert.ok(written.draft.body.length > 40, written.draft.body);
      c.diagnostic(`the response: ${written.draft.body}`);
      assert.equal(written.draft.to, lead.email);
      // Not in the follow-ups' review queue: it waits beside its reply.
      assert.deepEqual((await t.api('GET', '/api/v1/touches', { key: lead.key })).json.data, []);
      assert.deepEqual((await toAnswer(lead.key))[0].response, { number: 4, status: 'AWAITING_APPROVAL' });

      // Asking again answers the same touch.
      const again = await t.api('POST', `/api/v1/replies/${listed.id}/response`, { key: lead.key, body: {} });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.data.number, 4);

      const approved = await t.api('POST', `/api/v1/runs/${lead.runId}/touches/4/approve`, { key: lead.key, body: {} });
      assert.equal(approved.status, 200, approved.text);
      await afterPace(lead.runId, 4);
      await touchIs(lead.key, lead.runId, 4, 'SENT');
      const mails = smtp.received.filter((m) => m.envelope.to.includes(lead.email));

      assert.equal(mails.length, 2, 'the first e-mail and the response, no follow-up');
      const response = await simpleParser(mails[1]!.raw);
      assert.equal(response.subject, `Re: ${lead.first.subject}`);
      assert.equal(response.inReplyTo, reply.messageId);
      assert.deepEqual([response.references].flat(), [lead.first.messageId, reply.messageId]);
      assert.equal((await toAnswer(lead.key)).length, 0, 'answered');

      const events = (await t.database.db.selectFrom('run_events').select(['type', 'attempt']).where('run_id', '=', lead.runId).orderBy('seq').execute())
        .map((e) => `${e.type}${e.attempt ? ` ${e.attempt}` : ''}`);
      for (const event of ['reply.response_requested', 'touch.drafted 4', 'touch.awaiting_approval 4', 'touch.approved 4', 'touch.sent 4']) {
        assert.ok(events.includes(event), `${event} in ${events.join(', ')}`);
      }
      const run2 = (await t.api('GET', `/api/v1/runs/${lead.runId}`, { key: lead.key })).json.data;
      assert.equal(run2.sequence.status, 'STOPPED', 'a response does not restart the sequence');
    });

    it('answers a run approved without a sequence through a thread of its own, never shown as a sequence', async () => {
      const lead = await sent(null);
      const reply = buyerReply(lead.email, lead.first.messageId!, 'Who else on your side would be involved in the rollout?');
      await dovecot.deliver(reply.raw);
      assert.equal((await lead.check()).found, 1);
      const [listed] = await toAnswer(lead.key);
      assert.ok(listed, 'the reply is to answer');
      const asked = await t.api('POST', `/api/v1/replies/${listed.id}/response`, { key: lead.key, body: {} });
      assert.equal(asked.status, 202, asked.text);
      assert.deepEqual([asked.json.data.number, asked.json.data.kind, asked.json.data.status], [2, 'response', 'SCHEDULED']);
      await pass();
      await touchIs(lead.key, lead.runId, 2, 'AWAITING_APPROVAL');
      const run = (await t.api('GET', `/api/v1/runs/${lead.runId}`, { key: lead.key })).json.data;
      assert.equal(run.sequence, null);
      // Sequence actions still say the run has none.
      assertProblem(await t.api('POST', `/api/v1/runs/${lead.runId}/sequence/stop`, { key: lead.key, body: {} }), 409, 'invalid_state');

      // Skipped, it may be asked for anew; regenerated, the scheduler is asked now.
      const skipped = await t.api('POST', `/api/v1/runs/${lead.runId}/touches/2/reject`, { key: lead.key, body: {} });
      assert.equal(skipped.status, 200, skipped.text);
      assert.equal((await toAnswer(lead.key))[0].response, null);
      const anew = await t.api('POST', `/api/v1/replies/${listed.id}/response`, { key: lead.key, body: {} });
      assert.equal(anew.status, 202, anew.text);
      assert.equal(anew.json.data.number, 3);
      await pass();
      await touchIs(lead.key, lead.runId, 3, 'AWAITING_APPROVAL');
      const regenerate = await t.api('POST', `/api/v1/runs/${lead.runId}/touches/3/reject`, { key: lead.key, body: { regenerate: true, feedback: 'Shorter.' } });
      assert.equal(regenerate.status, 200, regenerate.text);
      await pass();
      const rewritten = await touchIs(lead.key, lead.runId, 3, 'AWAITING_APPROVAL');
      assert.equal(rewritten.draft.version, 2);

      const approved = await t.api('POST', `/api/v1/runs/${lead.runId}/touches/3/approve`, { key: lead.key, body: {} });
      assert.equal(approved.status, 200, approved.text);
      await afterPace(lead.runId, 3);
      await touchIs(lead.key, lead.runId, 3, 'SENT');
      const response = await simpleParser(smtp.received.filter((m) => m.envelope.to.includes(lead.email))[1]!.raw);
      assert.equal(response.inReplyTo, reply.messageId);
    });

    it('refuses a reply that is not answered, another workspace\'s reply, and approval to an address suppressed since', async () => {
      const lead = await sent();
      const unsubscribe = buyerReply(lead.email, lead.first.messageId!, 'Please remove me from your list.');
      await dovecot.deliver(unsubscribe.raw);
      assert.equal((await lead.check()).found, 1);
      const [stored] = (await t.api('GET', '/api/v1/replies', { key: lead.key })).json.data;
      assert.equal(stored.classification, 'unsubscribe');
      const refused = await t.api('POST', `/api/v1/replies/${stored.id}/response`, { key: lead.key, body: {} });
      assertProblem(refused, 409, 'invalid_state');
      assert.match(refused.json.detail, /unsubscribe/);

      const other = await t.workspace('pro');
      const { key: otherKey } = await t.key(other.id);
      assertProblem(await t.api('POST', `/api/v1/replies/${stored.id}/response`, { key: otherKey, body: {} }), 404, 'not_found');
      assertProblem(await t.api('POST', '/api/v1/replies/not-a-uuid/response', { key: lead.key, body: {} }), 404, 'not_found');

      // A person says it was interest after all: a response is drafted; the address stays suppressed, so approval is refused.
      const marked = await t.api('POST', `/api/v1/replies/${stored.id}/classification`, { key: lead.key, body: { classification: 'interested' } });
      assert.equal(marked.status, 200, marked.text);
      assert.ok(marked.json.data.response, 'asked for on the correction');
      await pass();
      const waiting = (await touches(lead.key, lead.runId)).find((x) => x.kind === 'response');
      assert.equal(waiting?.status, 'AWAITING_APPROVAL');
      const blocked = await t.api('POST', `/api/v1/runs/${lead.runId}/touches/${waiting.number}/approve`, { key: lead.key, body: {} });
      assertProblem(blocked, 409, 'recipient_suppressed');
    });
  });
}

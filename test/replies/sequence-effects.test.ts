// What a reply does to the follow-ups (DESIGN §13, §16), end to end on both backends: replies put into a private
// Dovecot and found by the reply check stop the lead's sequence (`replied`), pause it until one business day after
// an out-of-office's return, or suppress the address and stop it (`unsubscribe`); the run's `sequence` shows each.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkReplies } from '../../src/mail/replies.ts';
import { loadMailTransport, saveMailSettings, type ImapSettings } from '../../src/domain/mail-settings/settings.ts';
import { enrolRun } from '../../src/domain/sequences/enrolments.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { createCall, createLead, db, startRun } from '../http/support.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { replyMessage } from './support.ts';

for (const kind of BACKENDS) {
  describe(`a reply's effects on the lead's follow-ups (${kind})`, () => {
    let t: TestApp;
    let dovecot: Dovecot;

    before(async () => {
      [t, dovecot] = await Promise.all([startTestApp(kind, { config: { allowPrivateHosts: true } }), startDovecot()]);
      await t.startWorker();
    });
    after(async () => {
      await Promise.all([t?.close(), dovecot?.stop()]);
    });

    /** A workspace reading the Dovecot inbox, and a lead whose e-mail went out and enrolled it in the default sequence. */
    async function enrolledLead(timeZone?: string) {
      const ws = await t.workspace('pro');
      const key = (await t.key(ws.id)).key;
      await db(t).transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password },
      }, t.deps.secrets(), null, t.deps.clock));
      const imap: ImapSettings = (await loadMailTransport(db(t), ws.id, t.deps.secrets(), t.deps.config)).imap!;
      const check = () => checkReplies(db(t), ws.id, imap, t.deps.clock, { allowPrivateHosts: true, cpu: t.deps.cpu });
      const email = `daniel-${randomBytes(4).toString('hex')}@acme.example`;
      const lead = await createLead(t, key, { name: 'Daniel Ng', email, companyName: 'Acme', status: 'CONTACTED', ...(timeZone ? { timeZone } : {}) });
      const call = await createCall(t, key, lead.id);
      const run = await waitForRun(t, key, (await startRun(t, key, lead.id, call.id)).id, (r) => r.status === 'AWAITING_APPROVAL');
      const messageId = `<${randomBytes(10).toString('hex')}@leadrun.test>`;
      const deliveryId = randomUUID();
      const now = new Date();
      await db(t).insertInto('email_deliveries').values({
        id: deliveryId, workspace_id: ws.id, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
        status: 'DELIVERED', message_id: messageId, attempts: 1, queued_at: now, delivered_at: now, error: null, response: '250 ok',
      }).execute();
      await db(t).transaction().execute((trx) => enrolRun(trx, {
        workspaceId: ws.id, runId: run.id, method: 'send', senderUserId: null, draftId: run.emailDraft.id, deliveryId, now,
      }));
      const sequence = async () => (await t.api('GET', `/api/v1/runs/${run.id}`, { key })).json.data.sequence;
      assert.equal((await sequence()).status, 'ACTIVE');
      return { key, email, leadId: lead.id as string, runId: run.id as string, messageId, check, sequence };
    }

    it('stops the sequence on an interested reply, with the reason `replied`', async () => {
      const lead = await enrolledLead();
      await dovecot.deliver(replyMessage(lead.messageId, 'Tue, 3 Mar 2026 09:00:00 +0000', 'Yes, Tuesday works. Send the invite.'));
      assert.equal((await lead.check()).found, 1);
      const sequence = await lead.sequence();
      assert.deepEqual([sequence.status, sequence.stopReason], ['STOPPED', 'replied']);
      const touches = (await t.api('GET', `/api/v1/runs/${lead.runId}/touches`, { key: lead.key })).json.data;
      const followUps = touches.filter((touch: any) => touch.number > 1 && touch.kind === 'sequence');
      assert.ok(followUps.length > 0 && followUps.every((touch: any) => touch.status === 'SKIPPED'), JSON.stringify(touches));
      // The buyer is interested: a response is asked for, in the same thread, after the skipped follow-ups.
      assert.deepEqual(touches.filter((touch: any) => touch.kind === 'response').map((touch: any) => touch.number), [followUps.length + 2]);
    });

    it('pauses the sequence until one business day after an out-of-office\'s return, then leaves it paused, not stopped', async () => {
      const lead = await enrolledLead();
      // Back on Friday 13 March: the sequence goes on on Monday 16 March.
      await dovecot.deliver(replyMessage(lead.messageId, 'Mon, 9 Mar 2026 09:00:00 +0000',
        'I am out of the office until Friday, March 13, 2026 with limited access to e-mail.'));
      assert.equal((await lead.check()).found, 1);
      const sequence = await lead.sequence();
      assert.equal(sequence.status, 'PAUSED');
      assert.equal(sequence.pausedUntil.slice(0, 10), '2026-03-16');
    });

    it('counts the return in the lead\'s time zone, and a person\'s correction to `other` ends the pause at once', async () => {
      const lead = await enrolledLead('America/New_York');
      await dovecot.deliver(replyMessage(lead.messageId, 'Mon, 9 Mar 2026 09:00:00 +0000', 'Out of office until Friday, March 13, 2026.'));
      assert.equal((await lead.check()).found, 1);
      const paused = await lead.sequence();
      // Midnight at the start of Monday 16 March in New York (summer time from 8 March): 04:00 UTC.
      assert.deepEqual([paused.status, paused.pausedUntil], ['PAUSED', '2026-03-16T04:00:00.000Z']);
      const [reply] = (await t.api('GET', `/api/v1/runs/${lead.runId}`, { key: lead.key })).json.data.replies;
      const marked = await t.api('POST', `/api/v1/replies/${reply.id}/classification`, { key: lead.key, body: { classification: 'auto_reply' } });
      assert.equal(marked.status, 200, marked.text);
      const resumed = await lead.sequence();
      assert.deepEqual([resumed.status, resumed.pausedUntil], ['ACTIVE', null]);
    });

    it('suppresses the address on an "unsubscribe" reply and stops the sequence; the lead is "Do not contact"', async () => {
      const lead = await enrolledLead();
      await dovecot.deliver(replyMessage(lead.messageId, 'Tue, 3 Mar 2026 09:00:00 +0000', 'Please remove me from your list and stop e-mailing me.'));
      assert.equal((await lead.check()).found, 1);
      const sequence = await lead.sequence();
      assert.equal(sequence.status, 'STOPPED');
      assert.ok(['replied', 'unsubscribed'].includes(sequence.stopReason), sequence.stopReason);
      const entries = (await t.api('GET', `/api/v1/suppressions?q=${encodeURIComponent(lead.email)}`, { key: lead.key })).json.data;
      assert.deepEqual(entries.map((e: any) => [e.email, e.reason]), [[lead.email, 'unsubscribed']]);
      assert.equal((await t.api('GET', `/api/v1/leads/${lead.leadId}`, { key: lead.key })).json.data.doNotContact, true);
    });
  });
}

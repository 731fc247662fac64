// What a reply does (DESIGN §16, src/domain/replies/effects.ts), on both backends, with replies put into a private
// Dovecot and found by the reply check: an interested reply moves a CONTACTED lead to QUALIFIED (unless the workspace
// turned that off), a "not now" that names a time sets the lead's nextActionAt; each is a run event and an audit entry,
// applied once however often the inbox is read, and the draft.replied webhook carries the reply's class. A person's
// correction (POST /api/v1/replies/{id}/classification) is stored as theirs, undoes the nextActionAt the old class set,
// applies the new class's effects, does nothing twice, and is refused for bad days and other workspaces' replies.
// Stops, pauses and suppressions go through src/domain/sequences/stops.ts and suppressions/suppress.ts, whose owners
// test them; here their callers' days are tested: one business day after the return.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkReplies } from '../../src/mail/replies.ts';
import { addressesToSuppress, businessDayAfter, startOfDay } from '../../src/domain/replies/effects.ts';
import { loadMailTransport, saveMailSettings, type ImapSettings } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, createCall, createLead, db, startRun } from '../http/support.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { replyMessage } from './support.ts';

describe('the days a reply names', () => {
  it('resumes one business day after the return: Friday → Monday, Saturday → Monday, Monday → Tuesday', () => {
    assert.equal(businessDayAfter('2026-03-13'), '2026-03-16');
    assert.equal(businessDayAfter('2026-03-14'), '2026-03-16');
    assert.equal(businessDayAfter('2026-03-15'), '2026-03-16');
    assert.equal(businessDayAfter('2026-03-16'), '2026-03-17');
    assert.equal(businessDayAfter('2026-12-31'), '2027-01-01');
  });
  it('starts a day at midnight in the workspace\'s time zone, across a change of summer time', () => {
    assert.equal(startOfDay('2026-03-16', 'UTC').toISOString(), '2026-03-16T00:00:00.000Z');
    assert.equal(startOfDay('2026-03-16', 'Europe/Berlin').toISOString(), '2026-03-15T23:00:00.000Z');
    assert.equal(startOfDay('2026-07-01', 'Europe/Berlin').toISOString(), '2026-06-30T22:00:00.000Z');
    assert.equal(startOfDay('2026-03-29', 'Europe/Berlin').toISOString(), '2026-03-28T23:00:00.000Z');
    assert.equal(startOfDay('2026-11-02', 'America/New_York').toISOString(), '2026-11-02T05:00:00.000Z');
  });
  it('suppresses the lead\'s address and a colleague\'s that replied, each once', () => {
    assert.deepEqual(addressesToSuppress('daniel@acme.example', 'Daniel Ng <Daniel@Acme.example>'), ['daniel@acme.example']);
    assert.deepEqual(addressesToSuppress('daniel@acme.example', 'Maria <maria@acme.example>'), ['daniel@acme.example', 'maria@acme.example']);
    assert.deepEqual(addressesToSuppress(null, 'maria@acme.example'), ['maria@acme.example']);
    assert.deepEqual(addressesToSuppress(null, 'no address here'), []);
  });
});

for (const kind of BACKENDS) {
  describe(`a reply's effects (${kind})`, () => {
    let t: TestApp;
    let dovecot: Dovecot;

    /** A workspace reading the shared Dovecot inbox, with a webhook endpoint that hears draft.replied. */
    async function workspace() {
      const ws = await t.workspace('pro');
      const key = (await t.key(ws.id)).key;
      await db(t).transaction().execute((trx) => saveMailSettings(trx, ws.id, {
        imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password },
      }, t.deps.secrets(), null, t.deps.clock));
      const imap: ImapSettings = (await loadMailTransport(db(t), ws.id, t.deps.secrets(), t.deps.config)).imap!;
      const hook = await t.api('POST', '/api/v1/webhooks', { key, body: { url: 'https://93.184.215.14/hook', events: ['draft.replied'] } });
      assert.equal(hook.status, 201, JSON.stringify(hook.json));
      const check = () => checkReplies(db(t), ws.id, imap, t.deps.clock, { allowPrivateHosts: true, cpu: t.deps.cpu });
      return { workspaceId: ws.id, key, check };
    }

    /** A CONTACTED lead whose run's e-mail was delivered. */
    async function deliveredRun(ws: { workspaceId: string; key: string }) {
      const lead = await createLead(t, ws.key, { name: 'Daniel Ng', email: 'daniel@acme.example', companyName: 'Acme', status: 'CONTACTED' });
      const call = await createCall(t, ws.key, lead.id);
      const started = await startRun(t, ws.key, lead.id, call.id);
      const run = await waitForRun(t, ws.key, started.id, (r) => r.status === 'AWAITING_APPROVAL');
      const messageId = `<${randomBytes(10).toString('hex')}@leadrun.test>`;
      await db(t).insertInto('email_deliveries').values({
        id: randomUUID(), workspace_id: ws.workspaceId, run_id: run.id, draft_id: run.emailDraft.id, sender_user_id: null, method: 'send',
        status: 'DELIVERED', message_id: messageId, attempts: 1, queued_at: new Date('2026-03-02T09:00:00Z'),
        delivered_at: new Date('2026-03-02T09:00:01Z'), error: null, response: '250 ok',
      }).execute();
      return { leadId: lead.id as string, callId: call.id as string, runId: run.id as string, messageId };
    }

    // The reply's own events: the response an interested reply asks for is written by the scheduler, whose touch
    // events come when they come (test/replies/response.test.ts follows them).
    const eventsOf = async (runId: string) => (await db(t).selectFrom('run_events').select('type')
      .where('run_id', '=', runId).orderBy('seq').execute()).map((e) => e.type).filter((type) => !type.startsWith('touch.'));
    const auditOf = async (runId: string, action: string) => db(t).selectFrom('audit_log').selectAll()
      .where('target_id', '=', runId).where('action', '=', action).execute();
    const lead = async (key: string, id: string) => (await t.api('GET', `/api/v1/leads/${id}`, { key })).json.data;
    const hooksOf = async (runId: string) => (await db(t).selectFrom('webhook_events').select('payload')
      .where('run_id', '=', runId).where('type', '=', 'draft.replied').orderBy('occurred_at').execute())
      .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as { data: any });

    before(async () => {
      [t, dovecot] = await Promise.all([startTestApp(kind, { config: { allowPrivateHosts: true } }), startDovecot()]);
      await t.startWorker();
    });
    after(async () => {
      await Promise.all([t?.close(), dovecot?.stop()]);
    });

    it('qualifies an interested lead and sets nextActionAt for "not now until Q3", once, with events, audit and the webhook\'s class', async () => {
      const ws = await workspace();
      const interested = await deliveredRun(ws);
      const later = await deliveredRun(ws);
      await dovecot.deliver(replyMessage(interested.messageId, 'Tue, 3 Mar 2026 09:00:00 +0000', 'Yes, Tuesday works. Send the invite and let\'s go.'));
      await dovecot.deliver(replyMessage(later.messageId, 'Wed, 4 Mar 2026 09:00:00 +0000', 'Not now, circle back in Q3 please.'));
      assert.equal((await ws.check()).found, 2);

      assert.equal((await lead(ws.key, interested.leadId)).status, 'QUALIFIED');
      assert.equal((await lead(ws.key, interested.leadId)).nextActionAt, null);
      const postponed = await lead(ws.key, later.leadId);
      assert.equal(postponed.status, 'CONTACTED');
      assert.equal(postponed.nextActionAt, '2026-07-01T00:00:00.000Z');
      // The lead page's list shows it too: the stored JSON holds the field.
      const listed = (await t.api('GET', `/api/v1/leads?limit=100`, { key: ws.key })).json.data.find((l: any) => l.id === later.leadId);
      assert.equal(listed.nextActionAt, '2026-07-01T00:00:00.000Z');

      assert.deepEqual((await eventsOf(interested.runId)).slice(-3), ['draft.replied', 'reply.lead_qualified', 'reply.response_requested']);
      assert.deepEqual((await eventsOf(later.runId)).slice(-2), ['draft.replied', 'reply.next_action_set']);
      const audit = await auditOf(interested.runId, 'reply.lead_qualified');
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.source, 'system');
      assert.equal((audit[0]!.details as any).by, 'engine');

      const [hook] = await hooksOf(interested.runId);
      assert.equal(hook!.data.reply.classification, 'interested');
      assert.deepEqual(hook!.data.replies.map((r: any) => [r.classification, r.classifiedBy]), [['interested', 'engine']]);
      const run = (await t.api('GET', `/api/v1/runs/${later.runId}`, { key: ws.key })).json.data;
      assert.deepEqual(run.replies.map((r: any) => [r.classification, r.followUpAfter]), [['not_now', '2026-07-01']]);

      // The inbox read again from the start: nothing is recorded, nothing is applied twice.
      await db(t).updateTable('mailbox_cursors').set({ uid_validity: 1 }).where('workspace_id', '=', ws.workspaceId).execute();
      const again = await ws.check();
      assert.ok(again.rescanned && again.found === 0, JSON.stringify(again));
      assert.equal((await eventsOf(interested.runId)).filter((e) => e === 'reply.lead_qualified').length, 1);
      assert.equal((await auditOf(later.runId, 'reply.next_action_set')).length, 1);
    });

    it('leaves the lead CONTACTED when the workspace turned qualify-on-interest off', async () => {
      const ws = await workspace();
      await db(t).updateTable('workspaces').set({ qualify_on_interest: false }).where('id', '=', ws.workspaceId).execute();
      const run = await deliveredRun(ws);
      await dovecot.deliver(replyMessage(run.messageId, 'Thu, 5 Mar 2026 09:00:00 +0000', 'Yes, Tuesday works. Send the invite and let\'s go.'));
      assert.equal((await ws.check()).found, 1);
      assert.equal((await lead(ws.key, run.leadId)).status, 'CONTACTED');
      assert.ok(!(await eventsOf(run.runId)).includes('reply.lead_qualified'));
    });

    it('Mark as…: stored as the person\'s, the old class\'s nextActionAt undone, the new class applied, once, in the workspace', async () => {
      const ws = await workspace();
      const run = await deliveredRun(ws);
      await dovecot.deliver(replyMessage(run.messageId, 'Fri, 6 Mar 2026 09:00:00 +0000', 'Not now, circle back in Q3 please.'));
      assert.equal((await ws.check()).found, 1);
      const [stored] = (await t.api('GET', `/api/v1/runs/${run.runId}`, { key: ws.key })).json.data.replies;
      assert.equal((await lead(ws.key, run.leadId)).nextActionAt, '2026-07-01T00:00:00.000Z');
      const mark = (body: unknown, key = ws.key, id = stored.id) => t.api('POST', `/api/v1/replies/${id}/classification`, { key, body });

      const marked = await mark({ classification: 'interested' });
      assert.equal(marked.status, 200, JSON.stringify(marked.json));
      assert.deepEqual([marked.json.data.classification, marked.json.data.classifiedBy, marked.json.data.followUpAfter], ['interested', 'person', null]);
      const after = await lead(ws.key, run.leadId);
      assert.deepEqual([after.status, after.nextActionAt], ['QUALIFIED', null]);
      assert.deepEqual((await eventsOf(run.runId)).slice(-4), ['reply.classified', 'reply.next_action_set', 'reply.lead_qualified', 'reply.response_requested']);
      const requestAudit = await auditOf(stored.id, 'reply.classified');
      assert.equal(requestAudit.length, 1);
      assert.equal(requestAudit[0]!.source, 'api');
      const effectAudit = await auditOf(run.runId, 'reply.lead_qualified');
      assert.deepEqual([effectAudit[0]!.source, (effectAudit[0]!.details as any).by], ['api', 'person']);
      const hooks = await hooksOf(run.runId);
      assert.deepEqual(hooks.map((h) => [h.data.reply.classification, h.data.reply.classifiedBy]), [['not_now', 'engine'], ['interested', 'person']]);

      // The same mark again changes nothing.
      assert.equal((await mark({ classification: 'interested' })).status, 200);
      assert.equal((await eventsOf(run.runId)).filter((e) => e === 'reply.classified').length, 1);

      // A day out of office sets nothing on the lead (no sequence to pause here); the run shows it.
      const away = await mark({ classification: 'out_of_office', returnsOn: '2026-03-13' });
      assert.deepEqual([away.json.data.classification, away.json.data.returnsOn], ['out_of_office', '2026-03-13']);
      const shown = (await t.api('GET', `/api/v1/runs/${run.runId}`, { key: ws.key })).json.data;
      assert.deepEqual([shown.reply.classification, shown.reply.returnsOn, shown.reply.classifiedBy], ['out_of_office', '2026-03-13', 'person']);

      assertInvalid(await mark({ classification: 'not_now', followUpAfter: '2026-02-30' }), ['followUpAfter']);
      assertInvalid(await mark({ classification: 'interested', returnsOn: '2026-03-13' }), ['returnsOn']);
      assertInvalid(await mark({ classification: 'maybe' }), ['classification']);
      assertProblem(await mark({ classification: 'interested' }, ws.key, randomUUID()), 404);
      assertProblem(await mark({ classification: 'interested' }, ws.key, 'not-a-uuid'), 404);
      const other = await workspace();
      assertProblem(await mark({ classification: 'unsubscribe' }, other.key), 404);
      const reread = (await t.api('GET', `/api/v1/runs/${run.runId}`, { key: ws.key })).json.data.reply;
      assert.equal(reread.classification, 'out_of_office');
      // A key that may write runs but not read them gets 204.
      const writeOnly = (await t.key(ws.workspaceId, ['runs:write'])).key;
      assert.equal((await mark({ classification: 'other' }, writeOnly)).status, 204);
    });

    it('lists the replies to answer: a person wrote, and no e-mail went to the lead since', async () => {
      const ws = await workspace();
      const asked = await deliveredRun(ws);
      const away = await deliveredRun(ws);
      const answered = await deliveredRun(ws);
      await dovecot.deliver(replyMessage(asked.messageId, 'Mon, 9 Mar 2026 09:00:00 +0000', 'Yes, Tuesday works. Send the invite and let\'s go.'));
      await dovecot.deliver(replyMessage(away.messageId, 'Mon, 9 Mar 2026 10:00:00 +0000', 'I am out of the office until 16 March with no access to e-mail.'));
      await dovecot.deliver(replyMessage(answered.messageId, 'Mon, 9 Mar 2026 11:00:00 +0000', 'Interesting. What would a pilot cost?'));
      assert.equal((await ws.check()).found, 3);
      // The rep answered the third: a second run for that lead, its e-mail queued after the reply.
      const next = await startRun(t, ws.key, answered.leadId, answered.callId);
      const nextRun = await waitForRun(t, ws.key, next.id, (r) => r.status === 'AWAITING_APPROVAL');
      await db(t).insertInto('email_deliveries').values({
        id: randomUUID(), workspace_id: ws.workspaceId, run_id: nextRun.id, draft_id: nextRun.emailDraft.id, sender_user_id: null,
        method: 'send', status: 'QUEUED', message_id: `<${randomBytes(6).toString('hex')}@leadrun.test>`, attempts: 0,
        queued_at: new Date('2026-03-09T12:00:00Z'), delivered_at: null, error: null, response: null,
      }).execute();
      const list = (await t.api('GET', '/api/v1/replies?toAnswer=true', { key: ws.key })).json.data;
      assert.deepEqual(list.map((r: any) => r.runId), [asked.runId]);
      assertInvalid(await t.api('GET', '/api/v1/replies?toAnswer=yes', { key: ws.key }), ['toAnswer']);
    });
  });
}

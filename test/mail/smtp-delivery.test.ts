// Approve and send (DESIGN §7) against a real SMTP server on loopback, on both backends: the message arrives with
// the sender, recipient, Reply-To, subject, fixed Message-ID and signature; AUTH, STARTTLS and TLS under a
// self-signed certificate; a 4xx is retried and then delivered, a 5xx fails at once and can be retried by hand; the
// lead becomes CONTACTED; two approvals racing send one message; a worker killed between the server's answer and
// the commit leads to one resend with the same Message-ID (PostgreSQL: a real `leadrun worker` process).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { simpleParser } from 'mailparser';
import { systemClock } from '../../src/clock.ts';
import { JobRunner } from '../../src/jobs/runner.ts';
import { deliveryHandler } from '../../src/jobs/handlers/email-deliver.ts';
import { saveMailSettings, type MailSettingsInput } from '../../src/domain/mail-settings/settings.ts';
import { spawnLeadrun, type LeadrunProcess } from '../cli/support.ts';
import { BACKENDS, silentLogger, startTestApp, waitForRun, type TestApp } from '../helpers.ts';
import { assertProblem, createCall, createLead, startRun } from '../http/support.ts';
import { eventually } from '../worker/support.ts';
import { DOVECOT, startDovecot } from '../support/dovecot.ts';
import { selfSignedCertificate, startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const certificate = selfSignedCertificate();
const atRest = (r: any) => ['AWAITING_APPROVAL', 'FAILED', 'CANCELLED'].includes(r.status);

interface Fixture {
  t: TestApp;
  workspaceId: string;
  adminUserId: string;
  key: string;
}

async function fixture(t: TestApp): Promise<Fixture> {
  const ws = await t.workspace('pro');
  return { t, workspaceId: ws.id, adminUserId: ws.adminUserId, key: (await t.key(ws.id)).key };
}

async function configure(f: Fixture, input: MailSettingsInput): Promise<void> {
  await f.t.database.db.transaction().execute((trx) =>
    saveMailSettings(trx, f.workspaceId, { fromName: 'Acme Sales', fromAddress: 'sales@acme.test', ...input }, f.t.deps.secrets(), null, systemClock));
}

const smtpOf = (server: TestSmtpServer, extra: Partial<NonNullable<MailSettingsInput['smtp']>> = {}) =>
  ({ host: server.host, port: server.port, security: 'none' as const, ...extra });

/** A run of a new lead, waiting for approval. */
async function awaitingApproval(f: Fixture, email: string | null = `lead-${randomBytes(3).toString('hex')}@example.net`): Promise<any> {
  const lead = await createLead(f.t, f.key, { name: 'Ada Lovelace', companyName: 'Analytical Engines', ...(email ? { email } : {}) });
  const call = await createCall(f.t, f.key, lead.id);
  const run = await startRun(f.t, f.key, lead.id, call.id);
  const done = await waitForRun(f.t, f.key, run.id, atRest);
  assert.equal(done.status, 'AWAITING_APPROVAL');
  return done;
}

const approve = (f: Fixture, runId: string, body?: unknown) =>
  f.t.api('POST', `/api/v1/runs/${runId}/approve`, { key: f.key, ...(body === undefined ? {} : { body }) });

const deliveryReaches = (f: Fixture, runId: string, statuses: string[]) =>
  waitForRun(f.t, f.key, runId, (r) => statuses.includes(r.emailDraft?.delivery?.status), 30_000);

async function eventTypes(f: Fixture, runId: string): Promise<string[]> {
  const rows = await f.t.database.db.selectFrom('run_events').select('type').where('run_id', '=', runId).orderBy('seq').execute();
  return rows.map((r) => r.type);
}

function startJobRunner(t: TestApp): JobRunner {
  return new JobRunner({
    database: t.database, clock: systemClock, config: t.deps.config, secrets: t.deps.secrets, cpu: t.deps.cpu, logger: silentLogger, metrics: t.deps.metrics,
    // A lease long enough that a stall of a loaded machine never lets this runner's other slot take over a delivery
    // it still works, which would send the message a second time: the takeover test below has a worker of 1 s.
    handlers: [deliveryHandler({ leaseMs: 10_000, retry: { maxAttempts: 6, delay: (_attempt, hint) => hint ?? 50 }, extraCa: certificate.cert })], pollMs: 50, drainMs: 1_000,
  });
}

for (const kind of BACKENDS) {
  describe(`delivery over SMTP (${kind})`, () => {
    let t: TestApp;
    let runner: JobRunner;
    const servers: TestSmtpServer[] = [];
    const server = async (options: Parameters<typeof startSmtpServer>[0] = {}) => {
      const s = await startSmtpServer(options);
      servers.push(s);
      return s;
    };

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      await t.startWorker();
      runner = startJobRunner(t);
      await runner.start();
    });
    afterEach(async () => { for (const s of servers.splice(0)) await s.close(); });
    after(async () => {
      await runner?.stop();
      await t?.close();
    });

    it('sends the approved draft: headers, plain text with the signature, the draft SENT and the lead CONTACTED', async () => {
      const f = await fixture(t);
      const smtp = await server();
      await configure(f, { smtp: smtpOf(smtp) });
      await t.database.db.updateTable('users').set({ sender_name: 'Grace Hopper', signature: 'Grace Hopper\nAcme, Head of Sales' })
        .where('id', '=', f.adminUserId).execute();
      const admin = await t.database.db.selectFrom('users').select('email').where('id', '=', f.adminUserId).executeTakeFirstOrThrow();
      const run = await awaitingApproval(f, 'ada@example.net');

      const res = await approve(f, run.id, { deliver: 'send' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.status, 'COMPLETED');
      assert.equal(res.json.data.emailDraft.status, 'APPROVED');
      const queued = res.json.data.emailDraft.delivery;
      assert.equal(queued.method, 'send');
      assert.ok(['QUEUED', 'DELIVERING', 'DELIVERED'].includes(queued.status));
      assert.match(queued.messageId, /^<[0-9a-f-]{36}@acme\.test>$/);

      const [mail] = await smtp.waitFor(1);
      const done = await deliveryReaches(f, run.id, ['DELIVERED']);
      assert.equal(done.emailDraft.status, 'SENT');
      assert.deepEqual(Object.keys(done.emailDraft.delivery).sort(), ['attempts', 'deliveredAt', 'error', 'messageId', 'method', 'queuedAt', 'scheduledFor', 'status']);
      assert.equal(done.emailDraft.delivery.attempts, 1);
      assert.equal(done.emailDraft.delivery.error, null);
      assert.ok(done.emailDraft.delivery.deliveredAt);

      const parsed = mail!.parsed;
      assert.deepEqual(mail!.envelope, { from: 'sales@acme.test', to: ['ada@example.net'] });
      assert.equal(parsed.messageId, queued.messageId);
      assert.deepEqual(parsed.from?.value, [{ name: 'Grace Hopper', address: 'sales@acme.test' }]);
      assert.deepEqual((parsed.to as any).value, [{ name: 'Ada Lovelace', address: 'ada@example.net' }], 'To names the lead');
      assert.equal((parsed.replyTo as any).value[0].address, admin.email);
      assert.equal(parsed.subject, run.emailDraft.subject);
      assert.equal(parsed.html, false, 'plain text only');
      assert.match(String(parsed.headers.get('content-type') && (parsed.headers.get('content-type') as any).value), /text\/plain/);
      // WRITER signed the draft with the signature under its "-- " line, so it is sent as approved, the name once.
      assert.match(run.emailDraft.body, /\n\nBest regards,\n-- \nGrace Hopper\nAcme, Head of Sales$/);
      assert.equal(parsed.text?.split('Grace Hopper').length, 2, 'the name appears once');
      // The draft as written, then the footer (DESIGN §15): the company, its postal address, and the line offering to stop.
      const [text, footer] = (parsed.text ?? '').replace(/\r\n/g, '\n').split(/\n(?=Workspace [0-9a-f]{6}, )/);
      assert.equal(text, `${run.emailDraft.body.trimEnd()}\n`);
      assert.match(footer ?? '', /^Workspace [0-9a-f]{6}, 1 Test Street, Testville\nIf you would rather not hear from us again, reply "stop" or unsubscribe here: \S+\/unsubscribe\/[\w-]{43}\n$/);
      assert.equal(parsed.text?.split('Acme, Head of Sales').length, 2, 'the signature appears once');
      assert.ok(parsed.date);

      const lead = await t.api('GET', `/api/v1/leads/${run.leadId}`, { key: f.key });
      assert.equal(lead.json.data.status, 'CONTACTED');
      assert.ok(lead.json.data.lastContactedAt);
      const types = await eventTypes(f, run.id);
      assert.deepEqual(types.filter((x) => x.startsWith('draft.') || x === 'run.approved'), ['run.approved', 'draft.delivery_queued', 'draft.sent']);
      const audit = await t.database.db.selectFrom('audit_log').select(['action', 'source', 'outcome'])
        .where('workspace_id', '=', f.workspaceId).where('target_id', '=', run.id).orderBy('occurred_at').execute();
      assert.deepEqual(audit.map((a) => `${a.source}:${a.action}:${a.outcome}`).filter((a) => !a.includes('run.created')), ['api:run.approved:success', 'system:draft.sent:success']);
      const job = await t.database.db.selectFrom('jobs').select(['status', 'kind']).where('workspace_id', '=', f.workspaceId).execute();
      assert.deepEqual(job, [{ status: 'DONE', kind: 'email.deliver' }]);
    });

    it('To names the lead, quoted and encoded: a name with a quote, a comma and an accent; no header injected', async () => {
      const f = await fixture(t);
      const smtp = await server();
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f, 'renee@example.net');
      // Names are validated where leads are written; this one is put straight into the row to test the encoding alone.
      const name = 'Renée "Ren" Dubois, CFO';
      await t.database.db.updateTable('leads').set({ name: `${name}\r\nBcc: spy@evil.test` }).where('id', '=', run.leadId).execute();
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      const [mail] = await smtp.waitFor(1);
      await deliveryReaches(f, run.id, ['DELIVERED']);
      assert.deepEqual((mail!.parsed.to as any).value, [{ name: `${name} Bcc: spy@evil.test`, address: 'renee@example.net' }]);
      assert.deepEqual(mail!.envelope.to, ['renee@example.net']);
      assert.equal(mail!.parsed.bcc, undefined);
      const head = mail!.raw.toString('latin1').split('\r\n\r\n')[0]!;
      assert.doesNotMatch(head, /^Bcc:/im, 'no header from the name');
      assert.match(head, /^To: .*=\?UTF-8\?/im, 'the accent is encoded (RFC 2047), not sent raw');
      assert.ok(/^[\x20-\x7e\r\n\t]*$/.test(head), 'the header is plain ASCII');
    });

    it('a lead already further along is not moved back by a sent e-mail', async () => {
      const f = await fixture(t);
      const smtp = await server();
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      await t.api('PATCH', `/api/v1/leads/${run.leadId}`, { key: f.key, body: { status: 'QUALIFIED' } });
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      await deliveryReaches(f, run.id, ['DELIVERED']);
      const lead = await t.api('GET', `/api/v1/leads/${run.leadId}`, { key: f.key });
      assert.equal(lead.json.data.status, 'QUALIFIED');
      assert.ok(lead.json.data.lastContactedAt);
    });

    it('AUTH with the right password sends; a wrong one fails the delivery with the server\'s words, without retrying', async () => {
      const smtp = await server({ users: { rep: 'correct horse' } });
      const good = await fixture(t);
      await configure(good, { smtp: smtpOf(smtp, { user: 'rep', password: 'correct horse' }) });
      const run = await awaitingApproval(good);
      assert.equal((await approve(good, run.id, { deliver: 'send' })).status, 200);
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.user, 'rep');
      await deliveryReaches(good, run.id, ['DELIVERED']);

      const bad = await fixture(t);
      await configure(bad, { smtp: smtpOf(smtp, { user: 'rep', password: 'wrong' }) });
      const failing = await awaitingApproval(bad);
      assert.equal((await approve(bad, failing.id, { deliver: 'send' })).status, 200);
      const failed = await deliveryReaches(bad, failing.id, ['FAILED']);
      assert.equal(failed.emailDraft.delivery.attempts, 1);
      assert.match(failed.emailDraft.delivery.error, /535.*Authentication credentials invalid/);
      assert.equal(failed.emailDraft.status, 'APPROVED', 'the draft stays APPROVED');
      assert.equal(smtp.received.length, 1);
    });

    it('a row whose server was changed behind the settings page does not send its password: 409, no AUTH', async () => {
      const saved = await server({ users: { rep: 'correct horse' } });
      const other = await server({ users: { rep: 'another' } });
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(saved, { user: 'rep', password: 'correct horse' }) });
      const run = await awaitingApproval(f);
      // As the settings page before issue 38 left it: another port, the password of the first kept.
      await t.database.db.updateTable('mail_settings').set({ smtp_port: other.port })
        .where('workspace_id', '=', f.workspaceId).execute();
      const refused = await approve(f, run.id, { deliver: 'send' });
      assertProblem(refused, 409, 'invalid_state');
      assert.match(refused.json.detail, /Save the password again in Settings \/ E-mail/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual([saved.auths, other.auths], [[], []]);
    });

    for (const security of ['starttls', 'tls'] as const) {
      it(`${security.toUpperCase()} with a self-signed certificate the transport is told to trust`, async () => {
        const smtp = await server({ security, certificate, users: { rep: 'secret' } });
        const f = await fixture(t);
        await configure(f, { smtp: smtpOf(smtp, { security, user: 'rep', password: 'secret' }) });
        const run = await awaitingApproval(f);
        assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
        await smtp.waitFor(1);
        await deliveryReaches(f, run.id, ['DELIVERED']);
      });
    }

    it('STARTTLS required by the settings fails, without retrying, against a server that does not offer it', async () => {
      const smtp = await server({ security: 'none' });
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp, { security: 'starttls' }) });
      const run = await awaitingApproval(f);
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      const failed = await deliveryReaches(f, run.id, ['FAILED']);
      assert.match(failed.emailDraft.delivery.error, /TLS|STARTTLS/i);
      assert.equal(smtp.attempts, 0);
    });

    it('a temporary refusal (421, then 451) is retried with backoff and then delivered', async () => {
      const smtp = await server();
      smtp.answer = (_mail, attempt) => (attempt === 1 ? { code: 421, message: '4.3.2 Try again later' }
        : attempt === 2 ? { code: 451, message: '4.7.1 Greylisted, come back soon' } : { accept: true });
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      const done = await deliveryReaches(f, run.id, ['DELIVERED', 'FAILED']);
      assert.equal(done.emailDraft.delivery.status, 'DELIVERED');
      assert.equal(done.emailDraft.delivery.attempts, 3);
      assert.equal(smtp.attempts, 3);
      assert.equal(smtp.received.length, 1);
      assert.ok(smtp.received.every((m) => m.parsed.messageId === done.emailDraft.delivery.messageId));
      const retrying = await t.database.db.selectFrom('run_events').select('error')
        .where('run_id', '=', run.id).where('type', '=', 'draft.delivery_retrying').orderBy('seq').execute();
      assert.equal(retrying.length, 2);
      assert.match(retrying[0]!.error ?? '', /421.*Try again later/);
      assert.match(retrying[1]!.error ?? '', /451.*Greylisted/);
    });

    it('a 550 fails at once: FAILED with the server\'s message, the lead untouched; POST …/deliver queues it again', async () => {
      const smtp = await server();
      smtp.answer = (_mail, attempt) => (attempt === 1 ? { code: 550, message: '5.1.1 No such mailbox here' } : { accept: true });
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      const failed = await deliveryReaches(f, run.id, ['FAILED']);
      assert.equal(failed.emailDraft.delivery.attempts, 1);
      assert.match(failed.emailDraft.delivery.error, /550.*No such mailbox here/);
      assert.equal(failed.emailDraft.status, 'APPROVED');
      assert.equal(smtp.attempts, 1);
      const lead = await t.api('GET', `/api/v1/leads/${run.leadId}`, { key: f.key });
      assert.equal(lead.json.data.status, 'DISCOVERY');
      assert.equal(lead.json.data.lastContactedAt, null);
      assert.ok((await eventTypes(f, run.id)).includes('draft.delivery_failed'));
      const audited = await t.database.db.selectFrom('audit_log').select(['source', 'outcome'])
        .where('target_id', '=', run.id).where('action', '=', 'draft.delivery_failed').execute();
      assert.deepEqual(audited, [{ source: 'system', outcome: 'failure' }]);

      const retried = await t.api('POST', `/api/v1/runs/${run.id}/deliver`, { key: f.key });
      assert.equal(retried.status, 200, retried.text);
      assert.equal(retried.json.data.emailDraft.delivery.status, 'QUEUED');
      assert.equal(retried.json.data.emailDraft.delivery.error, null);
      const done = await deliveryReaches(f, run.id, ['DELIVERED']);
      assert.equal(done.emailDraft.delivery.messageId, failed.emailDraft.delivery.messageId, 'the same Message-ID');
      assert.equal(done.emailDraft.delivery.attempts, 2);
      assert.equal(done.emailDraft.status, 'SENT');
      assert.equal(smtp.received[0]!.parsed.messageId, failed.emailDraft.delivery.messageId);
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/deliver`, { key: f.key }), 409, 'invalid_state');
      const audit = await t.database.db.selectFrom('audit_log').select(['outcome', 'status']).where('workspace_id', '=', f.workspaceId)
        .where('action', '=', 'draft.delivery_retried').orderBy('occurred_at').execute();
      assert.deepEqual(audit, [{ outcome: 'success', status: 200 }, { outcome: 'failure', status: 409 }], 'the retry and the refused retry are audited');
    });

    it('two approvals racing: one 200, one 409, one delivery, one message', async () => {
      const smtp = await server();
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      const answers = await Promise.all([approve(f, run.id, { deliver: 'send' }), approve(f, run.id, { deliver: 'send' })]);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
      assertProblem(answers.find((a) => a.status === 409)!, 409, 'invalid_state');
      await deliveryReaches(f, run.id, ['DELIVERED']);
      await smtp.waitFor(1);
      const deliveries = await t.database.db.selectFrom('email_deliveries').select('id').where('run_id', '=', run.id).execute();
      assert.equal(deliveries.length, 1);
      // A later approval of the same run changes nothing either.
      assertProblem(await approve(f, run.id, { deliver: 'send' }), 409, 'invalid_state');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(smtp.received.length, 1);
      assert.equal(smtp.attempts, 1);
    });

    it('refuses what cannot be delivered and approves nothing: no SMTP, no recipient, an unknown method', async () => {
      const bare = await fixture(t);
      const run = await awaitingApproval(bare);
      assertProblem(await approve(bare, run.id, { deliver: 'send' }), 409, 'mail_not_configured');
      assertProblem(await approve(bare, run.id, { deliver: 'mailbox' }), 409, 'mail_not_configured');
      const invalid = await approve(bare, run.id, { deliver: 'fax' });
      assertProblem(invalid, 400, 'invalid_request');
      assertProblem(await approve(bare, run.id, { deliver: 'send', extra: true }), 400, 'invalid_request');
      const still = await t.api('GET', `/api/v1/runs/${run.id}`, { key: bare.key });
      assert.equal(still.json.data.status, 'AWAITING_APPROVAL');
      assert.equal(still.json.data.emailDraft.delivery, null);
      // Without a transport the default is `none`: a body-less approval only approves.
      const approved = await approve(bare, run.id);
      assert.equal(approved.status, 200);
      assert.equal(approved.json.data.emailDraft.delivery, null);
      assertProblem(await t.api('POST', `/api/v1/runs/${run.id}/deliver`, { key: bare.key }), 409, 'invalid_state');

      const smtp = await server();
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const noRecipient = await awaitingApproval(f, null);
      assert.equal(noRecipient.emailDraft.to, null);
      const refused = await approve(f, noRecipient.id, { deliver: 'send' });
      assertProblem(refused, 409, 'invalid_state');
      assert.deepEqual(refused.json.errors.map((e: any) => e.field), ['to']);
      // The workspace's default with SMTP set up is `send`; `none` still only approves.
      assert.equal((await approve(f, noRecipient.id, { deliver: 'none' })).json.data.emailDraft.delivery, null);
      const byDefault = await awaitingApproval(f);
      const sent = await approve(f, byDefault.id);
      assert.equal(sent.json.data.emailDraft.delivery.method, 'send');
      await deliveryReaches(f, byDefault.id, ['DELIVERED']);
    });

    it('a commit that fails after the server took the message: resent once with the same Message-ID, DELIVERED once', async () => {
      const smtp = await server();
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      // The database refuses the first attempt to record the answer, as a crash between the answer and the commit
      // would leave it: the job's end, the delivery and the draft are not written.
      await sql`CREATE TABLE IF NOT EXISTS test_refusals (run_id uuid PRIMARY KEY)`.execute(t.database.db);
      await sql`INSERT INTO test_refusals VALUES (${run.id})`.execute(t.database.db);
      await sql.raw(`
        CREATE OR REPLACE FUNCTION test_refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status = 'DELIVERED' AND EXISTS (SELECT 1 FROM test_refusals WHERE run_id = NEW.run_id) THEN
            RAISE EXCEPTION 'the commit fails this once';
          END IF;
          RETURN NEW;
        END $$`).execute(t.database.db);
      await sql`DROP TRIGGER IF EXISTS test_refuse_once ON email_deliveries`.execute(t.database.db);
      await sql`CREATE TRIGGER test_refuse_once BEFORE UPDATE ON email_deliveries FOR EACH ROW EXECUTE FUNCTION test_refuse_once()`.execute(t.database.db);
      // The second time the server takes the message, the database lets its record through.
      smtp.answer = async (_mail, attempt) => {
        if (attempt === 2) await sql`DELETE FROM test_refusals WHERE run_id = ${run.id}`.execute(t.database.db);
        return { accept: true };
      };
      try {
        assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
        await smtp.waitFor(2);
        const done = await deliveryReaches(f, run.id, ['DELIVERED', 'FAILED']);
        assert.equal(done.emailDraft.delivery.status, 'DELIVERED');
        assert.equal(done.emailDraft.status, 'SENT');
        assert.equal(smtp.received.length, 2);
        assert.deepEqual(new Set(smtp.received.map((m) => m.parsed.messageId)), new Set([done.emailDraft.delivery.messageId]));
        assert.equal((await eventTypes(f, run.id)).filter((x) => x === 'draft.sent').length, 1);
        const job = await t.database.db.selectFrom('jobs').select(['status', 'attempts']).where('workspace_id', '=', f.workspaceId).execute();
        assert.deepEqual(job, [{ status: 'DONE', attempts: 2 }]);
      } finally {
        await sql`DROP TRIGGER IF EXISTS test_refuse_once ON email_deliveries`.execute(t.database.db);
      }
    });

    it('the event stream of a COMPLETED run goes on while its e-mail is on its way, and ends once it is sent', async () => {
      const smtp = await server();
      let release!: () => void;
      const held = new Promise<void>((resolve) => { release = resolve; });
      smtp.answer = async () => { await held; return { accept: true }; };
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const run = await awaitingApproval(f);
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      const res = await fetch(`${t.url}/api/v1/runs/${run.id}/events`, { headers: { authorization: `Bearer ${f.key}`, accept: 'text/event-stream' } });
      assert.equal(res.status, 200);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('event: end')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        // The run is COMPLETED and its log so far has arrived; the stream stays open for the delivery.
        if (text.includes('event: draft.delivery_queued')) release();
      }
      assert.match(text, /event: run\.approved[\s\S]*event: draft\.delivery_queued[\s\S]*event: draft\.sent[\s\S]*event: end/);
    });

    it('/metrics shows the queue per kind, runs among them: depth, oldest age, dead jobs and attempts by outcome', async () => {
      const res = await t.api('GET', '/metrics');
      assert.equal(res.status, 200);
      // The run row is a job of kind `run`: its queue is read from the runs table.
      assert.match(res.text, /leadrun_jobs_queued\{kind="run"\} \d+/);
      assert.match(res.text, /leadrun_jobs_oldest_age_seconds\{kind="run"\} [\d.]+/);
      assert.match(res.text, /leadrun_jobs_dead\{kind="run"\} \d+/);
      assert.match(res.text, /leadrun_jobs_total\{kind="run",outcome="done"\} [1-9]/);
      assert.match(res.text, /leadrun_jobs_dead\{kind="email\.deliver"\} [1-9]/);
      assert.match(res.text, /leadrun_jobs_queued\{kind="email\.deliver"\} \d+/);
      assert.match(res.text, /leadrun_jobs_oldest_age_seconds\{kind="email\.deliver"\} [\d.]+/);
      assert.match(res.text, /leadrun_jobs_total\{kind="email\.deliver",outcome="done"\} [1-9]/);
      assert.match(res.text, /leadrun_jobs_total\{kind="email\.deliver",outcome="retried"\} [1-9]/);
      assert.match(res.text, /leadrun_jobs_total\{kind="email\.deliver",outcome="dead"\} [1-9]/);
    });

    it('`mailbox` saves the message to the sender\'s Drafts over IMAP: DELIVERED, the draft APPROVED, the lead not moved; a refused password fails at once', async (c) => {
      if (!existsSync(DOVECOT)) return c.skip('Dovecot is not installed');
      const dovecot = await startDovecot();
      try {
        const f = await fixture(t);
        await configure(f, { imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password } });
        const run = await awaitingApproval(f);
        const approved = await approve(f, run.id, { deliver: 'mailbox' });
        assert.equal(approved.status, 200, approved.text);
        assert.equal(approved.json.data.emailDraft.delivery.method, 'mailbox');
        const done = await deliveryReaches(f, run.id, ['DELIVERED', 'FAILED']);
        assert.equal(done.emailDraft.delivery.status, 'DELIVERED', done.emailDraft.delivery.error);
        assert.equal(done.emailDraft.status, 'APPROVED', 'saved, not sent');
        const [saved, ...more] = await dovecot.messages('Drafts');
        assert.equal(more.length, 0);
        assert.ok(saved!.flags.includes('\\Draft'));
        const parsed = await simpleParser(saved!.raw);
        assert.equal(parsed.messageId, done.emailDraft.delivery.messageId);
        assert.equal(parsed.subject, run.emailDraft.subject);
        const types = await eventTypes(f, run.id);
        assert.ok(types.includes('draft.saved_to_mailbox'));
        assert.ok(!types.includes('draft.sent'));
        const lead = await t.api('GET', `/api/v1/leads/${run.leadId}`, { key: f.key });
        assert.equal(lead.json.data.status, 'DISCOVERY');
        assert.equal(lead.json.data.lastContactedAt, null);

        // A refused password fails the delivery at once: retrying it can only get the rep's account locked.
        await configure(f, { imap: { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: 'not the password' } });
        const second = await awaitingApproval(f);
        assert.equal((await approve(f, second.id, { deliver: 'mailbox' })).status, 200);
        const refused = await deliveryReaches(f, second.id, ['FAILED']);
        assert.deepEqual(
          { error: refused.emailDraft.delivery.error, attempts: refused.emailDraft.delivery.attempts },
          { error: 'The server refused the user name or password.', attempts: 1 },
        );
      } finally {
        await dovecot.stop();
      }
    });

    it('refuses a mail server on a private address unless ALLOW_PRIVATE_HOSTS is set', async () => {
      const guarded = await startTestApp(kind, { config: { allowPrivateHosts: false, secretsKey: randomBytes(32) } });
      const guardedRunner = startJobRunner(guarded);
      try {
        await guarded.startWorker();
        await guardedRunner.start();
        const smtp = await server();
        const f = await fixture(guarded);
        await configure(f, { smtp: smtpOf(smtp) });
        const run = await awaitingApproval(f);
        assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
        const failed = await deliveryReaches(f, run.id, ['FAILED']);
        assert.match(failed.emailDraft.delivery.error, /Refused to connect to 127\.0\.0\.1.*ALLOW_PRIVATE_HOSTS/);
        assert.equal(smtp.attempts, 0);
      } finally {
        await guardedRunner.stop();
        await guarded.close();
      }
    });
  });
}

describe('postgres: a worker killed between the SMTP answer and the commit', { skip: !BACKENDS.includes('postgres') && 'PostgreSQL is not among TEST_BACKENDS' }, () => {
  let t: TestApp;
  const children: LeadrunProcess[] = [];
  const secretsKey = randomBytes(32);
  after(async () => {
    for (const child of children.splice(0)) await child.kill('SIGKILL');
    await t?.close();
  });

  it('resends once, with the same Message-ID, and the delivery ends DELIVERED once', async () => {
    t = await startTestApp('postgres', { config: { allowPrivateHosts: true, secretsKey } });
    const smtp = await startSmtpServer();
    try {
      const f = await fixture(t);
      await configure(f, { smtp: smtpOf(smtp) });
      const child = spawnLeadrun(['worker'], {
        DATABASE_URL: t.databaseUrl!, ALLOW_PRIVATE_HOSTS: 'true', RUN_LEASE_SECONDS: '1', SECRETS_KEY: secretsKey.toString('base64'), LOG_LEVEL: 'info',
      });
      children.push(child);
      const run = await awaitingApproval(f);
      // The server has the whole message; before it answers, the worker that sent it dies.
      smtp.answer = async (_mail, attempt) => {
        if (attempt === 1) await child.kill('SIGKILL');
        return { accept: true };
      };
      assert.equal((await approve(f, run.id, { deliver: 'send' })).status, 200);
      await eventually('the first attempt to reach the server', async () => smtp.attempts >= 1 && !child.isAlive(), 30_000);
      const stuck = await t.database.db.selectFrom('email_deliveries').select(['status', 'attempts']).where('run_id', '=', run.id).executeTakeFirstOrThrow();
      assert.deepEqual(stuck, { status: 'DELIVERING', attempts: 1 }, 'the answer was never recorded');

      const runner = startJobRunner(t);
      await runner.start();
      try {
        const done = await deliveryReaches(f, run.id, ['DELIVERED', 'FAILED']);
        assert.equal(done.emailDraft.delivery.status, 'DELIVERED');
        assert.equal(done.emailDraft.delivery.attempts, 2);
        assert.equal(smtp.received.length, 2, 'resent once');
        assert.deepEqual(new Set(smtp.received.map((m) => m.parsed.messageId)), new Set([done.emailDraft.delivery.messageId]), 'one Message-ID');
        assert.equal((await eventTypes(f, run.id)).filter((x) => x === 'draft.sent').length, 1);
        const job = await t.database.db.selectFrom('jobs').select(['status', 'attempts']).where('workspace_id', '=', f.workspaceId).execute();
        assert.deepEqual(job, [{ status: 'DONE', attempts: 2 }]);
      } finally {
        await runner.stop();
      }
    } finally {
      await smtp.close();
    }
  });
});

// The mail transport's buttons in the web UI's API: "Check connection" (saved or unsaved SMTP settings, the stored
// password only for the server and user it was saved for), "Send test e-mail", and the capabilities that decide
// which approve buttons are offered. Admins only for the checks, audited; answers 200 with `ok` or `error`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { saveMailSettings, type MailSettingsInput } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { asBrowser, assertInvalid, assertProblem, browserOf, db, type Browser } from './support.ts';

const PASSWORD = 'correct horse battery staple';

for (const kind of BACKENDS) {
  describe(`mail checks (${kind})`, () => {
    let t: TestApp;
    let admin: Browser;
    let member: Browser;
    let workspaceId: string;
    const servers: TestSmtpServer[] = [];
    const server = async (options: Parameters<typeof startSmtpServer>[0] = {}) => {
      const s = await startSmtpServer(options);
      servers.push(s);
      return s;
    };
    const as = (who: Browser | null, method: string, path: string, body?: unknown) => asBrowser(t, who, method, path, body);
    const configure = (input: MailSettingsInput) => t.database.db.transaction().execute((trx) =>
      saveMailSettings(trx, workspaceId, { fromName: 'Acme Sales', fromAddress: 'sales@acme.test', ...input }, t.deps.secrets(), null, systemClock));

    before(async () => {
      t = await startTestApp(kind, { config: { allowPrivateHosts: true, secretsKey: randomBytes(32) } });
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      workspaceId = (await db(t).selectFrom('workspaces').select('id').executeTakeFirstOrThrow()).id;
      const added = await as(admin, 'POST', '/ui/api/members', { name: 'Mo Member', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD });
      assert.equal(added.status, 201, added.text);
      member = browserOf(await t.api('POST', '/ui/api/session', { body: { email: 'mo@acme.test', password: PASSWORD } }));
    });
    afterEach(async () => { for (const s of servers.splice(0)) await s.close(); });
    after(() => t?.close());

    it('capabilities: nothing without a transport; send once SMTP is saved; any signed-in person may ask', async () => {
      const none = await as(member, 'GET', '/ui/api/settings/email/capabilities');
      assert.equal(none.status, 200, none.text);
      assert.deepEqual(none.json, { send: false, mailbox: false, defaultDeliver: 'none' });
      const smtp = await server();
      await configure({ smtp: { host: smtp.host, port: smtp.port, security: 'none' } });
      assert.deepEqual((await as(member, 'GET', '/ui/api/settings/email/capabilities')).json, { send: true, mailbox: false, defaultDeliver: 'send' });
      assertProblem(await as(null, 'GET', '/ui/api/settings/email/capabilities'), 401, 'unauthorized');
    });

    it('saving IMAP settings schedules the reply check, once, and offers the mailbox', async () => {
      const imap = { host: '127.0.0.1', port: 143, security: 'none', user: 'sales@acme.test', password: 'imap secret' };
      assert.equal((await as(admin, 'PUT', '/ui/api/settings/email', { imap })).status, 200);
      assert.equal((await as(admin, 'PUT', '/ui/api/settings/email', { fromName: 'Acme' })).status, 200);
      const jobs = await db(t).selectFrom('jobs').select(['kind', 'key', 'status']).where('workspace_id', '=', workspaceId).execute();
      assert.deepEqual(jobs, [{ kind: 'mail.check_replies', key: workspaceId, status: 'QUEUED' }]);
      assert.equal((await as(member, 'GET', '/ui/api/settings/email/capabilities')).json.mailbox, true);
      assert.equal((await as(admin, 'PUT', '/ui/api/settings/email', { imap: null })).status, 200);
      assert.equal((await as(member, 'GET', '/ui/api/settings/email/capabilities')).json.mailbox, false);
    });

    it('check-smtp: the saved settings, unsaved ones, and the failures in words for a person', async () => {
      const smtp = await server({ users: { rep: 'secret' } });
      await configure({ smtp: { host: smtp.host, port: smtp.port, security: 'none', user: 'rep', password: 'secret' } });
      const saved = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', {});
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual(saved.json, { ok: true });
      assert.deepEqual((await as(admin, 'POST', '/ui/api/settings/email/check-smtp')).json, { ok: true }, 'no body at all');

      // The stored password is used for the same server and user when none is given.
      const same = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: smtp.host, port: smtp.port, security: 'none', user: 'rep' });
      assert.deepEqual(same.json, { ok: true });
      const wrong = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: smtp.host, port: smtp.port, security: 'none', user: 'rep', password: 'nope' });
      assert.equal(wrong.status, 200);
      assert.equal(wrong.json.ok, false);
      assert.match(wrong.json.error, /refused the user name or password.*535/);

      // …but never sent to another server: there, a check without a password asks for it by its field.
      const elsewhere = await server({ users: { rep: 'secret' } });
      const moved = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: elsewhere.host, port: elsewhere.port, security: 'none', user: 'rep' });
      assertInvalid(moved, ['password']);
      assert.deepEqual(elsewhere.auths, []);

      const closed = await server();
      const port = closed.port;
      await closed.close();
      const refused = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: '127.0.0.1', port, security: 'none' });
      assert.equal(refused.json.ok, false);
      assert.match(refused.json.error, /Could not talk to 127\.0\.0\.1.*ECONNREFUSED|connect/i);
      const dns = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: 'no-such-host.invalid', port: 25, security: 'none' });
      assert.match(dns.json.error, /Could not resolve no-such-host\.invalid/);
      const tls = await as(admin, 'POST', '/ui/api/settings/email/check-smtp', {
        host: smtp.host, port: smtp.port, security: 'starttls', user: 'rep', password: 'secret',
      });
      assert.equal(tls.json.ok, false);
      assert.match(tls.json.error, /TLS|STARTTLS/);
    });

    it('a saved SMTP password never follows a change of server: not by the test e-mail, nor by a check', async () => {
      const saved = await server({ users: { rep: 'secret' } });
      const moved = await server({ users: { rep: 'the new server\'s' } });
      const put = (smtp: Record<string, unknown>) =>
        as(admin, 'PUT', '/ui/api/settings/email', { fromAddress: 'sales@acme.test', smtp });
      const first = await put({
        host: saved.host, port: saved.port, security: 'none', user: 'rep', password: 'secret',
      });
      assert.equal(first.json.smtp.passwordSet, true);
      // Port changed, password left out: the answer and the form say it is gone, and nothing sends it.
      const second = await put({ host: moved.host, port: moved.port, security: 'none', user: 'rep' });
      assert.equal(second.status, 200, second.text);
      assert.equal(second.json.smtp.passwordSet, false);
      const sent = await as(admin, 'POST', '/ui/api/settings/email/send-test', {});
      assert.equal(sent.json.ok, false);
      assert.equal((await as(admin, 'POST', '/ui/api/settings/email/check-smtp', {})).json.ok, false);
      assert.ok(!moved.auths.some((a) => a.password === 'secret'), JSON.stringify(moved.auths));
      assert.deepEqual(saved.auths, []);
    });

    it('check-smtp sends a saved password only with its own security, never in clear text for STARTTLS', async () => {
      const smtp = await server({ users: { rep: 'secret' } });
      const where = { host: smtp.host, port: smtp.port };
      await configure({ smtp: { ...where, security: 'starttls', user: 'rep', password: 'secret' } });
      const check = (body: Record<string, unknown>) => as(admin, 'POST', '/ui/api/settings/email/check-smtp', body);
      const plain = await check({ ...where, security: 'none', user: 'rep' });
      assertInvalid(plain, ['password']);
      assert.match(plain.json.detail, /saved password is sent only to the host, port, user and security/);
      const otherUser = await check({ ...where, security: 'starttls', user: 'sam' });
      assertInvalid(otherUser, ['password']);
      assert.deepEqual(smtp.auths, [], 'no AUTH reached the server');
      // Typed in the form, a password goes where the admin says, in the clear if they chose no encryption.
      const typed = await check({ ...where, security: 'none', user: 'rep', password: 'secret' });
      assert.deepEqual(typed.json, { ok: true });
      assert.deepEqual(smtp.auths, [{ user: 'rep', password: 'secret', secure: false }]);
    });

    it('saving mended IMAP settings brings a reply check out of its backoff at once', async () => {
      const imap = { host: '127.0.0.1', port: 143, security: 'none', user: 'sales@acme.test', password: 'imap secret' };
      assert.equal((await as(admin, 'PUT', '/ui/api/settings/email', { imap })).status, 200);
      const later = new Date(Date.now() + 8 * 60_000);
      await db(t).updateTable('jobs').set({ available_at: later, attempts: 4, last_error: 'The server refused it.' })
        .where('kind', '=', 'mail.check_replies').where('key', '=', workspaceId).execute();
      const before = Date.now();
      const mended = await as(admin, 'PUT', '/ui/api/settings/email', { imap: { ...imap, password: 'the right one' } });
      assert.equal(mended.status, 200, mended.text);
      const [job] = await db(t).selectFrom('jobs').select(['status', 'available_at', 'attempts'])
        .where('kind', '=', 'mail.check_replies').where('key', '=', workspaceId).execute();
      assert.equal(job!.status, 'QUEUED');
      const due = new Date(job!.available_at).getTime();
      assert.ok(due <= Date.now() && due >= before - 1000, `due now, not at ${later.toISOString()}: ${due}`);
      assert.equal(job!.attempts, 0, 'the failures of the old settings are not counted against the new ones');
      assert.equal((await as(admin, 'PUT', '/ui/api/settings/email', { imap: null })).status, 200);
    });

    it('check-smtp refuses a private address without ALLOW_PRIVATE_HOSTS', async () => {
      const guarded = await startTestApp(kind, { config: { allowPrivateHosts: false, secretsKey: randomBytes(32) } });
      try {
        const boss = browserOf(await guarded.api('POST', '/ui/api/setup', { body: { workspaceName: 'G', name: 'G', email: 'g@acme.test', password: PASSWORD } }));
        const res = await asBrowser(guarded, boss, 'POST', '/ui/api/settings/email/check-smtp', { host: '127.0.0.1', port: 25, security: 'none' });
        assert.equal(res.json.ok, false);
        assert.match(res.json.error, /Refused to connect to 127\.0\.0\.1: it is a loopback address/);
        const metadata = await asBrowser(guarded, boss, 'POST', '/ui/api/settings/email/check-smtp', { host: '169.254.169.254', port: 25, security: 'none' });
        assert.match(metadata.json.error, /Refused to connect/);
      } finally {
        await guarded.close();
      }
    });

    it('send-test: a short e-mail to the admin (or `to`) with the saved settings; audited; admins only', async () => {
      const smtp = await server();
      await configure({ smtp: { host: smtp.host, port: smtp.port, security: 'none' } });
      const res = await as(admin, 'POST', '/ui/api/settings/email/send-test', {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.ok, true);
      const [mail] = await smtp.waitFor(1);
      assert.deepEqual(mail!.envelope.to, ['sam@acme.test']);
      assert.equal(mail!.parsed.messageId, res.json.messageId);
      assert.deepEqual(mail!.parsed.from?.value, [{ name: 'Sam Rivera', address: 'sales@acme.test' }]);
      const other = await as(admin, 'POST', '/ui/api/settings/email/send-test', { to: 'someone@example.net' });
      assert.equal(other.json.ok, true);
      await smtp.waitFor(2);
      assert.deepEqual(smtp.received[1]!.envelope.to, ['someone@example.net']);

      smtp.answer = () => ({ code: 550, message: '5.7.1 Relaying denied' });
      const denied = await as(admin, 'POST', '/ui/api/settings/email/send-test', {});
      assert.deepEqual(denied.json.ok, false);
      assert.match(denied.json.error, /550.*Relaying denied/);

      assertProblem(await as(admin, 'POST', '/ui/api/settings/email/send-test', { to: 'not an address' }), 400, 'invalid_request');
      assertProblem(await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: 'x', port: 70000, security: 'none' }), 400, 'invalid_request');
      assertProblem(await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: 'x' }), 400, 'invalid_request');
      assertProblem(await as(admin, 'POST', '/ui/api/settings/email/check-smtp', { host: 'x', port: 25, security: 'none', extra: 1 }), 400, 'invalid_request');
      assertProblem(await as(member, 'POST', '/ui/api/settings/email/send-test', {}), 403);
      assertProblem(await as(member, 'POST', '/ui/api/settings/email/check-smtp', {}), 403);

      const audit = await db(t).selectFrom('audit_log').select(['action', 'outcome', 'details', 'source'])
        .where('action', 'in', ['mail_settings.test_sent', 'mail_settings.smtp_checked']).where('outcome', '=', 'success').execute();
      assert.ok(audit.some((a) => a.action === 'mail_settings.test_sent' && (a.details as any).ok === true && a.source === 'ui'));
      assert.ok(audit.some((a) => a.action === 'mail_settings.test_sent' && (a.details as any).ok === false));
      assert.ok(audit.some((a) => a.action === 'mail_settings.smtp_checked'));
      assert.ok(!JSON.stringify(audit).includes('secret'), 'no password in the audit log');
    });
  });
}

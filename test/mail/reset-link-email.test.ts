// A password-reset link is e-mailed to the member when the workspace can send e-mail, and shown to the admin always:
// sent through the workspace's SMTP server, refused by it (the admin is told why), or with no transport at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { asBrowser, browserOf, type Browser } from '../http/support.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const PASSWORD = 'correct horse battery staple';

for (const kind of BACKENDS) {
  describe(`password-reset links by e-mail (${kind})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let admin: Browser;
    let workspaceId: string;

    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestApp(kind, { config: { allowPrivateHosts: true, publicUrl: 'https://leads.acme.test' } });
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      workspaceId = admin.session.workspace.id;
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    const addMember = async (name: string, email: string) => {
      const res = await asBrowser(t, admin, 'POST', '/ui/api/members', { name, email, role: 'MEMBER', password: PASSWORD });
      assert.equal(res.status, 201, res.text);
      return res.json.id as string;
    };
    const resetLink = async (userId: string) => {
      const res = await asBrowser(t, admin, 'POST', `/ui/api/members/${userId}/password-reset`, {});
      assert.equal(res.status, 201, res.text);
      return res.json;
    };

    it('shows the link to the admin and says it was not e-mailed when the workspace cannot send', async () => {
      const link = await resetLink(await addMember('Mo Chen', 'mo@acme.test'));
      assert.equal(link.emailed, false);
      assert.equal(link.emailError, null);
      assert.match(link.url, /^https:\/\/leads\.acme\.test\/reset-password#token=/);
    });

    it('e-mails the link to the member through the workspace\'s SMTP server, and it works', async () => {
      await t.database.db.transaction().execute((trx) => saveMailSettings(trx, workspaceId, {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', smtp: { host: smtp.host, port: smtp.port, security: 'none' },
      }, t.deps.secrets(), null, systemClock));
      const before = smtp.received.length;
      const link = await resetLink(await addMember('Lee Park', 'lee@acme.test'));
      assert.equal(link.emailed, true, JSON.stringify(link));
      assert.equal(link.emailError, null);
      const mail = smtp.received[before]!;
      assert.deepEqual(mail.envelope, { from: 'sales@acme.test', to: ['lee@acme.test'] });
      assert.equal(mail.parsed.subject, 'Set a new password for Acme');
      assert.ok(mail.parsed.text?.includes(link.url), 'the e-mail carries the link');
      assert.match(mail.parsed.text ?? '', /Sam Rivera made a link for you/);
      const token = new URL(link.url).hash.replace(/^#token=/, '');
      const check = await t.api('POST', '/ui/api/password-reset/check', { body: { token } });
      assert.equal(check.status, 200, check.text);
    });

    it('tells the admin why the e-mail was refused, and the link still works', async () => {
      smtp.answer = () => ({ code: 550, message: 'mailbox unavailable' });
      try {
        const link = await resetLink(await addMember('Ira Stone', 'ira@acme.test'));
        assert.equal(link.emailed, false);
        assert.match(link.emailError ?? '', /550|mailbox unavailable/);
        const token = new URL(link.url).hash.replace(/^#token=/, '');
        assert.equal((await t.api('POST', '/ui/api/password-reset/check', { body: { token } })).status, 200);
      } finally {
        smtp.answer = () => ({ accept: true });
      }
    });
  });
}

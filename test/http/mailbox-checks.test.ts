// POST /ui/api/settings/email/check-imap, on both backends, against a private Dovecot: an admin tries unsaved
// settings or the saved ones, and hears back ok or why not; a saved password is used only for the server and user it
// was saved for; members, API keys, requests without the CSRF token or from another site are refused; bad bodies are
// 400; every check is audited without the password.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { saveMailSettings } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { startDovecot, type Dovecot } from '../support/dovecot.ts';
import { startCapturingImapServer } from '../support/imap-capture.ts';
import { asBrowser, assertInvalid, assertProblem, auditRows, browserOf, db, type Browser } from './support.ts';

const PASSWORD = 'a long enough password';
const PATH = '/ui/api/settings/email/check-imap';

for (const kind of BACKENDS) {
  describe(`check IMAP (${kind})`, () => {
    let t: TestApp;
    let dovecot: Dovecot;
    let admin: Browser;
    let member: Browser;
    let unsaved: { host: string; port: number; security: 'none'; user: string; password: string };

    before(async () => {
      [t, dovecot] = await Promise.all([startTestApp(kind, { config: { allowPrivateHosts: true } }), startDovecot()]);
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      const added = await asBrowser(t, admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD });
      assert.equal(added.status, 201, added.text);
      member = browserOf(await t.api('POST', '/ui/api/session', { body: { email: 'mo@acme.test', password: PASSWORD } }));
      unsaved = { host: dovecot.host, port: dovecot.port, security: 'none', user: dovecot.user, password: dovecot.password };
    });
    after(async () => {
      await Promise.all([t?.close(), dovecot?.stop()]);
    });

    it('checks unsaved settings: ok, a wrong password, nothing listening', async () => {
      const ok = await asBrowser(t, admin, 'POST', PATH, unsaved);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json, { ok: true });
      const wrong = await asBrowser(t, admin, 'POST', PATH, { ...unsaved, password: 'not it' });
      assert.deepEqual(wrong.json, { ok: false, error: 'The server refused the user name or password.' });
      const closed = await asBrowser(t, admin, 'POST', PATH, { ...unsaved, port: 1 });
      assert.deepEqual(closed.json, { ok: false, error: 'Nothing answered at 127.0.0.1:1: the connection was refused.' });
    });

    it('checks the saved settings, and uses the saved password only for the server and user it was saved for', async () => {
      const none = await asBrowser(t, admin, 'POST', PATH);
      assert.deepEqual(none.json, { ok: false, error: 'No IMAP server is saved for this workspace.' });
      const workspaceId = admin.session.workspace.id;
      await db(t).transaction().execute((trx) => saveMailSettings(trx, workspaceId, { imap: unsaved }, t.deps.secrets(), null, t.deps.clock));

      assert.deepEqual((await asBrowser(t, admin, 'POST', PATH)).json, { ok: true });
      assert.deepEqual((await asBrowser(t, admin, 'POST', PATH, {})).json, { ok: true });
      const { password: _password, ...withoutPassword } = unsaved;
      assert.deepEqual((await asBrowser(t, admin, 'POST', PATH, withoutPassword)).json, { ok: true });
      const elsewhere = await asBrowser(t, admin, 'POST', PATH, { ...withoutPassword, host: 'localhost' });
      assertInvalid(elsewhere, ['password'], 'the saved password never goes to another server');
      assert.match(elsewhere.json.detail, /saved password is sent only to the host, port, user and security/);
      assert.deepEqual((await asBrowser(t, admin, 'POST', PATH, { ...withoutPassword, draftsFolder: 'Brouillons' })).json, { ok: true },
        'the folder marked \\Drafts is found');
    });

    it('never sends the saved password to another port, nor in clear text when it was saved for STARTTLS', async () => {
      const capture = await startCapturingImapServer();
      try {
        const workspaceId = admin.session.workspace.id;
        const save = (imap: typeof unsaved | Record<string, unknown>) => db(t).transaction().execute((trx) =>
          saveMailSettings(trx, workspaceId, { imap: imap as typeof unsaved }, t.deps.secrets(), null, t.deps.clock));
        const { password: _password, ...withoutPassword } = unsaved;
        await save(unsaved);
        const moved = await asBrowser(t, admin, 'POST', PATH, { ...withoutPassword, port: capture.port });
        assertInvalid(moved, ['password'], 'another port of the same host');

        // Saved for STARTTLS on the capturing server: a check with `none` would sign in before any TLS.
        await save({ ...unsaved, host: capture.host, port: capture.port, security: 'starttls' });
        const plain = await asBrowser(t, admin, 'POST', PATH,
          { ...withoutPassword, host: capture.host, port: capture.port, security: 'none' });
        assertInvalid(plain, ['password'], 'STARTTLS password over a plain connection');
        assert.equal(capture.heard(dovecot.password, dovecot.user), false, capture.lines.join('\n'));
        assert.ok(!capture.lines.some((line) => /LOGIN|AUTHENTICATE/i.test(line)), capture.lines.join('\n'));
        // A password typed in the form goes where the admin sends it: the server hears it, the capture proves so.
        await asBrowser(t, admin, 'POST', PATH,
          { ...unsaved, host: capture.host, port: capture.port, password: 'typed here' });
        assert.equal(capture.heard('typed here', dovecot.user), true, capture.lines.join('\n'));
      } finally {
        await capture.close();
        await db(t).transaction().execute((trx) =>
          saveMailSettings(trx, admin.session.workspace.id, { imap: unsaved }, t.deps.secrets(), null, t.deps.clock));
      }
    });

    it('refuses a private address without ALLOW_PRIVATE_HOSTS', async () => {
      const strict = await startTestApp(kind);
      try {
        const browser = browserOf(await strict.api('POST', '/ui/api/setup', { body: { workspaceName: 'Strict', name: 'Sam', email: 'sam@strict.test', password: PASSWORD } }));
        const res = await asBrowser(strict, browser, 'POST', PATH, unsaved);
        assert.equal(res.status, 200);
        assert.equal(res.json.ok, false);
        assert.match(res.json.error, /^Refused to connect to 127\.0\.0\.1: it is a loopback address\./);
      } finally {
        await strict.close();
      }
    });

    it('refuses members, API keys, a missing CSRF token and another site (and checks nothing)', async () => {
      assertProblem(await asBrowser(t, member, 'POST', PATH, unsaved), 403, 'forbidden');
      assertProblem(await asBrowser(t, null, 'POST', PATH, unsaved), 401, 'unauthorized');
      const key = await t.key(admin.session.workspace.id);
      assertProblem(await t.api('POST', PATH, { key: key.key, body: unsaved }), 401, 'unauthorized');
      assertProblem(await t.api('POST', PATH, { body: unsaved, headers: { cookie: admin.cookie } }), 403, 'forbidden');
      assertProblem(await asBrowser(t, admin, 'POST', PATH, unsaved, { origin: 'https://evil.example' }), 403, 'forbidden');
    });

    it('answers 400 to a bad body, and never 500', async () => {
      assertInvalid(await asBrowser(t, admin, 'POST', PATH, { ...unsaved, port: 70_000 }), ['port']);
      assertInvalid(await asBrowser(t, admin, 'POST', PATH, { ...unsaved, security: 'ssl' }), ['security']);
      assertInvalid(await asBrowser(t, admin, 'POST', PATH, { ...unsaved, host: 'a b' }), ['host']);
      assertInvalid(await asBrowser(t, admin, 'POST', PATH, { ...unsaved, extra: true }), []);
      assertInvalid(await asBrowser(t, admin, 'POST', PATH, { host: 'imap.example.com' }), ['port']);
      for (const body of [null, [], 'text', { host: 'x'.repeat(300) }, { ...unsaved, password: 'p'.repeat(2000) }]) {
        const res = await asBrowser(t, admin, 'POST', PATH, body);
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 40)}: ${res.text}`);
      }
    });

    it('audits every check with its outcome and never the password', async () => {
      const entries = (await auditRows(t, { workspaceId: admin.session.workspace.id })).filter((e) => e.action === 'mail_settings.imap_checked');
      assert.ok(entries.length >= 5, `${entries.length} entries`);
      assert.ok(entries.some((e) => e.outcome === 'success' && (e.details as any)?.ok === true));
      assert.ok(entries.some((e) => e.outcome === 'success' && (e.details as any)?.ok === false));
      assert.ok(entries.some((e) => e.outcome === 'denied' || e.outcome === 'failure'), 'the refused ones too');
      assert.doesNotMatch(JSON.stringify(entries), new RegExp(dovecot.password));
    });
  });
}

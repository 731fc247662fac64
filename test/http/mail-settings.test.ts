// Settings / E-mail (DESIGN §7) in the web UI's API: admins read and change the workspace's SMTP and IMAP settings
// and sender; passwords are sealed at rest, bound to their workspace, and never in an answer, an audit entry or a
// log line; servers on private addresses are refused unless ALLOW_PRIVATE_HOSTS; members are refused.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.ts';
import { buildApp, createDeps } from '../../src/http/app.ts';
import type { AppInstance } from '../../src/http/app-instance.ts';
import { MailSettingsUnreadable, loadMailTransport } from '../../src/domain/mail-settings/settings.ts';
import { BACKENDS, createTestDatabase, startTestApp, testConfig, type ApiResponse, type TestApp, type TestDatabase } from '../helpers.ts';
import { testCpu } from '../support/cpu.ts';
import { asBrowser, assertInvalid, assertProblem, browserOf, type Browser } from './support.ts';

const PASSWORD = 'correct horse battery staple';
// Distinctive enough that finding them anywhere cannot be chance.
const SMTP_SECRET = 'smtp-Pa55-7c1e9f0b-SECRET';
const IMAP_SECRET = 'imap-Pa55-41d2aa7e-SECRET';
// Public names that do not resolve here (the guard lets them through at save time) and a public address.
const SMTP_HOST = 'smtp.mailhost.test';
const IMAP_HOST = 'imap.mailhost.test';

const smtpOf = (overrides: Record<string, unknown> = {}) => ({ host: SMTP_HOST, port: 587, security: 'starttls', user: 'sales@acme.test', password: SMTP_SECRET, ...overrides });
const imapOf = (overrides: Record<string, unknown> = {}) => ({ host: IMAP_HOST, port: 993, security: 'tls', user: 'sales@acme.test', password: IMAP_SECRET, draftsFolder: 'Drafts', ...overrides });

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let admin: Browser;
    let member: Browser;
    const as = (who: Browser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      asBrowser(t, who, method, path, body, headers);
    const put = (body: unknown, who: Browser = admin) => as(who, 'PUT', '/ui/api/settings/email', body);
    const stored = async (workspaceId: string) =>
      t.database.db.selectFrom('mail_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();

    before(async () => {
      t = await startTestApp(kind, { config: { secretsKey: randomBytes(32), allowPrivateHosts: false } });
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      assert.equal((await as(admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD })).status, 201);
      member = browserOf(await t.api('POST', '/ui/api/session', { body: { email: 'mo@acme.test', password: PASSWORD } }));
    });
    after(() => t?.close());

    it('shows nothing set at first, then what an admin saved, passwords only as passwordSet', async () => {
      const empty = await as(admin, 'GET', '/ui/api/settings/email');
      assert.equal(empty.status, 200, empty.text);
      assert.deepEqual(empty.json, {
        fromName: null, fromAddress: null, defaultDeliver: null, smtp: null, imap: null,
        identity: { companyName: null, postalAddress: null, footerEnabled: true, unsubscribeAddress: null },
        installation: { smtp: null, from: null, postalAddress: '1 Test Street, Testville' }, updatedAt: null,
      });

      const saved = await put({ fromName: 'Acme Sales', fromAddress: 'sales@acme.test', defaultDeliver: 'send', smtp: smtpOf(), imap: imapOf() });
      assert.equal(saved.status, 200, saved.text);
      const expected = {
        fromName: 'Acme Sales', fromAddress: 'sales@acme.test', defaultDeliver: 'send',
        smtp: { host: SMTP_HOST, port: 587, security: 'starttls', user: 'sales@acme.test', passwordSet: true },
        imap: { host: IMAP_HOST, port: 993, security: 'tls', user: 'sales@acme.test', passwordSet: true, draftsFolder: 'Drafts' },
        identity: { companyName: null, postalAddress: null, footerEnabled: true, unsubscribeAddress: null },
        installation: { smtp: null, from: null, postalAddress: '1 Test Street, Testville' },
      };
      assert.deepEqual({ ...saved.json, updatedAt: undefined }, { ...expected, updatedAt: undefined });
      assert.match(saved.json.updatedAt, /^\d{4}-\d{2}-\d{2}T/);
      const read = await as(admin, 'GET', '/ui/api/settings/email');
      assert.deepEqual(read.json, saved.json, 'read back as saved');

      const transport = await loadMailTransport(t.database.db, admin.session.workspace.id, t.deps.secrets(), t.deps.config);
      assert.equal(transport.smtp?.password, SMTP_SECRET, 'the stored password opens for the workspace');
      assert.equal(transport.imap?.password, IMAP_SECRET);
      assert.equal(transport.smtpSource, 'workspace');
      assert.deepEqual(transport.from, { name: 'Acme Sales', address: 'sales@acme.test' });
    });

    it('keeps a password left out, changes a given one and clears one set to null or empty; smtp: null removes SMTP', async () => {
      const workspaceId = admin.session.workspace.id;
      const open = () => loadMailTransport(t.database.db, workspaceId, t.deps.secrets(), t.deps.config);
      await put({ smtp: smtpOf(), imap: imapOf() });
      const sealed = (await stored(workspaceId))!.smtp_password;

      // The same server, security and user (here left out, so the stored one): the password stays.
      const { password: _p, user: _u, ...withoutPassword } = smtpOf();
      const kept = await put({ smtp: withoutPassword, fromName: 'Acme Sales' });
      assert.equal(kept.status, 200, kept.text);
      assert.equal(kept.json.smtp.user, 'sales@acme.test');
      assert.equal(kept.json.smtp.passwordSet, true);
      assert.equal((await stored(workspaceId))!.smtp_password, sealed, 'the very same ciphertext is kept');
      assert.equal((await open()).smtp?.password, SMTP_SECRET);

      const changed = await put({ smtp: smtpOf({ password: 'a brand new one' }) });
      assert.equal(changed.json.smtp.passwordSet, true);
      assert.equal((await open()).smtp?.password, 'a brand new one');

      for (const cleared of [null, '']) {
        await put({ smtp: smtpOf() });
        const res = await put({ smtp: smtpOf({ password: cleared }) });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.smtp.passwordSet, false, `password ${JSON.stringify(cleared)} clears`);
        assert.equal((await stored(workspaceId))!.smtp_password, null);
        assert.equal((await open()).smtp?.password, null);
      }

      const removed = await put({ smtp: null });
      assert.equal(removed.json.smtp, null);
      assert.equal(removed.json.imap.passwordSet, true, 'IMAP stays as it was');
      const row = (await stored(workspaceId))!;
      assert.deepEqual([row.smtp_host, row.smtp_port, row.smtp_security, row.smtp_user, row.smtp_password], [null, null, null, null, null]);
      const gone = await put({ imap: null, fromName: null });
      assert.equal(gone.json.imap, null);
      assert.equal(gone.json.fromName, null);
      assert.equal(gone.json.fromAddress, 'sales@acme.test', 'a field left out stays');
    });

    it('is for admins: a member gets 403 on both, someone signed out 401, a change without its CSRF token 403, and nothing changes', async () => {
      await put({ smtp: smtpOf(), fromName: 'Acme Sales' });
      const before = await stored(admin.session.workspace.id);
      assertProblem(await as(member, 'GET', '/ui/api/settings/email'), 403, 'forbidden');
      assertProblem(await put({ fromName: 'Mallory' }, member), 403, 'forbidden');
      assertProblem(await as(null, 'GET', '/ui/api/settings/email'), 401, 'unauthorized');
      assertProblem(await as(null, 'PUT', '/ui/api/settings/email', { fromName: 'Mallory' }), 401, 'unauthorized');
      assertProblem(await t.api('PUT', '/ui/api/settings/email', { body: { fromName: 'Mallory' }, headers: { cookie: admin.cookie } }), 403, 'forbidden', 'no CSRF token');
      assertProblem(await as(admin, 'PUT', '/ui/api/settings/email', { fromName: 'Mallory' }, { 'x-csrf-token': 'not-the-token' }), 403, 'forbidden', 'a wrong CSRF token');
      const key = await t.key(admin.session.workspace.id);
      assertProblem(await t.api('GET', '/ui/api/settings/email', { key: key.key }), 401, 'unauthorized', 'an API key is not a session');
      assert.deepEqual(await stored(admin.session.workspace.id), before);
      const denied = (await as(admin, 'GET', `/ui/api/audit?action=mail_settings.updated&outcome=denied`)).json.data;
      assert.ok(denied.some((e: any) => e.userId === member.session.user.id), 'the member\'s attempt is in the audit log');
    });

    it('refuses a bad change with 400 naming each field, and changes nothing', async () => {
      await put({ smtp: smtpOf(), imap: imapOf(), fromAddress: 'sales@acme.test' });
      const before = await stored(admin.session.workspace.id);
      const cases: Array<[unknown, string[]]> = [
        [{ smtp: smtpOf({ port: 0 }) }, ['smtp.port']],
        [{ smtp: smtpOf({ port: 65536 }) }, ['smtp.port']],
        [{ smtp: smtpOf({ port: '587' }) }, ['smtp.port']],
        [{ imap: imapOf({ port: 1.5 }) }, ['imap.port']],
        [{ smtp: smtpOf({ host: 'smtp://mail.example.com' }) }, ['smtp.host']],
        [{ smtp: smtpOf({ host: 'mail example.com' }) }, ['smtp.host']],
        [{ smtp: smtpOf({ host: 'mail.example.com:587' }) }, ['smtp.host']],
        [{ smtp: smtpOf({ host: 'user@mail.example.com' }) }, ['smtp.host']],
        [{ smtp: smtpOf({ host: '' }) }, ['smtp.host']],
        [{ imap: imapOf({ host: `${'a'.repeat(60)}.`.repeat(5) }) }, ['imap.host']],
        [{ smtp: smtpOf({ security: 'ssl' }) }, ['smtp.security']],
        [{ smtp: smtpOf({ security: 'opportunistic' }) }, ['smtp.security']],
        [{ fromAddress: 'not an address' }, ['fromAddress']],
        [{ fromAddress: `${'a'.repeat(250)}@acme.test` }, ['fromAddress']],
        [{ fromName: 'x'.repeat(101) }, ['fromName']],
        [{ fromName: 'Acme\r\nBcc: victim@example.com' }, ['fromName']],
        [{ fromName: 'Acme =?utf-8?b?WW91ciBiYW5r?=' }, ['fromName']],
        [{ imap: imapOf({ draftsFolder: 'D'.repeat(201) }) }, ['imap.draftsFolder']],
        [{ imap: imapOf({ user: null }) }, ['imap.user']],
        [{ smtp: smtpOf({ user: null }) }, ['smtp.user']],
        [{ smtp: smtpOf({ password: 'p'.repeat(1025) }) }, ['smtp.password']],
        [{ defaultDeliver: 'fax' }, ['defaultDeliver']],
        [{ workspaceId: '00000000-0000-4000-8000-000000000000' }, ['workspaceId']],
        [{ smtp: { ...smtpOf(), passwordSet: true } }, ['smtp.passwordSet']],
        [{ smtp: { host: SMTP_HOST } }, ['smtp.port', 'smtp.security']],
        [{ fromName: 'A', smtp: smtpOf({ port: -1 }), imap: imapOf({ security: 'x' }) }, ['smtp.port', 'imap.security']],
        [{ smtp: smtpOf({ host: 'smtps://x' }), imap: imapOf({ host: 'a b', user: null }) }, ['smtp.host', 'imap.host', 'imap.user']],
      ];
      for (const [body, fields] of cases) {
        const res = await put(body);
        assertInvalid(res, fields, JSON.stringify(body).slice(0, 120));
        assert.deepEqual(res.json.errors.map((e: any) => e.field).sort(), [...fields].sort(), `only the fields at fault: ${res.text}`);
        assert.ok(!res.text.includes(SMTP_SECRET) && !res.text.includes(IMAP_SECRET), 'a refusal does not echo a password');
      }
      for (const raw of ['', 'null', '[]', '"x"', '{"smtp":', '{"__proto__":{"fromName":"x"}}']) {
        const res = await t.api('PUT', '/ui/api/settings/email', { raw, headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'content-type': 'application/json' } });
        assertProblem(res, 400, 'invalid_request', raw);
      }
      assert.deepEqual(await stored(admin.session.workspace.id), before, 'nothing changed');
    });

    it('accepts IPv4 and bracketed IPv6 addresses of public servers, stored as the client dials them', async () => {
      const res = await put({ smtp: smtpOf({ host: '[2606:4700:4700::1111]' }), imap: imapOf({ host: '1.1.1.1' }) });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.smtp.host, '2606:4700:4700::1111');
      assert.equal(res.json.imap.host, '1.1.1.1');
    });

    it('refuses a private or loopback server unless ALLOW_PRIVATE_HOSTS, naming the field', async () => {
      const before = await stored(admin.session.workspace.id);
      for (const [body, field, pattern] of [
        [{ smtp: smtpOf({ host: '127.0.0.1' }) }, 'smtp.host', /127\.0\.0\.1.*loopback/],
        [{ smtp: smtpOf({ host: 'localhost' }) }, 'smtp.host', /localhost \((127\.0\.0\.1|::1)\)/],
        [{ imap: imapOf({ host: '10.1.2.3' }) }, 'imap.host', /10\.1\.2\.3.*private/],
        [{ imap: imapOf({ host: '169.254.169.254' }) }, 'imap.host', /metadata/],
        [{ smtp: smtpOf({ host: '[::ffff:192.168.1.1]' }) }, 'smtp.host', /private/],
      ] as const) {
        const res = await put(body);
        assertInvalid(res, [field], JSON.stringify(body));
        const message = res.json.errors.find((e: any) => e.field === field).message;
        assert.match(message, pattern);
        assert.match(message, /ALLOW_PRIVATE_HOSTS=true/);
      }
      assert.deepEqual(await stored(admin.session.workspace.id), before);
    });

    it('audits a change as mail_settings.updated with the parts it changed, never a password', async () => {
      await put({ smtp: null, imap: null, fromName: null });
      const audit = async () => (await as(admin, 'GET', '/ui/api/audit?action=mail_settings.updated&outcome=success&limit=1')).json.data[0];
      await put({ smtp: smtpOf() });
      let entry = await audit();
      assert.equal(entry.source, 'ui');
      assert.equal(entry.userId, admin.session.user.id);
      assert.deepEqual(entry.target, { type: 'workspace', id: admin.session.workspace.id });
      assert.deepEqual(entry.details, { changed: 'smtp', smtp: 'added', imap: 'unchanged', passwordChanged: true, smtpPasswordChanged: true, imapPasswordChanged: false });
      const { password: _p, ...withoutPassword } = smtpOf();
      await put({ fromName: 'Acme Sales', smtp: { ...withoutPassword, user: 'desk@acme.test' } });
      entry = await audit();
      assert.deepEqual(entry.details, {
        changed: 'sender,smtp', smtp: 'changed', imap: 'unchanged', passwordChanged: true, smtpPasswordChanged: true,
        imapPasswordChanged: false,
      }, 'a password dropped with a change of user is a change of password');
      await put({ smtp: { ...withoutPassword, user: 'desk@acme.test', password: 'desk password' } });
      await put({ fromName: 'Acme', smtp: { ...withoutPassword, user: 'desk@acme.test' } });
      entry = await audit();
      assert.deepEqual(entry.details, {
        changed: 'sender', smtp: 'unchanged', imap: 'unchanged', passwordChanged: false, smtpPasswordChanged: false,
        imapPasswordChanged: false,
      });
      await put({ imap: imapOf(), smtp: null, defaultDeliver: 'mailbox' });
      entry = await audit();
      assert.deepEqual(entry.details, { changed: 'defaultDeliver,smtp,imap', smtp: 'removed', imap: 'added', passwordChanged: true, smtpPasswordChanged: true, imapPasswordChanged: true });
    });

    it('drops a stored password left out when host, port, user or security changes; IMAP asks again', async () => {
      const workspaceId = admin.session.workspace.id;
      const open = () => loadMailTransport(t.database.db, workspaceId, t.deps.secrets(), t.deps.config);
      const changes: Array<[string, Record<string, unknown>]> = [
        ['port', { port: 2525 }], ['host', { host: 'other.mailhost.test' }], ['user', { user: 'someone@acme.test' }],
        ['security', { security: 'none', port: 587 }], ['security', { security: 'tls', port: 587 }],
      ];
      for (const [what, change] of changes) {
        assert.equal((await put({ smtp: smtpOf(), imap: imapOf() })).status, 200);
        const { password: _s, ...smtp } = smtpOf(change);
        const moved = await put({ smtp });
        assert.equal(moved.status, 200, moved.text);
        assert.equal(moved.json.smtp.passwordSet, false, `a change of ${what} drops the SMTP password`);
        assert.equal((await stored(workspaceId))!.smtp_password, null);
        assert.equal((await open()).smtp?.password, null);

        const { password: _i, ...imap } = imapOf(change);
        const refused = await put({ imap });
        assertInvalid(refused, ['imap.password']);
        assert.match(refused.json.detail, /saved password is sent only to the host, port, user and security/);
        assert.equal((await open()).imap?.port, 993, 'a refused change changes nothing');
        assert.equal((await open()).imap?.password, IMAP_SECRET);
      }
      // The host as a resolver sees it (capitals, a final dot) is the same server: the password stays.
      assert.equal((await put({ smtp: smtpOf() })).status, 200);
      const { password: _p, ...same } = smtpOf({ host: `${SMTP_HOST.toUpperCase()}.` });
      assert.equal((await put({ smtp: same })).json.smtp.passwordSet, true);
    });

    it('opens a password sealed before it was bound to its server for its row; a change of port drops it', async () => {
      const workspaceId = admin.session.workspace.id;
      assert.equal((await put({ smtp: smtpOf() })).status, 200);
      const unbound = t.deps.secrets().seal('sealed last year', `mail_settings:${workspaceId}:smtp_password`);
      await t.database.db.updateTable('mail_settings').set({ smtp_password: unbound })
        .where('workspace_id', '=', workspaceId).execute();
      const open = () => loadMailTransport(t.database.db, workspaceId, t.deps.secrets(), t.deps.config);
      assert.equal((await open()).smtp?.password, 'sealed last year');
      const { password: _p, ...moved } = smtpOf({ port: 2525 });
      assert.equal((await put({ smtp: moved })).json.smtp.passwordSet, false);
      assert.equal((await open()).smtp?.password, null);
    });

    it('binds a stored password to its workspace: copied into another workspace it does not open, and saving it again mends it', async () => {
      const a = admin.session.workspace.id;
      await put({ smtp: smtpOf(), imap: imapOf() });
      const other = await t.workspace('pro', 'Other');
      const now = new Date();
      const row = (await stored(a))!;
      await t.database.db.insertInto('mail_settings').values({ ...row, workspace_id: other.id, updated_at: now, updated_by_user_id: null }).execute();
      const box = t.deps.secrets();
      await assert.rejects(loadMailTransport(t.database.db, other.id, box, t.deps.config), (error: unknown) => {
        assert.ok(error instanceof MailSettingsUnreadable);
        assert.equal(error.code, 'invalid_state', 'answered as 409, never as 500');
        assert.equal(error.field, 'smtp.password');
        assert.match(error.message, /unreadable.*Save the password again in Settings \/ E-mail/s);
        assert.ok(!error.message.includes(SMTP_SECRET));
        return true;
      });
      // Mending one password shows the other is unreadable too.
      await t.database.db.updateTable('mail_settings').set({ smtp_password: null }).where('workspace_id', '=', other.id).execute();
      await assert.rejects(loadMailTransport(t.database.db, other.id, box, t.deps.config), (error: unknown) =>
        error instanceof MailSettingsUnreadable && error.field === 'imap.password');
      // The same ciphertext moved into the other field of its own workspace does not open either.
      await t.database.db.updateTable('mail_settings').set({ smtp_password: row.imap_password }).where('workspace_id', '=', a).execute();
      await assert.rejects(loadMailTransport(t.database.db, a, box, t.deps.config), MailSettingsUnreadable);
      await t.database.db.updateTable('mail_settings').set({ smtp_password: row.smtp_password }).where('workspace_id', '=', a).execute();
      assert.equal((await loadMailTransport(t.database.db, a, box, t.deps.config)).smtp?.password, SMTP_SECRET, 'in its own place it opens');
      // A tampered ciphertext, or one that is not a ciphertext, is unreadable in the same way.
      const tampered = row.smtp_password!.slice(0, -4) + (row.smtp_password!.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      for (const bad of [tampered, 'plaintext-password', 'v1:', 'v2:abcd']) {
        await t.database.db.updateTable('mail_settings').set({ smtp_password: bad }).where('workspace_id', '=', a).execute();
        await assert.rejects(loadMailTransport(t.database.db, a, box, t.deps.config), MailSettingsUnreadable, bad);
      }
      const view = await as(admin, 'GET', '/ui/api/settings/email');
      assert.equal(view.status, 200, 'the settings page still opens');
      const mended = await put({ smtp: smtpOf({ password: 'saved again' }) });
      assert.equal(mended.status, 200, mended.text);
      assert.equal((await loadMailTransport(t.database.db, a, box, t.deps.config)).smtp?.password, 'saved again');
    });
  });

  describe(`${kind}: each person's sender name and signature`, () => {
    let t: TestApp;
    let admin: Browser;
    let member: Browser;
    const patch = (who: Browser | null, body: unknown) => asBrowser(t, who, 'PATCH', '/ui/api/profile', body);

    before(async () => {
      t = await startTestApp(kind, { config: { secretsKey: randomBytes(32) } });
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      assert.equal((await asBrowser(t, admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD })).status, 201);
      member = browserOf(await t.api('POST', '/ui/api/session', { body: { email: 'mo@acme.test', password: PASSWORD } }));
    });
    after(() => t?.close());

    it('saves a sender name and a signature, answers them with the session, and clears them with null or blank', async () => {
      const first = await asBrowser(t, member, 'GET', '/ui/api/profile');
      assert.deepEqual(first.json, { name: 'Mo Chen', email: 'mo@acme.test', senderName: null, signature: null });
      const saved = await patch(member, { senderName: '  Mo from Acme ', signature: '\r\n\r\nMo Chen\r\nAccount executive, Acme   \r\n\tacme.test\n\n' });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual(saved.json.profile, { name: 'Mo Chen', email: 'mo@acme.test', senderName: 'Mo from Acme', signature: 'Mo Chen\nAccount executive, Acme\n\tacme.test' });
      assert.equal(saved.json.user.id, member.session.user.id, 'the answer is the session too');
      assert.equal(saved.json.csrfToken, member.csrf);
      assert.deepEqual((await asBrowser(t, member, 'GET', '/ui/api/profile')).json, saved.json.profile);
      const row = await t.database.db.selectFrom('users').select(['name', 'sender_name', 'signature']).where('id', '=', member.session.user.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { name: 'Mo Chen', sender_name: 'Mo from Acme', signature: 'Mo Chen\nAccount executive, Acme\n\tacme.test' });

      const renamed = await patch(member, { name: 'Mo Chen-Li' });
      assert.equal(renamed.json.user.name, 'Mo Chen-Li');
      assert.equal(renamed.json.profile.signature, 'Mo Chen\nAccount executive, Acme\n\tacme.test', 'what is left out stays');
      assert.equal((await patch(member, { senderName: null })).json.profile.senderName, null);
      assert.equal((await patch(member, { signature: ' \n \n' })).json.profile.signature, null, 'a blank signature is none');
      await patch(member, { signature: 'Mo' });
      assert.equal((await patch(member, { signature: null })).json.profile.signature, null);
      const adminProfile = await asBrowser(t, admin, 'GET', '/ui/api/profile');
      assert.deepEqual(adminProfile.json, { name: 'Sam Rivera', email: 'sam@acme.test', senderName: null, signature: null }, 'only your own profile changes');

      const audit = (await asBrowser(t, admin, 'GET', '/ui/api/audit?action=user.updated&limit=10')).json.data;
      assert.ok(audit.some((e: any) => e.userId === member.session.user.id && e.details?.changed === 'senderName,signature'));
    });

    it('takes at most 2,000 characters and 20 lines of plain text as a signature, and one line of 100 as a sender name', async () => {
      const before = await asBrowser(t, admin, 'GET', '/ui/api/profile');
      const cases: Array<[unknown, string[]]> = [
        [{ signature: 'x'.repeat(2001) }, ['signature']],
        [{ signature: 'x'.repeat(5000) }, ['signature']],
        [{ signature: Array.from({ length: 21 }, (_, i) => `line ${i}`).join('\n') }, ['signature']],
        [{ signature: 'Sam\u0000Rivera' }, ['signature']],
        [{ signature: 'Sam\u001b[31mRivera' }, ['signature']],
        [{ signature: 42 }, ['signature']],
        [{ senderName: 'x'.repeat(101) }, ['senderName']],
        [{ senderName: 'Sam\r\nBcc: victim@example.com' }, ['senderName']],
        [{ senderName: 'Sam', signature: 'x'.repeat(2001) }, ['signature']],
        [{ senderName: 'Sam\u2028Rivera', signature: 'a\u0007' }, ['senderName', 'signature']],
        [{ name: '' }, ['name']],
        [{ email: 'other@acme.test' }, ['email']],
        [{ role: 'ADMIN' }, ['role']],
      ];
      for (const [body, fields] of cases) assertInvalid(await patch(admin, body), fields, JSON.stringify(body).slice(0, 80));
      assert.deepEqual((await asBrowser(t, admin, 'GET', '/ui/api/profile')).json, before.json, 'nothing changed');
      const longest = Array.from({ length: 20 }, () => 'y'.repeat(99)).join('\n');
      assert.equal(longest.length, 1999);
      assert.equal((await patch(admin, { signature: longest, senderName: 'S'.repeat(100) })).status, 200, 'the limits themselves are allowed');
    });

    it('is for signed-in people with their CSRF token', async () => {
      assertProblem(await t.api('GET', '/ui/api/profile'), 401, 'unauthorized');
      assertProblem(await patch(null, { signature: 'x' }), 401, 'unauthorized');
      assertProblem(await t.api('PATCH', '/ui/api/profile', { body: { signature: 'x' }, headers: { cookie: member.cookie } }), 403, 'forbidden');
    });
  });

  describe(`${kind}: an installation with SMTP_URL, MAIL_FROM and ALLOW_PRIVATE_HOSTS, its log captured`, () => {
    let testDb: TestDatabase;
    let app: AppInstance;
    let url: string;
    let dataDir: string;
    const lines: string[] = [];
    const SMTP_URL_SECRET = 'url-Pa55-93be0c1d-SECRET';
    const request = async (method: string, path: string, options: { who?: Browser | null; body?: unknown; key?: string } = {}): Promise<ApiResponse> => {
      const headers: Record<string, string> = {};
      if (options.who) Object.assign(headers, { cookie: options.who.cookie }, method === 'GET' ? {} : { 'x-csrf-token': options.who.csrf });
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
    };

    before(async () => {
      testDb = await createTestDatabase(kind);
      dataDir = mkdtempSync(path.join(tmpdir(), 'leadrun-mail-settings-'));
      // No SECRETS_KEY: the embedded default, whose key is made into DATA_DIR when first needed.
      const config = testConfig({ secretsKey: null, dataDir, allowPrivateHosts: true }, {
        SMTP_URL: `smtp://relay-user:${SMTP_URL_SECRET}@mail.example.com:587`, MAIL_FROM: 'Acme <hello@acme.example>', LOG_LEVEL: 'trace',
      });
      const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
      const deps = createDeps(config, testDb.database, systemClock, () => {}, testCpu());
      app = await buildApp(deps, { logger: pino({ level: 'trace' }, sink) });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      url = typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '';
    });
    after(async () => {
      await app?.close();
      await testDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('makes the key in DATA_DIR only when a first password is saved, readable by its owner alone', async () => {
      const admin = browserOf(await request('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      const keyFile = path.join(dataDir, 'secrets.key');
      assert.equal((await request('PUT', '/ui/api/settings/email', { who: admin, body: { fromName: 'Acme', smtp: smtpOf({ password: null }) } })).status, 200);
      assert.equal(existsSync(keyFile), false, 'no password, no key');
      assert.equal((await request('PUT', '/ui/api/settings/email', { who: admin, body: { smtp: smtpOf() } })).status, 200);
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.equal((await request('PUT', '/ui/api/settings/email', { who: admin, body: { smtp: null, fromName: null } })).status, 200);
    });

    it('shows the SMTP_URL fallback without its credentials, accepts private servers, and never returns or logs a password', async () => {
      const admin = browserOf(await request('POST', '/ui/api/session', { body: { email: 'sam@acme.test', password: PASSWORD } }));
      const view = await request('GET', '/ui/api/settings/email', { who: admin });
      assert.deepEqual(view.json.installation, {
        smtp: { host: 'mail.example.com', port: 587 }, from: { name: 'Acme', address: 'hello@acme.example' }, postalAddress: '1 Test Street, Testville',
      });
      assert.equal(view.json.smtp, null);
      assert.ok(!view.text.includes('relay-user') && !view.text.includes(SMTP_URL_SECRET), 'SMTP_URL\'s credentials are not shown');

      const answers: ApiResponse[] = [view];
      const saved = await request('PUT', '/ui/api/settings/email', {
        who: admin, body: { smtp: smtpOf({ host: '127.0.0.1', port: 2525, security: 'none' }), imap: imapOf({ host: 'localhost', port: 143, security: 'starttls' }) },
      });
      assert.equal(saved.status, 200, `private servers are allowed here: ${saved.text}`);
      assert.equal(saved.json.smtp.host, '127.0.0.1');
      answers.push(saved);
      answers.push(await request('PUT', '/ui/api/settings/email', { who: admin, body: { smtp: smtpOf({ password: `${SMTP_SECRET}-2`, port: 0 }) } }));
      answers.push(await request('PUT', '/ui/api/settings/email', { who: admin, body: { smtp: smtpOf({ password: `${SMTP_SECRET}-3` }) } }));
      answers.push(await request('GET', '/ui/api/settings/email', { who: admin }));
      answers.push(await request('GET', '/ui/api/audit?limit=100', { who: admin }));
      answers.push(await request('GET', '/ui/api/start', { who: admin }));
      answers.push(await request('GET', '/ui/api/session', { who: admin }));
      const key = await request('POST', '/ui/api/keys', { who: admin, body: { name: 'probe', scopes: ['leads:read', 'runs:read'] } });
      answers.push(await request('GET', '/api/v1/leads', { key: key.json.key }));
      answers.push(await request('GET', '/api/v1/runs', { key: key.json.key }));
      answers.push(await request('GET', '/api/v1/openapi.json'));

      const transport = await loadMailTransport(testDb.database.db, admin.session.workspace.id, app.deps.secrets(), app.deps.config);
      assert.equal(transport.smtp?.password, `${SMTP_SECRET}-3`, 'the last password saved is the one stored');
      const row = await testDb.database.db.selectFrom('mail_settings').selectAll().executeTakeFirstOrThrow();
      for (const column of [row.smtp_password, row.imap_password]) {
        assert.match(column ?? '', /^v1:[A-Za-z0-9+/]+=*$/, 'a sealed ciphertext');
        assert.ok(!column!.includes('SECRET') && !Buffer.from(column!.slice(3), 'base64').toString('latin1').includes('SECRET'), 'not the password, nor its bytes');
      }
      const log = lines.join('');
      assert.ok(lines.length > 10, 'the app did log');
      for (const secret of [SMTP_SECRET, IMAP_SECRET, SMTP_URL_SECRET]) {
        for (const answer of answers) assert.ok(!answer.text.includes(secret), `no answer carries ${secret}`);
        assert.ok(!log.includes(secret), `no log line carries ${secret}`);
      }
    });
  });
}

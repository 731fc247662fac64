// Members and passwords in the web UI's API: admins change roles, remove people and make one-time password reset
// links; the last admin stays; everyone renames themselves and changes their password; a reset link works once,
// for a day, for a present member, and from a client that has not tried too often.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { runAdminCommand } from '../../src/admin/commands.ts';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { asBrowser, assertInvalid, assertProblem, auditRows, browserOf, db, type Browser } from './support.ts';

const PASSWORD = 'correct horse battery staple';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

// Every reset-link request and sign-in comes from an address of its own, so that the per-address limits are met
// only by the cases that test them.
let addresses = 0;
const freshAddress = () => {
  addresses += 1;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
};

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let clock: ManualClock;
    let admin: Browser;

    const as = (who: Browser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      asBrowser(t, who, method, path, body, headers);
    const signInAttempt = (email: string, password = PASSWORD, address = freshAddress()) =>
      t.api('POST', '/ui/api/session', { body: { email, password }, headers: { 'x-forwarded-for': address } });
    const signIn = async (email: string, password = PASSWORD) => {
      const res = await signInAttempt(email, password);
      assert.equal(res.status, 200, `${email} signs in: ${res.text}`);
      return browserOf(res);
    };
    const addMember = async (by: Browser, name: string, email: string, role: 'ADMIN' | 'MEMBER' = 'MEMBER'): Promise<string> => {
      const res = await as(by, 'POST', '/ui/api/members', { name, email, role, password: PASSWORD });
      assert.equal(res.status, 201, res.text);
      return res.json.id;
    };
    const resetCheck = (token: string, address = freshAddress(), headers: Record<string, string> = {}) =>
      t.api('POST', '/ui/api/password-reset/check', { body: { token }, headers: { 'x-forwarded-for': address, ...headers } });
    const resetWith = (token: string, password: string, address = freshAddress(), headers: Record<string, string> = {}) =>
      t.api('POST', '/ui/api/password-reset', { body: { token, password }, headers: { 'x-forwarded-for': address, ...headers } });
    const resetLink = async (by: Browser, userId: string): Promise<{ url: string; token: string; expiresAt: string }> => {
      const res = await as(by, 'POST', `/ui/api/members/${userId}/password-reset`, {});
      assert.equal(res.status, 201, res.text);
      return { ...res.json, token: tokenOf(res.json.url) };
    };
    const roleOf = async (userId: string) => (await db(t).selectFrom('users').select('role').where('id', '=', userId).executeTakeFirstOrThrow()).role;
    const adminUserOf = async (workspaceId: string) =>
      (await db(t).selectFrom('workspaces').select('admin_user_id').where('id', '=', workspaceId).executeTakeFirstOrThrow()).admin_user_id;
    const auditOf = async (action: string) => (await as(admin, 'GET', `/ui/api/audit?action=${action}&limit=200`)).json.data as any[];
    /** A workspace made with the CLI, its admin given a password and signed in. */
    const otherWorkspace = async () => {
      const workspace = await t.workspace('pro');
      const row = await db(t).selectFrom('users').select('email').where('id', '=', workspace.adminUserId).executeTakeFirstOrThrow();
      await runAdminCommand({ db: t.database.db, clock, migrate: () => t.database.migrate() }, { command: 'user.password', email: row.email!, password: PASSWORD });
      return { workspace, admin: await signIn(row.email!) };
    };

    const start = async () => {
      clock = new ManualClock('2026-03-10T09:00:00.000Z');
      // Behind a proxy, as far as the tests go: each request may say which client address it comes from.
      t = await startTestApp(kind, { clock, config: { trustProxy: true } });
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
    };
    const stop = () => t?.close();

    describe('roles', () => {
      before(start);
      after(stop);

      it('lets an admin change a role, which the person\'s open session feels on its next request', async () => {
        const mo = await addMember(admin, 'Mo Chen', 'mo@acme.test');
        const moBrowser = await signIn('mo@acme.test');
        assertProblem(await as(moBrowser, 'GET', '/ui/api/keys'), 403, 'forbidden');

        const promoted = await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'ADMIN' });
        assert.equal(promoted.status, 200, promoted.text);
        assert.deepEqual({ ...promoted.json, createdAt: undefined }, { id: mo, name: 'Mo Chen', email: 'mo@acme.test', role: 'ADMIN', createdAt: undefined });
        assert.equal((await as(moBrowser, 'GET', '/ui/api/keys')).status, 200, 'an admin at once, without signing in again');
        assert.equal((await as(moBrowser, 'GET', '/ui/api/session')).json.user.role, 'ADMIN');

        const demoted = await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'MEMBER' });
        assert.equal(demoted.json.role, 'MEMBER');
        assertProblem(await as(moBrowser, 'GET', '/ui/api/keys'), 403, 'forbidden', 'a member again at once');
        assert.equal((await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'MEMBER' })).status, 200, 'the same role again changes nothing');

        const entries = await auditOf('member.role_changed');
        assert.equal(entries.filter((e) => e.outcome === 'success').length, 3);
        assert.ok(entries.every((e) => e.source === 'ui' && e.userId === admin.session.user.id && e.target.type === 'user' && e.target.id === mo));
      });

      it('refuses a member who tries to change roles, remove someone or make a reset link (403), and changes nothing', async () => {
        const member = await signIn('mo@acme.test');
        const sam = admin.session.user.id;
        for (const [method, path, body] of [
          ['PATCH', `/ui/api/members/${sam}`, { role: 'MEMBER' }],
          ['PATCH', `/ui/api/members/${member.session.user.id}`, { role: 'ADMIN' }],
          ['POST', `/ui/api/members/${sam}/remove`, { revokeKeys: false }],
          ['POST', `/ui/api/members/${sam}/password-reset`, {}],
        ] as const) {
          assertProblem(await as(member, method, path, body), 403, 'forbidden', `${method} ${path}`);
        }
        assert.equal(await roleOf(sam), 'ADMIN');
        assert.equal(await roleOf(member.session.user.id), 'MEMBER', 'nobody promotes themselves');
        assert.equal((await db(t).selectFrom('password_reset_links').select('digest').execute()).length, 0);
        const denied = (await as(admin, 'GET', `/ui/api/audit?actor=${member.session.user.id}&outcome=denied`)).json.data;
        assert.deepEqual(denied.map((e: any) => e.action).sort(), ['member.password_reset_link_created', 'member.removed', 'member.role_changed', 'member.role_changed']);
      });

      it('refuses a role that is not ADMIN or MEMBER, and any other field, naming it (400)', async () => {
        const mo = (await as(admin, 'GET', '/ui/api/members')).json.data.find((m: any) => m.email === 'mo@acme.test').id;
        assertInvalid(await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'OWNER' }), ['role']);
        assertInvalid(await as(admin, 'PATCH', `/ui/api/members/${mo}`, {}), ['role']);
        assertInvalid(await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'ADMIN', email: 'new@acme.test' }), ['email']);
        assertInvalid(await as(admin, 'PATCH', `/ui/api/members/${mo}`, { role: 'ADMIN', workspaceId: admin.session.workspace.id }), ['workspaceId']);
        assertInvalid(await as(admin, 'POST', `/ui/api/members/${mo}/remove`, {}), ['revokeKeys']);
        assertInvalid(await as(admin, 'POST', `/ui/api/members/${mo}/remove`, { revokeKeys: 'yes' }), ['revokeKeys']);
        assert.equal(await roleOf(mo), 'MEMBER');
        for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
          assertProblem(await as(admin, 'PATCH', `/ui/api/members/${id}`, { role: 'ADMIN' }), 404, 'not_found', id);
          assertProblem(await as(admin, 'POST', `/ui/api/members/${id}/remove`, { revokeKeys: false }), 404, 'not_found', id);
          assertProblem(await as(admin, 'POST', `/ui/api/members/${id}/password-reset`, {}), 404, 'not_found', id);
        }
      });

      it('never demotes or removes the only admin (409); with a second admin either may go, and the workspace\'s admin user moves', async () => {
        const sam = admin.session.user.id;
        const workspaceId = admin.session.workspace.id;
        const demoteSelf = await as(admin, 'PATCH', `/ui/api/members/${sam}`, { role: 'MEMBER' });
        assertProblem(demoteSelf, 409, 'invalid_state');
        assert.match(demoteSelf.json.detail, /only admin/);
        const removeSelf = await as(admin, 'POST', `/ui/api/members/${sam}/remove`, { revokeKeys: false });
        assertProblem(removeSelf, 409, 'invalid_state');
        assert.equal(await roleOf(sam), 'ADMIN');
        assert.equal((await as(admin, 'GET', '/ui/api/session')).status, 200, 'still signed in');
        assert.equal(await adminUserOf(workspaceId), sam);

        const ada = await addMember(admin, 'Ada Byron', 'ada@acme.test', 'ADMIN');
        const adaBrowser = await signIn('ada@acme.test');
        const stepDown = await as(admin, 'PATCH', `/ui/api/members/${sam}`, { role: 'MEMBER' });
        assert.equal(stepDown.status, 200, stepDown.text);
        assert.equal(await adminUserOf(workspaceId), ada, 'runs started with a key are now attributed to an admin still');
        assertProblem(await as(admin, 'GET', '/ui/api/keys'), 403, 'forbidden', 'Sam is a member now');
        assertProblem(await as(adaBrowser, 'PATCH', `/ui/api/members/${ada}`, { role: 'MEMBER' }), 409, 'invalid_state', 'Ada is the only admin now');
        assert.equal((await as(adaBrowser, 'PATCH', `/ui/api/members/${sam}`, { role: 'ADMIN' })).status, 200);
        assert.equal(await adminUserOf(workspaceId), ada, 'promoting someone does not move it');
      });

      it('leaves one admin when two admins demote each other at the same moment, or remove each other', async () => {
        const { workspace, admin: first } = await otherWorkspace();
        const secondId = await addMember(first, 'Second Admin', `second-${workspace.id.slice(0, 8)}@example.com`, 'ADMIN');
        const second = await signIn(`second-${workspace.id.slice(0, 8)}@example.com`);
        const admins = async () => (await db(t).selectFrom('users').select('id')
          .where('workspace_id', '=', workspace.id).where('role', '=', 'ADMIN').where('removed_at', 'is', null).execute()).map((r) => r.id);
        const ids = [workspace.adminUserId, secondId];
        for (let round = 0; round < 8; round++) {
          const answers = await Promise.all([
            as(first, 'PATCH', `/ui/api/members/${secondId}`, { role: 'MEMBER' }),
            as(second, 'PATCH', `/ui/api/members/${workspace.adminUserId}`, { role: 'MEMBER' }),
          ]);
          const won = answers.filter((r) => r.status === 200);
          assert.equal(won.length, 1, `round ${round}: one demotion wins (${answers.map((r) => r.status)})`);
          // The other is refused: by the last-admin rule (409), or, when it was authenticated after the first
          // committed, as a member (403).
          const lost = answers.find((r) => r.status !== 200)!;
          assert.ok(lost.status === 409 || lost.status === 403, `round ${round}: ${lost.text}`);
          const left = await admins();
          assert.equal(left.length, 1, `round ${round}: one admin is left`);
          assert.ok(ids.includes(await adminUserOf(workspace.id) ?? ''), 'the workspace admin user is one of them');
          assert.equal(await adminUserOf(workspace.id), left[0], 'and it is the admin that is left');
          const survivor = left[0] === workspace.adminUserId ? first : second;
          const other = left[0] === workspace.adminUserId ? secondId : workspace.adminUserId;
          assert.equal((await as(survivor, 'PATCH', `/ui/api/members/${other}`, { role: 'ADMIN' })).status, 200);
        }
        const answers = await Promise.all([
          as(first, 'POST', `/ui/api/members/${secondId}/remove`, { revokeKeys: false }),
          as(second, 'POST', `/ui/api/members/${workspace.adminUserId}/remove`, { revokeKeys: false }),
        ]);
        assert.equal(answers.filter((r) => r.status === 200).length, 1, answers.map((r) => r.text).join('\n'));
        // The loser was refused as the last admin (409), or had been signed out by the removal already (401).
        assert.ok(answers.some((r) => r.status === 409 || r.status === 401), answers.map((r) => r.text).join('\n'));
        const left = await admins();
        assert.equal(left.length, 1, 'one admin is left');
        assert.equal(await adminUserOf(workspace.id), left[0]);
      });

      it('answers 404 to an admin acting on a person of another workspace, and changes nothing there', async () => {
        const { workspace, admin: theirAdmin } = await otherWorkspace();
        const theirs = workspace.adminUserId;
        assertProblem(await as(admin, 'PATCH', `/ui/api/members/${theirs}`, { role: 'MEMBER' }), 404, 'not_found');
        assertProblem(await as(admin, 'POST', `/ui/api/members/${theirs}/remove`, { revokeKeys: true }), 404, 'not_found');
        assertProblem(await as(admin, 'POST', `/ui/api/members/${theirs}/password-reset`, {}), 404, 'not_found');
        assert.equal(await roleOf(theirs), 'ADMIN');
        assert.equal((await as(theirAdmin, 'GET', '/ui/api/session')).status, 200, 'their admin is still signed in');
        const row = await db(t).selectFrom('users').select(['removed_at', 'email']).where('id', '=', theirs).executeTakeFirstOrThrow();
        assert.equal(row.removed_at, null);
        assert.equal((await db(t).selectFrom('password_reset_links').select('digest').where('user_id', '=', theirs).execute()).length, 0);
        // And the other way round: their admin cannot reach this workspace's people either.
        assertProblem(await as(theirAdmin, 'PATCH', `/ui/api/members/${admin.session.user.id}`, { role: 'MEMBER' }), 404, 'not_found');
      });
    });

    describe('removal', () => {
      before(start);
      after(stop);

      it('removes a member at once: signed out everywhere, no sign-in, leads unassigned, the audit log still names them', async () => {
        const lee = await addMember(admin, 'Lee Park', 'lee@acme.test', 'ADMIN');
        const laptop = await signIn('lee@acme.test');
        const phone = await signIn('lee@acme.test');
        const made = await as(laptop, 'POST', '/api/v1/leads', { name: 'Grace Hopper', assignedToUserId: lee });
        assert.equal(made.status, 201, made.text);
        const other = await as(admin, 'POST', '/api/v1/leads', { name: 'Not Lee\'s', assignedToUserId: admin.session.user.id });
        const key = await as(laptop, 'POST', '/ui/api/keys', { name: 'Lee\'s CRM sync', scopes: ['leads:read'] });
        assert.equal(key.status, 201);

        const removed = await as(admin, 'POST', `/ui/api/members/${lee}/remove`, { revokeKeys: false });
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual({ ...removed.json, removedAt: undefined }, {
          id: lee, name: 'Lee Park', email: 'lee@acme.test', removedAt: undefined, endedSessions: 2, unassignedLeads: 1, revokedKeys: 0,
        });
        assert.equal(removed.json.removedAt, clock.now().toISOString());

        for (const device of [laptop, phone]) {
          assertProblem(await as(device, 'GET', '/ui/api/session'), 401, 'unauthorized');
          assertProblem(await as(device, 'GET', '/api/v1/leads'), 401, 'unauthorized');
          assertProblem(await as(device, 'POST', '/api/v1/leads', { name: 'After removal' }), 401, 'unauthorized');
        }
        assertProblem(await signInAttempt('lee@acme.test'), 401, 'unauthorized', 'the old password signs nobody in');
        const sessions = await db(t).selectFrom('sessions').select('revoked_at').where('user_id', '=', lee).execute();
        assert.ok(sessions.length === 2 && sessions.every((s) => s.revoked_at !== null), 'ended in the database');

        assert.equal((await as(admin, 'GET', `/api/v1/leads/${made.json.id}`)).json.data.assignedToUserId, null, 'their lead is unassigned');
        assert.equal((await as(admin, 'GET', `/api/v1/leads/${other.json.id}`)).json.data.assignedToUserId, admin.session.user.id, 'others are not');
        assertInvalid(await as(admin, 'PATCH', `/api/v1/leads/${made.json.id}`, { assignedToUserId: lee }), ['assignedToUserId']);
        assert.ok(!(await as(admin, 'GET', '/ui/api/members')).json.data.some((m: any) => m.id === lee), 'no longer listed');

        // Kept, as the admin chose: the key works, and its creator is shown as removed.
        assert.equal((await t.api('GET', '/api/v1/leads', { key: key.json.key })).status, 200);
        const listed = (await as(admin, 'GET', '/ui/api/keys')).json.data.find((k: any) => k.id === key.json.id);
        assert.deepEqual(listed.createdBy, { id: lee, name: 'Lee Park', email: 'lee@acme.test', removed: true });

        // The audit log keeps who they were: their own entries, and the removal's.
        const theirs = (await as(admin, 'GET', `/ui/api/audit?actor=${lee}`)).json.data;
        assert.ok(theirs.some((e: any) => e.action === 'lead.created'), 'their lead.created is there');
        assert.ok(theirs.every((e: any) => e.userId === lee && e.user.name === 'Lee Park' && e.user.email === 'lee@acme.test' && e.user.removed === true));
        const removal = (await auditOf('member.removed')).find((e) => e.outcome === 'success');
        assert.deepEqual([removal.source, removal.userId, removal.target, removal.status], ['ui', admin.session.user.id, { type: 'user', id: lee }, 200]);
        assert.equal(removal.user.removed, false);

        // Nothing more can be done to them.
        assertProblem(await as(admin, 'POST', `/ui/api/members/${lee}/remove`, { revokeKeys: true }), 404, 'not_found');
        assertProblem(await as(admin, 'PATCH', `/ui/api/members/${lee}`, { role: 'ADMIN' }), 404, 'not_found');
        assertProblem(await as(admin, 'POST', `/ui/api/members/${lee}/password-reset`, {}), 404, 'not_found');
        const row = await db(t).selectFrom('users').selectAll().where('id', '=', lee).executeTakeFirstOrThrow();
        assert.deepEqual([row.name, row.email, row.removed_email, row.password_hash], ['Lee Park', null, 'lee@acme.test', null], 'the row stays, without address or password');
      });

      it('frees the address: a new member may have it, and signs in as a new person', async () => {
        const old = (await db(t).selectFrom('users').select('id').where('removed_email', '=', 'lee@acme.test').executeTakeFirstOrThrow()).id;
        const again = await addMember(admin, 'Lee Park', 'LEE@acme.test');
        assert.notEqual(again, old);
        const browser = await signIn('lee@acme.test');
        assert.equal(browser.session.user.id, again);
        assert.equal(browser.session.user.role, 'MEMBER');
        // `leadrun user password` finds the present person only.
        const set = await runAdminCommand({ db: t.database.db, clock, migrate: () => t.database.migrate() }, { command: 'user.password', email: 'lee@acme.test', password: 'a password from the CLI' });
        assert.equal((set as { id: string }).id, again);
      });

      it('revokes the keys the person created when the admin asks, each revocation audited', async () => {
        const kim = await addMember(admin, 'Kim Ito', 'kim@acme.test', 'ADMIN');
        const kimBrowser = await signIn('kim@acme.test');
        const made = [];
        for (const name of ['Kim one', 'Kim two']) made.push((await as(kimBrowser, 'POST', '/ui/api/keys', { name, scopes: ['leads:read'] })).json);
        const alreadyRevoked = (await as(kimBrowser, 'POST', '/ui/api/keys', { name: 'Kim old', scopes: ['leads:read'] })).json;
        await as(kimBrowser, 'POST', `/ui/api/keys/${alreadyRevoked.id}/revoke`, {});
        const samsKey = (await as(admin, 'POST', '/ui/api/keys', { name: 'Sam\'s', scopes: ['leads:read'] })).json;
        for (const k of made) assert.equal((await t.api('GET', '/api/v1/leads', { key: k.key })).status, 200, 'in use before, and cached');

        const removed = await as(admin, 'POST', `/ui/api/members/${kim}/remove`, { revokeKeys: true });
        assert.equal(removed.status, 200, removed.text);
        assert.equal(removed.json.revokedKeys, 2);
        for (const k of made) assertProblem(await t.api('GET', '/api/v1/leads', { key: k.key }), 401, 'unauthorized', 'refused at once');
        assert.equal((await t.api('GET', '/api/v1/leads', { key: samsKey.key })).status, 200, 'other people\'s keys stay');
        const revocations = (await auditOf('key.revoked')).filter((e) => e.requestId === removed.headers.get('x-request-id'));
        assert.deepEqual(revocations.map((e) => e.target.id).sort(), made.map((k) => k.id).sort());
      });

      it('leaves no lead assigned to a removed person, even one assigned while the removal runs', async () => {
        const pat = await addMember(admin, 'Pat Doe', 'pat@acme.test');
        const creations = Array.from({ length: 20 }, (_, i) => as(admin, 'POST', '/api/v1/leads', { name: `Racing lead ${i}`, assignedToUserId: pat }));
        const [removal, ...answers] = await Promise.all([as(admin, 'POST', `/ui/api/members/${pat}/remove`, { revokeKeys: false }), ...creations]);
        assert.equal(removal.status, 200, removal.text);
        for (const answer of answers) {
          if (answer.status !== 201) assertInvalid(answer, ['assignedToUserId']);
        }
        const assigned = await db(t).selectFrom('leads').select('id').where('assigned_to_user_id', '=', pat).execute();
        assert.deepEqual(assigned, [], 'every lead created before the removal was unassigned by it; none after could name them');
        assert.equal(removal.json.unassignedLeads, answers.filter((r) => r.status === 201).length);
      });

      it('signs out an admin who removes themselves, and moves the workspace\'s admin user to an admin who stays', async () => {
        const { workspace, admin: founder } = await otherWorkspace();
        const heirEmail = `heir-${workspace.id.slice(0, 8)}@example.com`;
        const heir = await addMember(founder, 'Heir', heirEmail, 'ADMIN');
        await addMember(founder, 'Just a member', `member-${workspace.id.slice(0, 8)}@example.com`);
        const gone = await as(founder, 'POST', `/ui/api/members/${workspace.adminUserId}/remove`, { revokeKeys: false });
        assert.equal(gone.status, 200, gone.text);
        assert.match(gone.headers.get('set-cookie') ?? '', /^leadrun_session=;.*Expires=Thu, 01 Jan 1970/, 'the cookie is cleared');
        assertProblem(await as(founder, 'GET', '/ui/api/session'), 401, 'unauthorized');
        assert.equal(await adminUserOf(workspace.id), heir);

        // Runs started with an API key are now the heir's.
        const key = (await t.key(workspace.id)).key;
        const lead = (await t.api('POST', '/api/v1/leads', { key, body: { name: 'Ada' } })).json;
        const call = (await t.api('POST', `/api/v1/leads/${lead.id}/calls`, { key, body: { transcript: 'Ada: hello' } })).json;
        const run = await t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.id, callId: call.id } });
        assert.equal(run.status, 202, run.text);
        const row = await db(t).selectFrom('runs').select('created_by_user_id').where('id', '=', run.json.id).executeTakeFirstOrThrow();
        assert.equal(row.created_by_user_id, heir);
        const heirBrowser = await signIn(heirEmail);
        assertProblem(await as(heirBrowser, 'POST', `/ui/api/members/${heir}/remove`, { revokeKeys: false }), 409, 'invalid_state', 'the last admin cannot leave');
      });
    });

    describe('an address someone has in another workspace', () => {
      before(start);
      after(stop);

      it('is added like an unused one (201, the same shape); each person signs in to their own workspace', async () => {
        const other = await otherWorkspace();
        const theirs = other.admin.session.user.email as string;
        const ourPassword = 'a member password of ours';
        const body = (email: string) => ({ name: 'New Person', email, role: 'MEMBER', password: ourPassword });
        const taken = await as(admin, 'POST', '/ui/api/members', body(theirs));
        const unusedAddress = `unused-${other.workspace.id.slice(0, 8)}@example.com`;
        const unused = await as(admin, 'POST', '/ui/api/members', body(unusedAddress));
        assert.equal(taken.status, unused.status, `${taken.text} / ${unused.text}`);
        assert.equal(taken.status, 201);
        const shape = (json: object) => Object.entries(json).map(([k, v]) => `${k}:${typeof v}`).sort();
        assert.deepEqual(shape(taken.json), shape(unused.json));
        assert.deepEqual([taken.json.email, unused.json.email.startsWith('unused-')], [theirs, true]);
        // Once more, each is a member of this workspace already: the same answer for both again.
        const again = [
          await as(admin, 'POST', '/ui/api/members', body(theirs)),
          await as(admin, 'POST', '/ui/api/members', body(unusedAddress)),
        ];
        for (const res of again) assertInvalid(res, ['email']);
        const { requestId: _first, ...first } = again[0]!.json;
        const { requestId: _second, ...second } = again[1]!.json;
        assert.deepEqual(first, second, 'the same problem');

        // The address now opens two workspaces, each with its own password.
        const ours = await signIn(theirs, ourPassword);
        const ourWorkspace = admin.session.workspace.id;
        assert.deepEqual([ours.session.workspace.id, ours.session.user.id], [ourWorkspace, taken.json.id]);
        clock.advance(60_000);
        const theirsAgain = await signIn(theirs, PASSWORD);
        const { workspace: signedInTo, user: signedInAs } = theirsAgain.session;
        assert.deepEqual([signedInTo.id, signedInAs.id], [other.workspace.id, other.workspace.adminUserId]);
        assertProblem(await signInAttempt(theirs, 'neither of the two passwords'), 401, 'unauthorized');

        // `leadrun user password` asks which workspace is meant, and changes the one named alone.
        const deps = { db: t.database.db, clock, migrate: () => t.database.migrate() };
        const setPassword = (password: string, workspace?: string) =>
          runAdminCommand(deps, { command: 'user.password', email: theirs, password, workspace: workspace ?? null });
        await assert.rejects(setPassword('yet another password'),
          (error: any) => error.code === 'invalid_request' && /more than one workspace/.test(error.message));
        await setPassword(PASSWORD, admin.session.workspace.id);
        // The same password in both now: the workspace they signed in to last.
        assert.equal((await signIn(theirs, PASSWORD)).session.workspace.id, other.workspace.id);
        assertProblem(await signInAttempt(theirs, ourPassword), 401, 'unauthorized', 'the old one is gone');
      });
    });

    describe('password reset links', () => {
      before(start);
      after(stop);
      let mo: string;

      before(async () => {
        mo = await addMember(admin, 'Mo Chen', 'mo@acme.test');
      });

      it('makes a one-time link, keeps only its digest, and audits it without the token', async () => {
        const res = await as(admin, 'POST', `/ui/api/members/${mo}/password-reset`, {});
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(Object.keys(res.json).sort(), ['emailError', 'emailed', 'expiresAt', 'url']);
        assert.match(res.json.url, new RegExp(`^${t.deps.config.publicUrl}/reset-password#token=[A-Za-z0-9_-]{43}$`));
        assert.equal(res.json.expiresAt, new Date(clock.now().getTime() + 24 * 60 * 60 * 1000).toISOString(), '24 hours');
        assert.equal(res.json.emailed, false);
        const token = tokenOf(res.json.url);
        const rows = await db(t).selectFrom('password_reset_links').selectAll().execute();
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.digest, sha256(token));
        assert.deepEqual([rows[0]!.user_id, rows[0]!.created_by_user_id, rows[0]!.workspace_id], [mo, admin.session.user.id, admin.session.workspace.id]);
        assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is not stored');
        const entry = (await auditOf('member.password_reset_link_created'))[0];
        assert.deepEqual([entry.target, entry.outcome, entry.status], [{ type: 'user', id: mo }, 'success', 201]);
        assert.ok(!JSON.stringify(await auditRows(t)).includes(token), 'nor is it in the audit log');
      });

      it('sets a new password with the link: every session of theirs ends, this browser is signed in, the link is used up', async () => {
        const moBrowser = await signIn('mo@acme.test');
        const link = await resetLink(admin, mo);
        const described = await resetCheck(link.token);
        assert.equal(described.status, 200, described.text);
        assert.deepEqual(described.json, { name: 'Mo Chen', email: 'mo@acme.test', expiresAt: link.expiresAt });

        const reset = await resetWith(link.token, 'a brand new passphrase');
        assert.equal(reset.status, 200, reset.text);
        const fresh = browserOf(reset);
        assert.equal(fresh.session.user.id, mo);
        assert.equal((await as(fresh, 'POST', '/api/v1/leads', { name: 'Signed in by the link' })).status, 201, 'the new session works, CSRF token and all');
        assertProblem(await as(moBrowser, 'GET', '/ui/api/session'), 401, 'unauthorized', 'the session from before ends');
        assertProblem(await signInAttempt('mo@acme.test'), 401, 'unauthorized', 'the old password is gone');
        assert.equal((await signInAttempt('mo@acme.test', 'a brand new passphrase')).status, 200);

        const again = await resetWith(link.token, 'yet another passphrase');
        assertInvalid(again, ['token']);
        assert.match(again.json.errors[0].message, /used already/);
        assertInvalid(await resetCheck(link.token), ['token']);
        assert.equal((await signInAttempt('mo@acme.test', 'a brand new passphrase')).status, 200, 'the refused use changed nothing');

        const entry = (await auditOf('user.password_reset'))[0];
        assert.deepEqual([entry.source, entry.userId, entry.target, entry.outcome], ['ui', mo, { type: 'user', id: mo }, 'success']);
        const stored = JSON.stringify(await auditRows(t));
        assert.ok(!stored.includes(link.token) && !stored.includes('a brand new passphrase'), 'no token or password in the audit log');
      });

      it('refuses an unknown or malformed token the same way, and a password that breaks the rules (400 naming the field)', async () => {
        const unknown = await resetWith('A'.repeat(43), 'a long enough password');
        const malformed = await resetWith('not a token', 'a long enough password');
        assertInvalid(unknown, ['token']);
        assertInvalid(malformed, ['token']);
        assert.deepEqual(unknown.json.errors, malformed.json.errors);
        assertInvalid(await resetCheck('A'.repeat(43)), ['token']);

        const link = await resetLink(admin, mo);
        assertInvalid(await resetWith(link.token, 'short'), ['password']);
        assertInvalid(await resetWith(link.token, 'x'.repeat(201)), ['password']);
        assertInvalid(await t.api('POST', '/ui/api/password-reset', { body: { token: link.token }, headers: { 'x-forwarded-for': freshAddress() } }), ['password']);
        assertInvalid(await t.api('POST', '/ui/api/password-reset', { body: { token: link.token, password: 'a long enough password', userId: admin.session.user.id }, headers: { 'x-forwarded-for': freshAddress() } }), ['userId']);
        assert.equal((await resetCheck(link.token)).status, 200, 'the link is still unused');
        assert.equal((await resetWith(link.token, 'a long enough password')).status, 200);
      });

      it('ends a link when a newer one is made, and after 24 hours', async () => {
        const older = await resetLink(admin, mo);
        const newer = await resetLink(admin, mo);
        const replaced = await resetCheck(older.token);
        assertInvalid(replaced, ['token']);
        assert.match(replaced.json.errors[0].message, /no longer valid/);
        assertInvalid(await resetWith(older.token, 'the older link\'s password'), ['token']);
        assert.equal((await resetCheck(newer.token)).status, 200, 'the newer link works');

        clock.advance(24 * 60 * 60 * 1000 - 1000);
        assert.equal((await resetCheck(newer.token)).status, 200, 'still valid a second before it expires');
        clock.advance(1000);
        const expired = await resetWith(newer.token, 'a late passphrase');
        assertInvalid(expired, ['token']);
        assert.match(expired.json.errors[0].message, /expired/);
        assertInvalid(await resetCheck(newer.token), ['token']);
        // The day that passed ended every session (24 hours unused); the admin signs in again for what follows.
        admin = await signIn('sam@acme.test');
      });

      it('stops working once the person is removed', async () => {
        const zoe = await addMember(admin, 'Zoe Adams', 'zoe@acme.test');
        const link = await resetLink(admin, zoe);
        assert.equal((await as(admin, 'POST', `/ui/api/members/${zoe}/remove`, { revokeKeys: false })).status, 200);
        const refused = await resetWith(link.token, 'a way back in, I hope');
        assertInvalid(refused, ['token']);
        assert.doesNotMatch(refused.json.errors[0].message, /remov/, 'the answer does not say they were removed');
        assertInvalid(await resetCheck(link.token), ['token']);
        const row = await db(t).selectFrom('users').select(['password_hash', 'removed_at']).where('id', '=', zoe).executeTakeFirstOrThrow();
        assert.equal(row.password_hash, null);
        assert.equal((await db(t).selectFrom('sessions').select('id').where('user_id', '=', zoe).execute()).length, 0, 'nobody was signed in');
      });

      it('uses a link once when it is sent several times at the same moment', async () => {
        const link = await resetLink(admin, mo);
        const racers = ['first', 'second', 'third', 'fourth'].map((n) => `${n} racer passphrase`);
        const answers = await Promise.all(racers.map((password) => resetWith(link.token, password)));
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400], answers.map((r) => r.text).join('\n'));
        for (const refused of answers.filter((r) => r.status === 400)) assertInvalid(refused, ['token']);
        const winner = racers[answers.findIndex((r) => r.status === 200)]!;
        assert.equal((await signInAttempt('mo@acme.test', winner)).status, 200);
        const live = await db(t).selectFrom('sessions').select('id').where('user_id', '=', mo).where('revoked_at', 'is', null).execute();
        assert.equal(live.length, 2, 'the winner\'s session and the sign-in just made');
      });

      it('refuses a reset asked for by another site (403)', async () => {
        const link = await resetLink(admin, mo);
        assertProblem(await resetWith(link.token, 'planted by a stranger', freshAddress(), { origin: 'https://evil.example' }), 403, 'forbidden');
        assertProblem(await resetCheck(link.token, freshAddress(), { origin: 'https://evil.example' }), 403, 'forbidden');
        assert.equal((await resetCheck(link.token, freshAddress(), { origin: t.url })).status, 200, 'unused, and fine from our own pages');
      });

      it('limits attempts per client address, an IPv6 client by its /64 (429 with Retry-After), whatever the token', async () => {
        const link = await resetLink(admin, mo);
        for (let i = 1; i <= 10; i++) assertInvalid(await resetCheck(`${'B'.repeat(42)}${i % 10}`, `2001:db8:7:8::${i}`), ['token'], `attempt ${i}`);
        const limited = await resetWith(link.token, 'a perfectly good passphrase', '2001:db8:7:8:ffff:ffff:ffff:ffff');
        assertProblem(limited, 429, 'rate_limited');
        assert.ok(Number(limited.headers.get('retry-after')) > 0);
        assertProblem(await resetCheck(link.token, '2001:db8:7:8::1'), 429, 'rate_limited', 'even with a good token');
        assert.equal((await resetCheck(link.token, '2001:db8:7:9::1')).status, 200, 'the next /64 is another client');
        assert.equal((await resetWith(link.token, 'a perfectly good passphrase', '203.0.113.77')).status, 200, 'the link was not used up by the refusals');
      });

      it('serves the reset page with no Referer and nothing from elsewhere', async () => {
        const page = await t.api('GET', '/reset-password');
        assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
        const csp = page.headers.get('content-security-policy') ?? '';
        for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'"]) {
          assert.ok(csp.includes(directive), `${directive} in ${csp}`);
        }
        assert.doesNotMatch(page.text, /<(script|link|img)[^>]+(src|href)="(https?:)?\/\//i, 'no resource of another origin');
      });
    });

    describe('your own profile', () => {
      before(start);
      after(stop);

      it('lets anyone rename themselves, and refuses an empty name or any other field', async () => {
        await addMember(admin, 'Mo Chen', 'mo@acme.test');
        const mo = await signIn('mo@acme.test');
        const renamed = await as(mo, 'PATCH', '/ui/api/profile', { name: '  Morgan Chen  ' });
        assert.equal(renamed.status, 200, renamed.text);
        assert.equal(renamed.json.user.name, 'Morgan Chen');
        assert.equal(renamed.json.csrfToken, mo.csrf, 'the same session');
        assert.equal((await as(mo, 'GET', '/ui/api/session')).json.user.name, 'Morgan Chen');
        assert.ok((await as(admin, 'GET', '/ui/api/members')).json.data.some((m: any) => m.name === 'Morgan Chen'));
        assertInvalid(await as(mo, 'PATCH', '/ui/api/profile', { name: '' }), ['name']);
        assertInvalid(await as(mo, 'PATCH', '/ui/api/profile', { name: '   ' }), ['name']);
        assertInvalid(await as(mo, 'PATCH', '/ui/api/profile', { name: 'x'.repeat(201) }), ['name']);
        assertInvalid(await as(mo, 'PATCH', '/ui/api/profile', { name: 'Mo', email: 'other@acme.test' }), ['email']);
        assertInvalid(await as(mo, 'PATCH', '/ui/api/profile', { name: 'Mo', role: 'ADMIN' }), ['role']);
        assert.equal((await as(mo, 'GET', '/ui/api/session')).json.user.role, 'MEMBER');
        assertProblem(await t.api('PATCH', '/ui/api/profile', { body: { name: 'Nobody' } }), 401, 'unauthorized');
        const entries = await auditOf('user.updated');
        assert.deepEqual(entries.map((e) => e.outcome).sort(), ['failure', 'failure', 'failure', 'failure', 'failure', 'success'], 'each refusal is there too');
        const entry = entries.find((e) => e.outcome === 'success');
        assert.deepEqual([entry.userId, entry.target, entry.status], [mo.session.user.id, { type: 'user', id: mo.session.user.id }, 200]);
      });

      it('refuses a name or sender name that is not one line of text (400 naming the field)', async () => {
        await addMember(admin, 'Lou Park', 'lou@acme.test');
        const lou = await signIn('lou@acme.test');
        const oneLine = 'must be one line of text, without control characters or encoded words (=?...?=)';
        for (const field of ['name', 'senderName']) {
          const values = [
            'Lou\r\nBcc: all@acme.test', 'Lou\nPark', 'Lou\u2028Park', 'Lou\u0085Park',
            'Lou =?utf-8?b?Q0VP?=', '=?utf-8?q?Lou?=',
          ];
          for (const value of values) {
            const res = await as(lou, 'PATCH', '/ui/api/profile', { [field]: value });
            const context = `${field}: ${JSON.stringify(value)}`;
            assertInvalid(res, [field], context);
            assert.equal(res.json.errors.find((e: any) => e.field === field).message, oneLine, context);
          }
        }
        const profile = (await as(lou, 'GET', '/ui/api/profile')).json;
        assert.deepEqual([profile.name, profile.senderName], ['Lou Park', null]);
        // A question mark and an equals sign are text like any other when they do not make an encoded word.
        const fine = await as(lou, 'PATCH', '/ui/api/profile', { name: 'Lou =? Park', senderName: 'Lou (Sales?=yes)' });
        assert.equal(fine.status, 200, fine.text);
        // Nor may an admin give a new member such a name.
        for (const name of ['Kim\u2028Ito', 'Kim =?utf-8?b?Q0VP?=']) {
          const body = { name, email: 'kim@acme.test', role: 'MEMBER', password: PASSWORD };
          assertInvalid(await as(admin, 'POST', '/ui/api/members', body), ['name'], JSON.stringify(name));
        }
        // Nor a workspace's name, which is in the subject of the e-mail that sends a reset link.
        const deps = { db: t.database.db, clock, migrate: () => t.database.migrate() };
        for (const name of ['Acme\u2028Bank', 'Acme =?utf-8?b?QmFuaw==?=']) {
          await assert.rejects(runAdminCommand(deps, { command: 'workspace.create', name }), (error: any) => {
            assert.deepEqual(error.errors, [{ field: 'name', message: oneLine }]);
            return true;
          });
        }
      });

      it('changes your password with your current one: other sessions end, this browser gets a new session', async () => {
        const laptop = await signIn('mo@acme.test');
        const phone = await signIn('mo@acme.test');
        const link = await resetLink(admin, laptop.session.user.id);
        const change = (body: unknown) => as(laptop, 'POST', '/ui/api/profile/password', body);

        assertInvalid(await change({ currentPassword: 'not my password', newPassword: 'a brand new passphrase' }), ['currentPassword']);
        assertInvalid(await change({ currentPassword: PASSWORD, newPassword: 'short' }), ['newPassword']);
        assertInvalid(await change({ currentPassword: PASSWORD, newPassword: PASSWORD }), ['newPassword']);
        assertInvalid(await change({ newPassword: 'a brand new passphrase' }), ['currentPassword']);
        assertInvalid(await change({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase', userId: admin.session.user.id }), ['userId']);
        assert.equal((await as(phone, 'GET', '/ui/api/session')).status, 200, 'refusals change nothing');

        const changed = await change({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase' });
        assert.equal(changed.status, 200, changed.text);
        const renewed = browserOf(changed);
        assert.notEqual(renewed.cookie, laptop.cookie, 'a fresh session token');
        assert.notEqual(renewed.csrf, laptop.csrf, 'and CSRF token');
        assert.equal((await as(renewed, 'POST', '/api/v1/leads', { name: 'After the change' })).status, 201, 'this browser stays signed in');
        assertProblem(await as(laptop, 'GET', '/ui/api/session'), 401, 'unauthorized', 'the old session token is done');
        assertProblem(await as(phone, 'GET', '/ui/api/session'), 401, 'unauthorized', 'other sessions end');
        assert.equal((await as(admin, 'GET', '/ui/api/session')).status, 200, 'other people stay signed in');
        assertProblem(await signInAttempt('mo@acme.test'), 401, 'unauthorized');
        assert.equal((await signInAttempt('mo@acme.test', 'a brand new passphrase')).status, 200);
        assertInvalid(await resetCheck(link.token), ['token'], 'an unused reset link ends with the change');

        const entries = await auditOf('user.password_changed');
        assert.deepEqual(entries.map((e) => e.outcome).sort(), ['failure', 'failure', 'failure', 'failure', 'failure', 'success']);
        const stored = JSON.stringify(await auditRows(t));
        assert.ok(!stored.includes('a brand new passphrase') && !stored.includes('not my password'), 'no password in the audit log');
      });

      it('limits current-password attempts per person (429)', async () => {
        await addMember(admin, 'Guess Target', 'target@acme.test');
        const stolen = await signIn('target@acme.test');
        for (let i = 0; i < 10; i++) {
          assertInvalid(await as(stolen, 'POST', '/ui/api/profile/password', { currentPassword: `guess number ${i}`, newPassword: 'the thief\'s passphrase' }), ['currentPassword']);
        }
        const limited = await as(stolen, 'POST', '/ui/api/profile/password', { currentPassword: PASSWORD, newPassword: 'the thief\'s passphrase' });
        assertProblem(limited, 429, 'rate_limited');
        assert.ok(Number(limited.headers.get('retry-after')) > 0);
        assert.equal((await signInAttempt('target@acme.test')).status, 200, 'the password is unchanged');
        const other = await signIn('mo@acme.test', 'a brand new passphrase');
        assert.equal((await as(other, 'POST', '/ui/api/profile/password', { currentPassword: 'a brand new passphrase', newPassword: 'another new passphrase' })).status, 200, 'another person is not held up');
      });
    });

    describe('the database', () => {
      before(start);
      after(stop);

      it('refuses a removed person who still has an address or a password', async () => {
        const id = await addMember(admin, 'Check Me', 'check@acme.test');
        await assert.rejects(sql`UPDATE users SET removed_at = now() WHERE id = ${id}`.execute(db(t)), /users_removed_have_no_email/);
      });
    });
  });
}

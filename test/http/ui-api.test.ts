// The web UI's backend: first-run setup, sessions (cookie, CSRF, expiry), roles, API keys, members, the audit log
// and usage — and /api/v1 used with a session instead of a key.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.ts';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, type ApiResponse, type TestApp } from '../helpers.ts';
import { asBrowser, assertInvalid, assertProblem, browserOf, db, type Browser } from './support.ts';

const PASSWORD = 'correct horse battery staple';

for (const kind of BACKENDS) {
  describe(kind, () => {
    const clock = new ManualClock('2026-03-10T09:00:00.000Z');
    let t: TestApp;
    let admin: Browser;
    /** The address of whichever of the two racing setups won. */
    let adminEmail: string;
    let member: Browser;

    const as = (who: Browser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      asBrowser(t, who, method, path, body, headers);

    const signIn = async (email: string, password = PASSWORD) => {
      const res = await t.api('POST', '/ui/api/session', { body: { email, password } });
      assert.equal(res.status, 200, res.text);
      return browserOf(res);
    };

    before(async () => {
      t = await startTestApp(kind, { clock });
    });
    after(() => t?.close());

    it('sets up an empty installation once: the workspace, its admin, signed in', async () => {
      assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: true, tokenRequired: false });
      assert.deepEqual((await t.api('GET', '/ui/api/start')).json, { session: null, setupNeeded: true, setupTokenRequired: false });
      assertInvalid(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam', email: 'sam@acme.test', password: 'short' } }), ['password']);
      const body = { workspaceName: 'Acme Sales', name: 'Sam Rivera', email: 'Sam@Acme.test', password: PASSWORD };
      const [first, second] = await Promise.all([t.api('POST', '/ui/api/setup', { body }), t.api('POST', '/ui/api/setup', { body: { ...body, email: 'other@acme.test' } })]);
      const won = [first, second].filter((r) => r.status === 201);
      assert.equal(won.length, 1, 'only one setup wins');
      assertProblem([first, second].find((r) => r.status !== 201)!, 409, 'invalid_state');
      admin = browserOf(won[0]!);
      adminEmail = admin.session.user.email;
      assert.equal(admin.session.user.role, 'ADMIN');
      assert.equal(admin.session.workspace.plan, 'FREE');
      assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: false, tokenRequired: false });
      assert.deepEqual((await t.api('GET', '/ui/api/start')).json, { session: null, setupNeeded: false, setupTokenRequired: false });
      assertProblem(await t.api('POST', '/ui/api/setup', { body }), 409, 'invalid_state');
    });

    it('gives an HttpOnly, SameSite=Lax session cookie, and stores only its digest', async () => {
      const res = await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: PASSWORD } });
      const cookie = res.headers.get('set-cookie')!;
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
      assert.match(cookie, /Path=\//);
      assert.doesNotMatch(cookie, /Secure/, 'plain http: no Secure flag');
      const token = cookie.split(';')[0]!.split('=')[1]!;
      const rows = await db(t).selectFrom('sessions').select('id').execute();
      assert.ok(rows.some((r) => r.id === createHash('sha256').update(token).digest('hex')));
      assert.ok(!rows.some((r) => r.id === token), 'the token itself is not stored');
    });

    it('refuses a wrong password with the same answer as an unknown e-mail, then rate-limits', async () => {
      const wrong = await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: 'not the password' } });
      const unknown = await t.api('POST', '/ui/api/session', { body: { email: 'nobody@acme.test', password: 'not the password' } });
      assertProblem(wrong, 401, 'unauthorized');
      assertProblem(unknown, 401, 'unauthorized');
      assert.equal(wrong.json.detail, unknown.json.detail);
      for (let i = 0; i < 4; i++) await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: 'guess' } });
      const limited = await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: PASSWORD } });
      assertProblem(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      clock.advance(16 * 60 * 1000);
      assert.equal((await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: PASSWORD } })).status, 200, 'the window moved on');
    });

    it('answers the session, and nothing without one', async () => {
      const res = await as(admin, 'GET', '/ui/api/session');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.json).sort(), ['csrfToken', 'user', 'workspace']);
      assertProblem(await t.api('GET', '/ui/api/session'), 401, 'unauthorized');
      assertProblem(await t.api('GET', '/ui/api/session', { headers: { cookie: 'leadrun_session=forged-token-value' } }), 401, 'unauthorized');
    });

    it('opens the UI with 200 whether signed in or not: the session, or null', async () => {
      const signedIn = await as(admin, 'GET', '/ui/api/start');
      assert.equal(signedIn.status, 200);
      assert.deepEqual(signedIn.json, { session: (await as(admin, 'GET', '/ui/api/session')).json, setupNeeded: false, setupTokenRequired: false });
      for (const headers of [{}, { cookie: 'leadrun_session=forged-token-value' }, { cookie: 'other=1' }] as Record<string, string>[]) {
        const res = await t.api('GET', '/ui/api/start', { headers });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { session: null, setupNeeded: false, setupTokenRequired: false });
      }
    });

    it('requires the CSRF token and a same-site origin for every change made with the cookie', async () => {
      const noToken = await t.api('POST', '/ui/api/keys', { body: { name: 'x', scopes: ['leads:read'] }, headers: { cookie: admin.cookie } });
      assertProblem(noToken, 403, 'forbidden');
      const wrongToken = await t.api('POST', '/api/v1/leads', { body: { name: 'x' }, headers: { cookie: admin.cookie, 'x-csrf-token': 'nope' } });
      assertProblem(wrongToken, 403, 'forbidden');
      assertProblem(await as(admin, 'POST', '/api/v1/leads', { name: 'x' }, { origin: 'https://evil.example' }), 403, 'forbidden');
      assertProblem(await t.api('POST', '/ui/api/session', { body: { email: adminEmail, password: PASSWORD }, headers: { origin: 'https://evil.example' } }), 403, 'forbidden');
      assert.equal((await db(t).selectFrom('leads').select('id').execute()).length, 0, 'nothing was created');
      assert.equal((await db(t).selectFrom('api_keys').select('id').execute()).length, 0);
      assert.equal((await as(admin, 'POST', '/api/v1/leads', { name: 'Ada' }, { origin: t.url })).status, 201, 'our own origin is fine');
    });

    it('lets admins create, list and revoke keys: the plaintext once, revocation at once', async () => {
      const created = await as(admin, 'POST', '/ui/api/keys', { name: 'CRM sync', scopes: ['leads:read', 'leads:write'] });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.key, /^sk_[0-9A-Za-z]{38}$/);
      assert.equal(created.json.prefix, created.json.key.slice(0, 10));
      assert.equal(created.json.createdBy.name, 'Sam Rivera');
      assert.deepEqual(created.json.scopes, ['leads:read', 'leads:write']);
      assert.equal((await t.api('GET', '/api/v1/leads', { key: created.json.key })).status, 200);
      const listed = await as(admin, 'GET', '/ui/api/keys');
      assert.ok(!listed.text.includes(created.json.key), 'the list never shows the plaintext');
      const row = listed.json.data.find((k: any) => k.id === created.json.id);
      assert.equal(row.state, 'active');
      assertInvalid(await as(admin, 'POST', '/ui/api/keys', { name: 'x', scopes: ['admin:all'] }), ['scopes[0]']);
      assertInvalid(await as(admin, 'POST', '/ui/api/keys', { name: '', scopes: ['leads:read'] }), ['name']);
      const revoked = await as(admin, 'POST', `/ui/api/keys/${created.json.id}/revoke`, {});
      assert.equal(revoked.status, 200);
      assert.equal(revoked.json.state, 'revoked');
      assertProblem(await t.api('GET', '/api/v1/leads', { key: created.json.key }), 401, 'unauthorized');
      assertProblem(await as(admin, 'POST', '/ui/api/keys/00000000-0000-4000-8000-000000000000/revoke', {}), 404, 'not_found');
    });

    it('lets admins add members; a member reaches leads and runs but not keys, members or the audit log', async () => {
      const added = await as(admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD });
      assert.equal(added.status, 201, added.text);
      assertInvalid(await as(admin, 'POST', '/ui/api/members', { name: 'Mo', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD }), ['email']);
      member = await signIn('mo@acme.test');
      assert.equal(member.session.user.role, 'MEMBER');
      for (const [method, path, body] of [['GET', '/ui/api/keys'], ['POST', '/ui/api/keys', { name: 'x', scopes: ['leads:read'] }], ['GET', '/ui/api/audit'],
        ['POST', '/ui/api/members', { name: 'Eve', email: 'eve@acme.test', role: 'ADMIN', password: PASSWORD }]] as const) {
        assertProblem(await as(member, method, path, body), 403, 'forbidden', `${method} ${path}`);
      }
      assert.equal((await as(member, 'GET', '/ui/api/members')).json.data.length, 2);
      assert.equal((await as(member, 'GET', '/api/v1/leads')).status, 200);
      assert.equal((await as(member, 'POST', '/api/v1/leads', { name: 'Grace' })).status, 201);
    });

    it('does not take API keys on the UI routes, nor a cookie of another installation\'s workspace', async () => {
      const key = (await t.key(admin.session.workspace.id)).key;
      assertProblem(await t.api('GET', '/ui/api/keys', { key }), 401, 'unauthorized');
      const other = await t.workspace('pro');
      const foreignLead = (await t.api('POST', '/api/v1/leads', { key: (await t.key(other.id)).key, body: { name: 'Theirs' } })).json;
      assertProblem(await as(admin, 'GET', `/api/v1/leads/${foreignLead.id}`), 404, 'not_found');
    });

    it('audits UI actions with source ui and the user, and filters the log', async () => {
      const log = await as(admin, 'GET', '/ui/api/audit?source=ui&limit=200');
      assert.equal(log.status, 200);
      const actions = log.json.data.map((e: any) => e.action);
      for (const action of ['workspace.created', 'session.created', 'key.created', 'key.revoked', 'member.added', 'lead.created']) {
        assert.ok(actions.includes(action), `${action} is audited`);
      }
      assert.ok(log.json.data.every((e: any) => e.source === 'ui'));
      const keyCreated = log.json.data.find((e: any) => e.action === 'key.created' && e.outcome === 'success');
      assert.equal(keyCreated.user.name, 'Sam Rivera');
      assert.equal(keyCreated.target.type, 'key');
      const denied = await as(admin, 'GET', '/ui/api/audit?outcome=denied');
      assert.ok(denied.json.data.length > 0 && denied.json.data.every((e: any) => e.outcome === 'denied'), 'refused changes are there too');
      const byMember = await as(admin, 'GET', `/ui/api/audit?actor=${member.session.user.id}`);
      assert.ok(byMember.json.data.length > 0 && byMember.json.data.every((e: any) => e.userId === member.session.user.id));
      const firstPage = await as(admin, 'GET', '/ui/api/audit?limit=2');
      assert.match(firstPage.headers.get('link') ?? '', /rel="next"/);
    });

    it('shows the plan, this month\'s runs and a day-by-day count', async () => {
      const usage = await as(admin, 'GET', '/ui/api/usage');
      assert.equal(usage.status, 200);
      assert.equal(usage.json.plan, 'FREE');
      assert.equal(usage.json.limit, t.deps.config.freePlanMonthlyRuns);
      assert.equal(usage.json.resetsAt, '2026-04-01T00:00:00.000Z');
      assert.equal(usage.json.days[0].date, '2026-03-01');
      assert.equal(usage.json.days.at(-1).date, clock.now().toISOString().slice(0, 10));
      const lead = (await as(admin, 'POST', '/api/v1/leads', { name: 'Run me' })).json;
      const call = (await as(admin, 'POST', `/api/v1/leads/${lead.id}/calls`, { transcript: 'Ada: hello' })).json;
      const run = await as(admin, 'POST', '/api/v1/runs', { leadId: lead.id, callId: call.id });
      assert.equal(run.status, 202, run.text);
      const after = (await as(admin, 'GET', '/ui/api/usage')).json;
      assert.equal(after.used, usage.json.used + 1);
      assert.equal(after.days.at(-1).runs, usage.json.days.at(-1).runs + 1);
      const row = await db(t).selectFrom('runs').select('created_by_user_id').where('id', '=', run.json.id).executeTakeFirstOrThrow();
      assert.equal(row.created_by_user_id, admin.session.user.id, 'a run started in the UI is its author\'s');
    });

    it('ends a session on sign-out, and after a week or a day unused', async () => {
      const short = await signIn('mo@acme.test');
      assert.equal((await as(short, 'DELETE', '/ui/api/session')).status, 204);
      assertProblem(await as(short, 'GET', '/ui/api/session'), 401, 'unauthorized');
      assert.deepEqual((await as(short, 'GET', '/ui/api/start')).json, { session: null, setupNeeded: false, setupTokenRequired: false });
      const idle = await signIn('mo@acme.test');
      clock.advance(25 * 60 * 60 * 1000);
      assertProblem(await as(idle, 'GET', '/ui/api/session'), 401, 'unauthorized');
      assert.deepEqual((await as(idle, 'GET', '/ui/api/start')).json, { session: null, setupNeeded: false, setupTokenRequired: false });
    });

    it('lets the CLI set a password for an admin it created', async () => {
      const adminDeps = { db: t.database.db, clock, migrate: () => t.database.migrate() };
      const ws = (await runAdminCommand(adminDeps, { command: 'workspace.create', name: 'Made by CLI', plan: 'pro', adminEmail: 'cli-admin@acme.test' })) as any;
      assertProblem(await t.api('POST', '/ui/api/session', { body: { email: 'cli-admin@acme.test', password: PASSWORD } }), 401, 'unauthorized');
      await runAdminCommand(adminDeps, { command: 'user.password', email: 'cli-admin@acme.test', password: PASSWORD });
      const signedIn = await signIn('cli-admin@acme.test');
      assert.equal(signedIn.session.workspace.id, ws.id);
    });
  });
}

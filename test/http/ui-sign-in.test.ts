// The web UI's sign-in surface under attack: DNS rebinding (the UI's API answers only under leadrun's own names),
// lock-out (failures count per e-mail and address, and per address), sessions that end with a password change,
// adding a member without learning who has an account elsewhere, and CSRF tokens kept only as digests.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.ts';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, type ApiResponse, type TestApp } from '../helpers.ts';
import { asApiResponse, rawRequest } from '../support/http.ts';
import { asBrowser, assertInvalid, assertProblem, browserOf, db, type Browser } from './support.ts';

const PASSWORD = 'correct horse battery staple';
const PUBLIC_URL = 'https://leads.example.com';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

for (const kind of BACKENDS) {
  describe(kind, () => {
    const clock = new ManualClock('2026-03-10T09:00:00.000Z');
    let t: TestApp;
    let port: string;
    let admin: Browser;

    /** A request as sent to leadrun under another name: the Host header (and anything else) as given. */
    const addressed = async (host: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<ApiResponse> => {
      const headers: Record<string, string> = { host, ...options.headers };
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const res = await rawRequest(t.url, method, path, { headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
      return asApiResponse(res);
    };

    /** A sign-in from a client address (leadrun trusts X-Forwarded-For in this test, as behind a proxy). */
    const signInFrom = (address: string, email: string, password: string) =>
      t.api('POST', '/ui/api/session', { body: { email, password }, headers: { 'x-forwarded-for': address } });

    const as = (who: Browser, method: string, path: string, body?: unknown) => asBrowser(t, who, method, path, body);

    const setupBody = { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD };
    // Each part has an installation of its own, so that none depends on what another did.
    const start = async () => {
      t = await startTestApp(kind, { clock, config: { publicUrl: PUBLIC_URL, allowedHosts: ['leads.internal'], trustProxy: true } });
      port = new URL(t.url).port;
    };
    const startSetUp = async () => {
      await start();
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: setupBody }));
    };
    const stop = () => t?.close();

    describe('DNS rebinding', () => {
      before(start);
      after(stop);

      it('answers nothing under /ui/api to a request addressed to another name, not even first-run setup (421)', async () => {
        for (const host of [`attacker.example:${port}`, 'attacker.example', `localhost.attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, `[::2]:${port}`, `localhost:${port}@attacker.example`]) {
          const origin = { origin: `http://${host}` };
          const setup = await addressed(host, 'POST', '/ui/api/setup', { headers: origin, body: setupBody });
          assertProblem(setup, 421, 'misdirected_request', `setup under ${host}`);
          assert.ok(!setup.headers.get('set-cookie'), 'no session is given');
          assertProblem(await addressed(host, 'GET', '/ui/api/setup'), 421, 'misdirected_request', host);
          assertProblem(await addressed(host, 'POST', '/ui/api/session', { headers: origin, body: { email: 'sam@acme.test', password: PASSWORD } }), 421, 'misdirected_request', host);
          assertProblem(await addressed(host, 'GET', '/ui/api/no-such-route'), 421, 'misdirected_request', host);
        }
        // Behind a proxy the name the browser used is the forwarded one.
        assertProblem(await addressed(`127.0.0.1:${port}`, 'POST', '/ui/api/setup', { headers: { 'x-forwarded-host': 'attacker.example' }, body: setupBody }), 421, 'misdirected_request');
        assert.equal((await db(t).selectFrom('workspaces').select('id').execute()).length, 0, 'nobody took the installation');
        assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: true, tokenRequired: false });
      });

      it('answers under PUBLIC_URL\'s host, loopback names with any port, and ALLOWED_HOSTS', async () => {
        for (const host of ['leads.example.com', 'LEADS.example.com:443', `localhost:${port}`, 'localhost:8080', '127.0.0.1:1', '[::1]:3000', 'leads.internal', 'leads.internal:8443']) {
          const res = await addressed(host, 'GET', '/ui/api/setup');
          assert.equal(res.status, 200, `${host}: ${res.text}`);
        }
      });

      it('takes the Origin of leadrun\'s own names only, never just the Host a request was sent to', async () => {
        const foreign = await addressed(`127.0.0.1:${port}`, 'POST', '/ui/api/setup', { headers: { origin: `http://attacker.example:${port}` }, body: setupBody });
        assertProblem(foreign, 403, 'forbidden');
        for (const origin of ['null', `http://127.0.0.1:${port}/path`, 'javascript:alert(1)', 'http://leads.example.com.attacker.example']) {
          assertProblem(await t.api('POST', '/ui/api/setup', { body: setupBody, headers: { origin } }), 403, 'forbidden', origin);
        }
        admin = browserOf(await addressed('leads.example.com', 'POST', '/ui/api/setup', { headers: { origin: PUBLIC_URL }, body: setupBody }));
        assert.equal(admin.session.user.role, 'ADMIN');
        const signedIn = await addressed('leads.internal:8443', 'POST', '/ui/api/session', { headers: { origin: 'https://leads.internal:8443' }, body: { email: 'sam@acme.test', password: PASSWORD } });
        assert.equal(signedIn.status, 200, signedIn.text);
      });

      it('does not take a session under another name, while API keys work under any name', async () => {
        const headers = { cookie: admin.cookie, 'x-csrf-token': admin.csrf };
        assertProblem(await addressed(`attacker.example:${port}`, 'GET', '/ui/api/session', { headers }), 421, 'misdirected_request');
        assertProblem(await addressed(`attacker.example:${port}`, 'GET', '/ui/api/start', { headers }), 421, 'misdirected_request', 'nor tell whether one is signed in');
        assertProblem(await addressed(`attacker.example:${port}`, 'GET', '/api/v1/leads', { headers }), 421, 'misdirected_request', 'a session on /api/v1');
        assertProblem(await addressed(`attacker.example:${port}`, 'POST', '/api/v1/leads', { headers, body: { name: 'Planted' } }), 421, 'misdirected_request');
        assert.equal((await addressed(`127.0.0.1:${port}`, 'GET', '/api/v1/leads', { headers })).status, 200, 'the same session under a loopback name');
        const key = (await t.key(admin.session.workspace.id)).key;
        const created = await addressed('leadrun.svc.cluster.local', 'POST', '/api/v1/leads', { headers: { authorization: `Bearer ${key}` }, body: { name: 'From a service' } });
        assert.equal(created.status, 201, created.text);
      });
    });

    describe('lock-out', () => {
      before(startSetUp);
      after(stop);
      // Each case starts with the previous failures out of the window.
      beforeEach(() => clock.advance(16 * 60 * 1000));

      it('five wrong passwords from one address do not lock the owner out elsewhere', async () => {
        for (let i = 0; i < 5; i++) assertProblem(await signInFrom('203.0.113.7', 'sam@acme.test', `guess ${i}`), 401, 'unauthorized');
        assertProblem(await signInFrom('203.0.113.7', 'sam@acme.test', PASSWORD), 429, 'rate_limited', 'the guessing address is stopped');
        assert.equal((await signInFrom('198.51.100.9', 'sam@acme.test', PASSWORD)).status, 200, 'the owner signs in from their own address');
        clock.advance(16 * 60 * 1000);
        assert.equal((await signInFrom('203.0.113.7', 'sam@acme.test', PASSWORD)).status, 200, 'the window moved on');
      });

      it('stops an address that sprays passwords over many accounts', async () => {
        for (let i = 0; i < 20; i++) assertProblem(await signInFrom('203.0.113.50', `person${i}@acme.test`, 'Summer2026!'), 401, 'unauthorized');
        assertProblem(await signInFrom('203.0.113.50', 'sam@acme.test', PASSWORD), 429, 'rate_limited', 'even for an account it has not tried');
        assert.equal((await signInFrom('203.0.113.51', 'sam@acme.test', PASSWORD)).status, 200, 'another address is not held up');
      });

      it('counts an IPv6 client by its /64', async () => {
        for (let i = 1; i <= 5; i++) assertProblem(await signInFrom(`2001:db8:1:2::${i}`, 'sam@acme.test', `guess ${i}`), 401, 'unauthorized');
        assertProblem(await signInFrom('2001:db8:1:2:ffff:ffff:ffff:ffff', 'sam@acme.test', PASSWORD), 429, 'rate_limited');
        assert.equal((await signInFrom('2001:db8:1:3::1', 'sam@acme.test', PASSWORD)).status, 200, 'the next /64 is another address');
      });

      it('counts attempts sent all at once: five tries, not one per connection', async () => {
        const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signInFrom('203.0.113.99', 'sam@acme.test', `parallel guess ${i}`)));
        const statuses = answers.map((r) => r.status).sort();
        assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(7).fill(429)]);
      });
    });

    describe('sessions and passwords', () => {
      before(startSetUp);
      after(stop);

      it('a password set with the CLI ends that person\'s sessions, and only theirs', async () => {
        const added = await as(admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD });
        assert.equal(added.status, 201, added.text);
        const laptop = browserOf(await signInFrom('198.51.100.20', 'mo@acme.test', PASSWORD));
        const phone = browserOf(await signInFrom('198.51.100.21', 'mo@acme.test', PASSWORD));
        assert.equal((await as(laptop, 'GET', '/ui/api/session')).status, 200);

        // As `leadrun user password` runs it: another process, with nothing but the database.
        await runAdminCommand({ db: t.database.db, clock, migrate: () => t.database.migrate() }, { command: 'user.password', email: 'mo@acme.test', password: 'a brand new passphrase' });

        for (const device of [laptop, phone]) {
          assertProblem(await as(device, 'GET', '/ui/api/session'), 401, 'unauthorized');
          assertProblem(await as(device, 'POST', '/api/v1/leads', { name: 'After the change' }), 401, 'unauthorized');
        }
        const rows = await db(t).selectFrom('sessions').select(['revoked_at']).where('user_id', '=', added.json.id).execute();
        assert.ok(rows.length === 2 && rows.every((r) => r.revoked_at !== null), 'ended in the database');
        assert.equal((await as(admin, 'GET', '/ui/api/session')).status, 200, 'other people stay signed in');
        assertProblem(await signInFrom('198.51.100.20', 'mo@acme.test', PASSWORD), 401, 'unauthorized');
        assert.equal((await signInFrom('198.51.100.20', 'mo@acme.test', 'a brand new passphrase')).status, 200);
      });
    });

    describe('members', () => {
      before(startSetUp);
      after(stop);

      it('adding a member does not tell an admin that an e-mail has an account in another workspace', async () => {
        const other = await t.workspace('pro');
        const theirs = await db(t).selectFrom('users').select(['email']).where('workspace_id', '=', other.id).executeTakeFirstOrThrow();
        const member = (email: string) => as(admin, 'POST', '/ui/api/members', { name: 'Someone', email, role: 'MEMBER', password: PASSWORD });
        const unused = await member('mo@acme.test');
        const elsewhere = await member(theirs.email!.toUpperCase());
        // Addresses are unique per workspace: one that is someone's elsewhere is added as an unused one is.
        assert.deepEqual([unused.status, elsewhere.status], [201, 201], elsewhere.text);
        assert.deepEqual(Object.keys(elsewhere.json).sort(), Object.keys(unused.json).sort());
        // Only an address of this workspace is refused, which the admin sees in the member list anyway.
        assertInvalid(await member('mo@acme.test'), ['email']);
        const users = await db(t).selectFrom('users').select('id').where('workspace_id', '=', other.id).execute();
        assert.equal(users.length, 1, 'the other workspace is untouched');
        assert.equal((await as(admin, 'GET', '/ui/api/members')).json.data.length, 3, 'both were added');
        const tries = await as(admin, 'GET', '/ui/api/audit?action=member.added&outcome=failure');
        assert.equal(tries.json.data.length, 1, 'the refused try is in the audit log');
      });

      it('adds one of two members added at once with the same e-mail, and refuses the other the same way', async () => {
        const body = { name: 'Twin', email: 'twin@acme.test', role: 'MEMBER', password: PASSWORD };
        const answers = await Promise.all([as(admin, 'POST', '/ui/api/members', body), as(admin, 'POST', '/ui/api/members', body)]);
        assert.deepEqual(answers.map((r) => r.status).sort(), [201, 400], answers.map((r) => r.text).join('\n'));
        assertInvalid(answers.find((r) => r.status === 400)!, ['email']);
      });
    });

    describe('CSRF tokens', () => {
      before(startSetUp);
      after(stop);

      it('keeps only a digest of the CSRF token, gives the same token again after a reload, and checks it', async () => {
        const browser = browserOf(await signInFrom('198.51.100.30', 'sam@acme.test', PASSWORD));
        const rows = await db(t).selectFrom('sessions').selectAll().execute();
        const stored = JSON.stringify(rows);
        assert.ok(!stored.includes(browser.csrf), 'the CSRF token is not in the database');
        const row = rows.find((r) => r.id === sha256(browser.cookie.split('=')[1]!));
        assert.equal(row?.csrf_digest, sha256(browser.csrf), 'its SHA-256 digest is');

        const reloaded = await as(browser, 'GET', '/ui/api/session');
        assert.equal(reloaded.json.csrfToken, browser.csrf, 'a reloaded page gets the same token');
        assert.equal((await as(browser, 'POST', '/api/v1/leads', { name: 'Ada' })).status, 201);
        assertProblem(await as({ ...browser, csrf: admin.csrf }, 'POST', '/api/v1/leads', { name: 'x' }), 403, 'forbidden', "another session's token");
        assertProblem(await as({ ...browser, csrf: row!.csrf_digest }, 'POST', '/api/v1/leads', { name: 'x' }), 403, 'forbidden', 'the stored digest');
      });
    });
  });
}

// First-run setup and the one-time setup token (DESIGN §11): on a server listening on a non-loopback address,
// POST /ui/api/setup needs a token `serve` issued; on loopback it needs none. GET /ui/api/setup says which.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueSetupToken } from '../../src/domain/members/setup-tokens.ts';
import { isLoopbackAddress } from '../../src/http/hosts.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, browserOf, db } from './support.ts';

const SETUP = { workspaceName: 'Acme Sales', name: 'Sam Rivera', email: 'sam@acme.test', password: 'correct horse battery staple' };

describe('which listening addresses are loopback', () => {
  it('localhost, 127.0.0.0/8 and ::1 are; anything else is not', () => {
    for (const host of ['127.0.0.1', 'localhost', 'LOCALHOST', '::1', '[::1]', '127.1.2.3', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) {
      assert.equal(isLoopbackAddress(host), true, host);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'leadrun.internal', '::ffff:10.0.0.1', '128.0.0.1', '127.0.0.1.nip.io', '']) {
      assert.equal(isLoopbackAddress(host), false, host);
    }
  });
});

for (const kind of BACKENDS) {
  describe(`${kind}: setup on a server listening on a non-loopback address`, () => {
    let t: TestApp;
    const tokenRows = async () => db(t).selectFrom('setup_tokens').selectAll().execute();
    const workspaces = async () => (await db(t).selectFrom('workspaces').select('id').execute()).length;

    before(async () => { t = await startTestApp(kind, { config: { host: '0.0.0.0' } }); });
    after(() => t?.close());

    it('says that setup needs the token', async () => {
      const res = await t.api('GET', '/ui/api/setup');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { needed: true, tokenRequired: true });
    });

    it('refuses a setup without the token, or with a wrong one, with 403 naming setupToken, and makes nothing', async () => {
      await issueSetupToken(db(t), t.deps.clock);
      const missing = await t.api('POST', '/ui/api/setup', { body: SETUP });
      assertProblem(missing, 403, 'forbidden');
      assert.match(missing.json.detail, /needs the setup token that `leadrun serve` printed when it started/);
      assert.deepEqual(missing.json.errors.map((e: { field: string }) => e.field), ['setupToken']);

      for (const setupToken of ['', 'not-the-token', 'A'.repeat(32)]) {
        const wrong = await t.api('POST', '/ui/api/setup', { body: { ...SETUP, setupToken } });
        assertProblem(wrong, 403, 'forbidden', setupToken);
        assert.match(wrong.json.detail, setupToken ? /The setup token is not right/ : /needs the setup token/);
        assert.deepEqual(wrong.json.errors.map((e: { field: string }) => e.field), ['setupToken']);
      }
      assert.equal(await workspaces(), 0);
      assert.equal((await tokenRows()).length, 1, 'a wrong guess does not use the token up');
    });

    it('refuses a token that is not a string of at most 200 characters with 400 naming it', async () => {
      assertInvalid(await t.api('POST', '/ui/api/setup', { body: { ...SETUP, setupToken: 'x'.repeat(201) } }), ['setupToken']);
      assertInvalid(await t.api('POST', '/ui/api/setup', { body: { ...SETUP, setupToken: 12345 } }), ['setupToken']);
      assertInvalid(await t.api('POST', '/ui/api/setup', { body: { ...SETUP, setupToken: null } }), ['setupToken']);
    });

    it('stores only the digest of a token', async () => {
      const token = await issueSetupToken(db(t), t.deps.clock);
      assert.match(token, /^[A-Za-z0-9_-]{32}$/);
      const stored = JSON.stringify(await tokenRows());
      assert.ok(!stored.includes(token), 'the token itself is not stored');
    });

    it('sets up with any token issued (each process sharing the database issues its own), and then none is good', async () => {
      const [first, second] = [await issueSetupToken(db(t), t.deps.clock), await issueSetupToken(db(t), t.deps.clock)];
      const res = await t.api('POST', '/ui/api/setup', { body: { ...SETUP, setupToken: second } });
      assert.equal(res.status, 201, res.text);
      const admin = browserOf(res);
      assert.equal(admin.session.user.email, 'sam@acme.test');
      assert.deepEqual(await tokenRows(), [], 'every token is gone with the setup');
      assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: false, tokenRequired: false });

      // Set up already: the answer is the same with a token that was good, one that never was, and none.
      for (const setupToken of [first, second, 'never-issued', undefined]) {
        const again = await t.api('POST', '/ui/api/setup', { body: { ...SETUP, email: 'other@acme.test', ...(setupToken === undefined ? {} : { setupToken }) } });
        assertProblem(again, 409, 'invalid_state', String(setupToken));
      }
      assert.equal(await workspaces(), 1);
    });
  });

  describe(`${kind}: setup on a server listening on loopback`, () => {
    let t: TestApp;
    before(async () => { t = await startTestApp(kind, { config: { host: '127.0.0.1' } }); });
    after(() => t?.close());

    it('needs no token', async () => {
      assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: true, tokenRequired: false });
      const res = await t.api('POST', '/ui/api/setup', { body: SETUP });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual((await t.api('GET', '/ui/api/setup')).json, { needed: false, tokenRequired: false });
    });
  });
}

// The sender's identity given at first-run setup (DESIGN §15), on both backends: saved as Settings / E-mail saves it
// (and audited as such), so the workspace can deliver at once; refused with the field named by the same rules, and
// then nothing is set up; and left out, the setup works as before and the identity says what it lacks.
import assert from 'node:assert/strict';
import { after, beforeEach, describe, it } from 'node:test';
import { missingIdentity, senderIdentity } from '../../src/domain/suppressions/identity.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { asBrowser, assertInvalid, browserOf } from '../http/support.ts';

const OWNER = { workspaceName: 'Acme Sales', name: 'Sam Rivera', email: 'sam@acme.test', password: 'correct horse battery staple' };

/** What an approval with delivery would find missing (src/domain/suppressions/gate.ts), for the owner's e-mails. */
async function missing(t: TestApp, workspaceId: string) {
  const settings = await t.database.db.selectFrom('mail_settings').select('from_address').where('workspace_id', '=', workspaceId).executeTakeFirst();
  const identity = await senderIdentity(t.database.db, workspaceId, { mailPostalAddress: null });
  return missingIdentity(identity, { name: OWNER.name, address: settings?.from_address ?? null });
}

for (const kind of BACKENDS) {
  describe(`the sender's identity at setup (${kind})`, () => {
    let t: TestApp | null = null;
    beforeEach(async () => {
      await t?.close();
      t = await startTestApp(kind);
    });
    after(() => t?.close());

    it('saves the identity given with the setup, as Settings / E-mail shows it, with its own audit entry', async () => {
      const body = { ...OWNER, fromName: 'Acme Sales Team', fromAddress: 'sales@acme.test', companyName: 'Acme Inc.', postalAddress: '1 Main Street\nSpringfield, IL 62701' };
      const setup = await t!.api('POST', '/ui/api/setup', { body });
      assert.equal(setup.status, 201, setup.text);
      const admin = browserOf(setup);
      const settings = await asBrowser(t!, admin, 'GET', '/ui/api/settings/email');
      assert.equal(settings.status, 200, settings.text);
      assert.equal(settings.json.fromName, 'Acme Sales Team');
      assert.equal(settings.json.fromAddress, 'sales@acme.test');
      assert.deepEqual(settings.json.identity, { companyName: 'Acme Inc.', postalAddress: '1 Main Street\nSpringfield, IL 62701', footerEnabled: true, unsubscribeAddress: null });
      const workspaceId = admin.session.workspace.id;
      assert.deepEqual(await missing(t!, workspaceId), []);
      const audit = await t!.database.db.selectFrom('audit_log').select(['action', 'details']).where('workspace_id', '=', workspaceId).orderBy('occurred_at').execute();
      assert.deepEqual(audit.map((a) => a.action).sort(), ['mail_settings.updated', 'workspace.created']);
      const details = audit.find((a) => a.action === 'mail_settings.updated')!.details;
      assert.equal((typeof details === 'string' ? JSON.parse(details) : details).changed, 'sender,identity');
    });

    it('refuses a field Settings / E-mail refuses, naming it, and sets nothing up', async () => {
      assertInvalid(await t!.api('POST', '/ui/api/setup', { body: { ...OWNER, fromName: 'Acme =?utf-8?q?Sales?=' } }), ['fromName']);
      assertInvalid(await t!.api('POST', '/ui/api/setup', { body: { ...OWNER, fromAddress: 'not an address' } }), ['fromAddress']);
      assert.deepEqual((await t!.api('GET', '/ui/api/setup')).json, { needed: true, tokenRequired: false });
    });

    it('without an identity, sets up as before; the identity then names what it lacks', async () => {
      const setup = await t!.api('POST', '/ui/api/setup', { body: OWNER });
      assert.equal(setup.status, 201, setup.text);
      const workspaceId = browserOf(setup).session.workspace.id;
      assert.deepEqual(await missing(t!, workspaceId), ['senderAddress', 'postalAddress']);
      const audit = await t!.database.db.selectFrom('audit_log').select('action').where('workspace_id', '=', workspaceId).execute();
      assert.deepEqual(audit.map((a) => a.action), ['workspace.created']);
    });
  });
}

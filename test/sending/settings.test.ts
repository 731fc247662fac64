// The sending rules in the web UI's API (DESIGN §14): defaults before anything is saved, a change saved and audited,
// bad values refused naming their field (an unknown time zone, an end before the start, a limit out of 1–2,000), and
// a member refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { asBrowser, assertInvalid, assertProblem, auditRows, browserOf, type Browser } from '../http/support.ts';

const PASSWORD = 'correct horse battery staple';
const PATH = '/ui/api/settings/sending';

for (const kind of BACKENDS) {
  describe(`sending rules (${kind})`, () => {
    let t: TestApp;
    let admin: Browser;
    let member: Browser;
    before(async () => {
      t = await startTestApp(kind);
      admin = browserOf(await t.api('POST', '/ui/api/setup', { body: { workspaceName: 'Acme', name: 'Sam Rivera', email: 'sam@acme.test', password: PASSWORD } }));
      assert.equal((await asBrowser(t, admin, 'POST', '/ui/api/members', { name: 'Mo Chen', email: 'mo@acme.test', role: 'MEMBER', password: PASSWORD })).status, 201);
      member = browserOf(await t.api('POST', '/ui/api/session', { body: { email: 'mo@acme.test', password: PASSWORD } }));
    });
    after(() => t?.close());

    it('answers the defaults, saves a change and audits it', async () => {
      const defaults = await asBrowser(t, admin, 'GET', PATH);
      assert.equal(defaults.status, 200, defaults.text);
      assert.deepEqual(defaults.json, {
        days: [1, 2, 3, 4, 5], start: '08:00', end: '18:00', timeZone: 'UTC', dailyLimit: 50, minGapSeconds: 90, updatedAt: null, senders: [],
      });
      const saved = await asBrowser(t, admin, 'PUT', PATH, { days: [2, 1, 3], start: '09:30', end: '24:00', timeZone: 'europe/berlin', dailyLimit: 2000 });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual({ ...saved.json, updatedAt: null }, {
        days: [1, 2, 3], start: '09:30', end: '24:00', timeZone: 'Europe/Berlin', dailyLimit: 2000, minGapSeconds: 90, updatedAt: null, senders: [],
      });
      const audit = (await auditRows(t)).filter((row) => row.action === 'sending_settings.updated');
      assert.equal(audit.length, 1);
      assert.deepEqual(audit[0]!.details, { changed: 'dailyLimit,days,end,start,timeZone' });
    });

    it('refuses bad values naming the field, and a member', async () => {
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { timeZone: 'Mars/Olympus' }), ['timeZone']);
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { start: '18:00', end: '08:00' }), ['end']);
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { dailyLimit: 2001 }), ['dailyLimit']);
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { dailyLimit: 0 }), ['dailyLimit']);
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { days: [] }), ['days']);
      assertInvalid(await asBrowser(t, admin, 'PUT', PATH, { start: '25:00' }), ['start']);
      assertProblem(await asBrowser(t, member, 'PUT', PATH, { dailyLimit: 10 }), 403);
      assertProblem(await asBrowser(t, member, 'GET', PATH), 403);
      assert.equal((await asBrowser(t, admin, 'GET', PATH)).json.dailyLimit, 2000, 'nothing refused was saved');
    });
  });
}

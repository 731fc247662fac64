// A lead's time zone (DESIGN §14): set by POST and PATCH, read back in the lead and in a page of leads (its stored
// JSON), refused when it is no IANA name (the field named), and read from a CSV import's "Time zone" column.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, createLead } from '../http/support.ts';

for (const kind of BACKENDS) {
  describe(`a lead's time zone (${kind})`, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await startTestApp(kind);
      const ws = await t.workspace();
      key = (await t.key(ws.id)).key;
    });
    after(async () => { await t?.close(); });

    it('is set, spelled as the server spells it, changed, cleared and listed', async () => {
      const lead = await createLead(t, key, { name: 'Ada', timeZone: 'europe/berlin' });
      assert.equal(lead.timeZone, 'Europe/Berlin');
      const plain = await createLead(t, key, { name: 'Grace' });
      assert.equal(plain.timeZone, null);

      const patched = await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { timeZone: 'America/New_York' } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.data.timeZone, 'America/New_York');
      const listed = await t.api('GET', '/api/v1/leads?limit=10', { key });
      assert.equal(listed.json.data.find((l: any) => l.id === lead.id).timeZone, 'America/New_York');
      assert.equal(listed.json.data.find((l: any) => l.id === plain.id).timeZone, null);
      const cleared = await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { timeZone: null } });
      assert.equal(cleared.json.data.timeZone, null);
    });

    it('refuses a name that is no IANA time zone, naming the field', async () => {
      for (const timeZone of ['Mars/Olympus', '+02:00', 'Europe/Berlin; DROP', '']) {
        const res = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Ada', timeZone } });
        assertInvalid(res, ['timeZone'], timeZone);
        assert.match(res.json.errors[0].message, /IANA time zone/);
      }
      const lead = await createLead(t, key, { name: 'Ada' });
      assertInvalid(await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { timeZone: 'Nowhere' } }), ['timeZone']);
    });

    it('is read from a CSV import\'s "Time zone" column, an unknown one reported for its row', async () => {
      const ws = await t.workspace();
      const own = (await t.key(ws.id)).key;
      const csv = 'Name,Email,Time zone\nAda,ada@example.net,Europe/Berlin\nGrace,grace@example.net,Atlantis/Nowhere\nAlan,,\n';
      const res = await fetch(`${t.url}/api/v1/leads/import`, {
        method: 'POST', headers: { authorization: `Bearer ${own}`, 'content-type': 'text/csv' }, body: csv,
      });
      const body = await res.json() as any;
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.created, 2);
      assert.deepEqual(body.errors.map((e: any) => [e.row, e.field]), [[3, 'timeZone']]);
      assert.equal(body.columns[2].field, 'timeZone');
      const leads = await t.api('GET', '/api/v1/leads?limit=10', { key: own });
      const zones = Object.fromEntries(leads.json.data.map((l: any) => [l.name, l.timeZone]));
      assert.deepEqual(zones, { Ada: 'Europe/Berlin', Alan: null });
    });
  });
}

// The suppression list's API (DESIGN §15), on both backends: add an address or a domain (lower-cased, once), list
// newest first with keyset pages and a search, remove, import a CSV file (and JSON), export it back, audit entries,
// and one workspace never seeing or changing another's list.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertProblem, nextLink, walkPages } from '../http/support.ts';

for (const kind of BACKENDS) {
  describe(`the suppression list (${kind})`, () => {
    let t: TestApp;
    let key: string;
    let workspaceId: string;
    let otherKey: string;

    before(async () => {
      t = await startTestApp(kind);
      const ws = await t.workspace('pro');
      workspaceId = ws.id;
      key = (await t.key(ws.id)).key;
      otherKey = (await t.key((await t.workspace('pro')).id)).key;
    });
    after(() => t?.close());

    it('adds an address or a domain once, lower-cased; a second add answers the entry as it is', async () => {
      const added = await t.api('POST', '/api/v1/suppressions', { key, body: { email: ' Ada@Example.COM ' } });
      assert.equal(added.status, 201, added.text);
      assert.equal(added.json.data.email, 'ada@example.com');
      assert.equal(added.json.data.domain, null);
      assert.equal(added.json.data.reason, 'manual');
      assert.equal(added.json.data.source, 'api');
      assert.equal(added.headers.get('location'), `/api/v1/suppressions/${added.json.data.id}`);
      const again = await t.api('POST', '/api/v1/suppressions', { key, body: { email: 'ada@example.com', reason: 'complained' } });
      assert.equal(again.status, 200);
      assert.deepEqual(again.json.data, added.json.data);
      const domain = await t.api('POST', '/api/v1/suppressions', { key, body: { domain: 'Competitor.Example', reason: 'complained' } });
      assert.equal(domain.status, 201);
      assert.equal(domain.json.data.domain, 'competitor.example');
      const audit = await t.database.db.selectFrom('audit_log').select(['action', 'target_id']).where('workspace_id', '=', workspaceId)
        .where('action', 'like', 'suppression.%').orderBy('occurred_at').execute();
      assert.deepEqual(audit.map((a) => a.action), ['suppression.created', 'suppression.created', 'suppression.created']);
    });

    it('erasing a lead keeps its address\'s entry: the opt-out outlives the erasure', async () => {
      const lead = (await t.api('POST', '/api/v1/leads', { key, body: { name: 'Erin Erased', email: 'erin@erased.example' } })).json;
      const entry = (await t.api('POST', '/api/v1/suppressions', { key, body: { email: 'erin@erased.example' } })).json.data;
      assert.equal((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data.doNotContact, true);
      assert.equal((await t.api('DELETE', `/api/v1/leads/${lead.id}`, { key })).status, 204);
      const kept = await t.database.db.selectFrom('suppressions').select('email').where('id', '=', entry.id).executeTakeFirst();
      assert.equal(kept?.email, 'erin@erased.example');
      assert.equal((await t.api('DELETE', `/api/v1/suppressions/${entry.id}`, { key })).status, 204);
    });

    it('refuses what is neither an address nor a domain, or both at once', async () => {
      for (const body of [{}, { email: 'not an address' }, { domain: 'no spaces.example' }, { email: 'a@b.example', domain: 'b.example' }, { email: 'a@b.example', reason: 'imported' }]) {
        assertProblem(await t.api('POST', '/api/v1/suppressions', { key, body }), 400, 'invalid_request', JSON.stringify(body));
      }
    });

    it('imports a CSV file (a column headed email), counts what was there and what was not an address; exports it back', async () => {
      const csv = 'name,Email\r\nGrace,grace@navy.example\r\nAda,ADA@example.com\r\nNobody,not-an-address\r\n"Quoted, Name",example.org\r\n';
      const res = await t.api('POST', '/api/v1/suppressions/import', { key, raw: csv, headers: { 'content-type': 'text/csv' } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.data, { added: 2, existing: 1, invalid: 1 });
      const json = await t.api('POST', '/api/v1/suppressions/import', { key, body: { entries: ['hopper@navy.example', 'grace@navy.example'] } });
      assert.deepEqual(json.json.data, { added: 1, existing: 1, invalid: 0 });
      const imported = await t.database.db.selectFrom('suppressions').select(['email', 'domain', 'reason', 'source'])
        .where('workspace_id', '=', workspaceId).where('reason', '=', 'imported').orderBy('email').execute();
      assert.deepEqual(imported.map((r) => r.email ?? r.domain), ['grace@navy.example', 'hopper@navy.example', 'example.org']);

      const exported = await fetch(`${t.url}/api/v1/suppressions/export`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(exported.status, 200);
      assert.match(exported.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = (await exported.text()).trim().split('\r\n');
      assert.equal(lines[0], 'email,domain,reason,source,created_at');
      assert.equal(lines.length, 1 + 5);
      assert.ok(lines.some((l) => l.startsWith('ada@example.com,,manual,api,')));
      // The export reads back as an import: nothing new.
      const back = await t.api('POST', '/api/v1/suppressions/import', { key, raw: lines.join('\r\n'), headers: { 'content-type': 'text/csv' } });
      assert.deepEqual(back.json.data, { added: 0, existing: 5, invalid: 0 });
    });

    it('refuses an import over its size, and a body that is not a file', async () => {
      const big = `email\r\n${'x'.repeat(3 * 1024 * 1024)}`;
      assertProblem(await t.api('POST', '/api/v1/suppressions/import', { key, raw: big, headers: { 'content-type': 'text/csv' } }), 413, 'payload_too_large');
      assertProblem(await t.api('POST', '/api/v1/suppressions/import', { key, raw: '{"entries": 3}', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
      assertProblem(await t.api('POST', '/api/v1/suppressions/import', { key, raw: 'email\r\n"unclosed@example.com\r\n', headers: { 'content-type': 'text/csv' } }), 400, 'invalid_request');
    });

    it('lists newest first in keyset pages, finds by part of an address, and removes', async () => {
      const page = await t.api('GET', '/api/v1/suppressions?limit=2', { key });
      assert.equal(page.json.data.length, 2);
      assert.ok(nextLink(page));
      const { items: all } = await walkPages(t, key, '/api/v1/suppressions?limit=2');
      assert.equal(all.length, 5);
      const times = all.map((e: any) => e.createdAt);
      assert.deepEqual(times, [...times].sort().reverse());
      const found = await t.api('GET', '/api/v1/suppressions?q=navy', { key });
      assert.deepEqual(found.json.data.map((e: any) => e.email).sort(), ['grace@navy.example', 'hopper@navy.example']);
      assert.deepEqual((await t.api('GET', '/api/v1/suppressions?q=%25', { key })).json.data, [], '% is matched as itself');

      const target = found.json.data[0];
      // Another workspace can neither see nor remove it.
      assert.deepEqual((await t.api('GET', '/api/v1/suppressions', { key: otherKey })).json.data, []);
      assertProblem(await t.api('DELETE', `/api/v1/suppressions/${target.id}`, { key: otherKey }), 404, 'not_found');
      assert.equal((await t.api('DELETE', `/api/v1/suppressions/${target.id}`, { key })).status, 204);
      assertProblem(await t.api('DELETE', `/api/v1/suppressions/${target.id}`, { key }), 404, 'not_found');
      assertProblem(await t.api('DELETE', '/api/v1/suppressions/not-a-uuid', { key }), 404, 'not_found');
    });
  });
}

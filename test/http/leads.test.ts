// /api/v1/leads: create, validate, list (order, limit, filter, cursor pages), read and update.
// The app runs on a ManualClock, so timestamps, ties in createdAt and the order of pages are exact.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import {
  assertInvalid, assertProblem, auditRows, countRows, createLead, ISO_MS, LEAD_FIELDS, LEAD_STATUSES, newestFirst, nextLink, UUID, walkPages,
} from './support.ts';

for (const kind of BACKENDS) {
  describe(kind, () => {
    const clock = new ManualClock('2026-03-10T08:00:00.000Z');
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let B: { id: string; adminUserId: string };
    let key: string;
    let keyB: string;
    let readOnly: string;
    let writeOnly: string;

    before(async () => {
      t = await startTestApp(kind, { clock });
      A = await t.workspace('pro');
      B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      keyB = (await t.key(B.id)).key;
      readOnly = (await t.key(A.id, ['leads:read'])).key;
      writeOnly = (await t.key(A.id, ['leads:write'])).key;
    });
    after(() => t?.close());

    const tick = (ms = 1) => clock.advance(ms);
    const post = (body: unknown, k = key) => t.api('POST', '/api/v1/leads', { key: k, body });

    describe('POST /api/v1/leads', () => {
      it('creates a lead with every field and answers 201 with it and its Location', async () => {
        tick();
        const body = {
          name: 'Ada Lovelace',
          email: 'ada@analytical.example',
          companyName: 'Analytical Engines Ltd',
          companyWebsite: 'https://analytical.example/about?x=1',
          status: 'QUALIFIED',
          assignedToUserId: A.adminUserId,
        };
        const res = await post(body);
        assert.equal(res.status, 201, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        const lead = res.json;
        assert.deepEqual(Object.keys(lead).sort(), LEAD_FIELDS);
        assert.match(lead.id, UUID);
        for (const [field, value] of Object.entries(body)) assert.equal(lead[field], value, field);
        assert.equal(lead.createdAt, clock.now().toISOString());
        assert.equal(lead.updatedAt, lead.createdAt);
        assert.match(lead.createdAt, ISO_MS);
        assert.equal(res.headers.get('location'), `/api/v1/leads/${lead.id}`);
        const read = await t.api('GET', `/api/v1/leads/${lead.id}`, { key });
        assert.deepEqual(read.json, { data: lead });
      });

      it('defaults status to DISCOVERY and answers every unset field as null', async () => {
        const lead = await createLead(t, key, { name: 'Grace Hopper' });
        assert.deepEqual(Object.keys(lead).sort(), LEAD_FIELDS);
        assert.equal(lead.status, 'DISCOVERY');
        for (const field of ['email', 'companyName', 'companyWebsite', 'assignedToUserId']) assert.equal(lead[field], null, field);
      });

      it('accepts explicit nulls for the optional fields', async () => {
        const lead = await createLead(t, key, { name: 'Null Person', email: null, companyName: null, companyWebsite: null, assignedToUserId: null });
        for (const field of ['email', 'companyName', 'companyWebsite', 'assignedToUserId']) assert.equal(lead[field], null, field);
        assert.equal(lead.status, 'DISCOVERY');
      });

      it('accepts every lead status', async () => {
        for (const status of LEAD_STATUSES) {
          const lead = await createLead(t, key, { name: `Status ${status}`, status });
          assert.equal(lead.status, status);
        }
      });

      it('accepts a name of exactly 200 characters, an http website and upper-case schemes', async () => {
        assert.equal((await createLead(t, key, { name: 'n'.repeat(200) })).name.length, 200);
        assert.equal((await createLead(t, key, { name: 'X', companyWebsite: 'http://example.com' })).companyWebsite, 'http://example.com');
        assert.equal((await createLead(t, key, { name: 'X', companyWebsite: 'HTTPS://EXAMPLE.COM/' })).companyWebsite, 'HTTPS://EXAMPLE.COM/');
      });

      it('refuses assignedToUserId of another workspace, of nobody, or malformed, naming the field', async () => {
        const before = await countRows(t, 'leads', A.id);
        for (const assignedToUserId of [B.adminUserId, randomUUID(), 'not-a-user']) {
          assertInvalid(await post({ name: 'X', assignedToUserId }), ['assignedToUserId'], assignedToUserId);
        }
        assert.equal(await countRows(t, 'leads', A.id), before, 'nothing was created');
      });

      const invalid: Array<[string, unknown, string[]]> = [
        ['an empty object', {}, ['name']],
        ['an empty name', { name: '' }, ['name']],
        ['a 201-character name', { name: 'n'.repeat(201) }, ['name']],
        ['a null name', { name: null }, ['name']],
        ['a numeric name', { name: 42 }, ['name']],
        ['an array name', { name: ['Ada'] }, ['name']],
        ['an e-mail without @', { name: 'X', email: 'not-an-email' }, ['email']],
        ['an e-mail without a local part', { name: 'X', email: '@example.com' }, ['email']],
        ['an e-mail without a domain', { name: 'X', email: 'ada@' }, ['email']],
        ['an e-mail with a space', { name: 'X', email: 'ada lovelace@example.com' }, ['email']],
        ['a numeric e-mail', { name: 'X', email: 42 }, ['email']],
        ['a javascript: website', { name: 'X', companyWebsite: 'javascript:alert(1)' }, ['companyWebsite']],
        ['an ftp: website', { name: 'X', companyWebsite: 'ftp://example.com/' }, ['companyWebsite']],
        ['a relative website', { name: 'X', companyWebsite: '/about' }, ['companyWebsite']],
        ['a website of another scheme', { name: 'X', companyWebsite: 'gopher://example.com' }, ['companyWebsite']],
        ['a website without a host', { name: 'X', companyWebsite: 'https://' }, ['companyWebsite']],
        ['a data: website', { name: 'X', companyWebsite: 'data:text/html,<script>alert(1)</script>' }, ['companyWebsite']],
        ['a numeric companyName', { name: 'X', companyName: 7 }, ['companyName']],
        ['an unknown status', { name: 'X', status: 'BOGUS' }, ['status']],
        ['a lower-case status', { name: 'X', status: 'discovery' }, ['status']],
        ['a null status', { name: 'X', status: null }, ['status']],
        ['an unknown field', { name: 'X', workspaceId: randomUUID() }, ['workspaceId']],
        ['a server-owned field', { name: 'X', id: randomUUID(), createdAt: '2020-01-01T00:00:00.000Z' }, ['id', 'createdAt']],
        ['several bad fields at once', { name: '', email: 'bad', companyWebsite: 'ftp://x', extra: 1 }, ['name', 'email', 'companyWebsite', 'extra']],
      ];
      for (const [what, body, fields] of invalid) {
        it(`refuses ${what} with 400 naming ${fields.join(', ')}`, async () => {
          assertInvalid(await post(body), fields, what);
        });
      }

      for (const raw of ['[]', '"x"', 'null', '42', 'true', '[{"name":"Ada"}]']) {
        it(`refuses the non-object body ${raw} with 400`, async () => {
          const res = await t.api('POST', '/api/v1/leads', { key, raw, headers: { 'content-type': 'application/json' } });
          assertInvalid(res, [], raw);
        });
      }

      for (const raw of ['{"name": ', '{name: "Ada"}', "{'name': 'Ada'}", '{"name": "Ada",}', '', '{"name":"Ada","__proto__":{"status":"WON"}}']) {
        it(`refuses the malformed JSON ${JSON.stringify(raw)} with 400`, async () => {
          const res = await t.api('POST', '/api/v1/leads', { key, raw, headers: { 'content-type': 'application/json' } });
          assertProblem(res, 400, 'invalid_request');
        });
      }

      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx']) {
        it(`refuses Content-Type ${type} with 415`, async () => {
          const res = await t.api('POST', '/api/v1/leads', { key, raw: '{"name":"Ada"}', headers: { 'content-type': type } });
          assertProblem(res, 415, 'unsupported_media_type');
        });
      }

      it('accepts application/json with a charset parameter', async () => {
        const res = await t.api('POST', '/api/v1/leads', { key, raw: '{"name":"Charset"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
        assert.equal(res.status, 201, res.text);
      });

      it('refuses a body over 1 MiB with 413 and creates nothing', async () => {
        const before = await countRows(t, 'leads', A.id);
        const res = await post({ name: 'Too big', companyName: 'x'.repeat(1024 * 1024) });
        assertProblem(res, 413, 'payload_too_large');
        assert.equal(await countRows(t, 'leads', A.id), before);
      });

      it('refuses every invalid request without creating a lead', async () => {
        const before = await countRows(t, 'leads', A.id);
        for (const [, body] of invalid) assert.equal((await post(body)).status, 400);
        assert.equal(await countRows(t, 'leads', A.id), before);
      });

      it('refuses leads:read alone with 403', async () => {
        assertProblem(await post({ name: 'X' }, readOnly), 403, 'insufficient_scope');
      });
    });

    describe('GET /api/v1/leads', () => {
      let W: { id: string };
      let wKey: string;
      let created: any[];
      // 126 leads; groups of 7 share one createdAt, so page boundaries fall inside ties and id breaks them.
      before(async () => {
        W = await t.workspace('pro');
        wKey = (await t.key(W.id)).key;
        created = [];
        for (let i = 0; i < 126; i++) {
          if (i % 7 === 0) tick(1000);
          created.push(await createLead(t, wKey, { name: `Lead ${i}`, status: i % 3 === 0 ? 'WON' : 'DISCOVERY' }));
        }
      });
      const expected = () => newestFirst(created, (l) => l.createdAt, (l) => l.id).map((l) => l.id);

      it('answers {data} with 50 leads by default, newest first, ties broken by id descending', async () => {
        const res = await t.api('GET', '/api/v1/leads', { key: wKey });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.json), ['data']);
        assert.deepEqual(res.json.data.map((l: any) => l.id), expected().slice(0, 50));
        for (const lead of res.json.data) assert.deepEqual(Object.keys(lead).sort(), LEAD_FIELDS);
        assert.ok(nextLink(res), 'a next link');
      });

      it('honours limit=1 and limit=100', async () => {
        const one = await t.api('GET', '/api/v1/leads?limit=1', { key: wKey });
        assert.deepEqual(one.json.data.map((l: any) => l.id), expected().slice(0, 1));
        const hundred = await t.api('GET', '/api/v1/leads?limit=100', { key: wKey });
        assert.deepEqual(hundred.json.data.map((l: any) => l.id), expected().slice(0, 100));
      });

      for (const bad of ['0', '101', '-1', '1.5', 'abc', '', '1e3', '10abc']) {
        it(`refuses limit=${bad} with 400 naming limit`, async () => {
          assertInvalid(await t.api('GET', `/api/v1/leads?limit=${bad}`, { key: wKey }), ['limit']);
        });
      }

      for (const size of [1, 7, 20, 50, 100]) {
        it(`pages through every lead exactly once with limit=${size} and the Link header`, async () => {
          const { items, pageSizes } = await walkPages(t, wKey, `/api/v1/leads?limit=${size}`, { maxPages: 200 });
          assert.deepEqual(items.map((l) => l.id), expected());
          assert.ok(pageSizes.slice(0, -1).every((n) => n === size), `full pages until the last: ${pageSizes.join(',')}`);
          assert.ok(pageSizes.at(-1)! > 0, 'no empty last page');
        });
      }

      it('keeps the walk stable while new leads are created between pages', async () => {
        const before = expected();
        const fresh: string[] = [];
        const { items } = await walkPages(t, wKey, '/api/v1/leads?limit=30', {
          onPage: async () => {
            tick(1000);
            fresh.push((await createLead(t, wKey, { name: 'Late arrival' })).id);
          },
        });
        assert.deepEqual(items.map((l) => l.id), before, 'the walk neither skips nor repeats, and does not show leads newer than its start');
        created.push(...(await Promise.all(fresh.map(async (id) => (await t.api('GET', `/api/v1/leads/${id}`, { key: wKey })).json.data))));
      });

      it('filters by status, and the Link header keeps the filter', async () => {
        const won = expected().filter((id) => created.find((l) => l.id === id).status === 'WON');
        assert.ok(won.length > 10);
        const { items } = await walkPages(t, wKey, '/api/v1/leads?status=WON&limit=10');
        assert.deepEqual(items.map((l) => l.id), won);
        assert.ok(items.every((l) => l.status === 'WON'));
        const first = await t.api('GET', '/api/v1/leads?status=WON&limit=10', { key: wKey });
        assert.match(nextLink(first) ?? '', /[?&]status=WON(&|$)/);
        const none = await t.api('GET', '/api/v1/leads?status=LOST', { key: wKey });
        assert.deepEqual(none.json, { data: [] });
        assert.equal(none.headers.get('link'), null);
      });

      for (const bad of ['BOGUS', 'won', '']) {
        it(`refuses status=${bad} with 400`, async () => {
          assertInvalid(await t.api('GET', `/api/v1/leads?status=${bad}`, { key: wKey }), ['status']);
        });
      }

      it('refuses a cursor it did not give out with 400 naming cursor', async () => {
        const res = await t.api('GET', '/api/v1/leads?limit=5', { key: wKey });
        const cursor = new URLSearchParams(nextLink(res)!.split('?')[1]).get('cursor')!;
        const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
        const tampered = [
          'not-a-cursor',
          cursor.slice(0, Math.floor(cursor.length / 2)),
          Buffer.from(`${decoded}|extra`).toString('base64url'),
          Buffer.from(decoded.replace(/\|.*/, '|not-a-uuid')).toString('base64url'),
          Buffer.from(decoded.replace(/^[^|]*/, 'yesterday')).toString('base64url'),
          Buffer.from("' OR 1=1 --").toString('base64url'),
          'x'.repeat(600),
        ];
        for (const bad of tampered) {
          assertInvalid(await t.api('GET', `/api/v1/leads?cursor=${encodeURIComponent(bad)}`, { key: wKey }), ['cursor'], bad);
        }
      });

      it("lists only the caller's workspace", async () => {
        const res = await t.api('GET', '/api/v1/leads?limit=100', { key });
        const ids = new Set(res.json.data.map((l: any) => l.id));
        assert.ok(created.every((l) => !ids.has(l.id)));
      });

      it('lists every lead exactly as it reads alone: escaped text, nulls and every millisecond form', async () => {
        const W = await t.workspace('pro');
        const wKey = (await t.key(W.id)).key;
        const control = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('').replace('\u0000', '');
        const names = ['quote " and backslash \\', control, 'line\u2028and\u2029paragraph', 'emoji 👋🏽 and ünïcødé', '</script><b>', '{"a":1}'];
        const ids: string[] = [];
        for (const [i, name] of names.entries()) {
          // 0, 10, 100, 110 … ms past a second: the database writes these with fewer fraction digits.
          clock.advance(1000 - (Date.parse(clock.now().toISOString()) % 1000) + [0, 10, 100, 110, 500, 999][i]!);
          const res = await post({ name, email: i % 2 ? null : `a+${i}@x.example`, companyName: i % 2 ? name : null, companyWebsite: i % 2 ? null : 'https://x.example/a?b=c&d=%22' }, wKey);
          assert.equal(res.status, 201, res.text);
          ids.push(res.json.id);
        }
        const list = await t.api('GET', '/api/v1/leads', { key: wKey });
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(list.json.data.map((l: any) => l.id), ids.toReversed());
        for (const lead of list.json.data) {
          const alone = await t.api('GET', `/api/v1/leads/${lead.id}`, { key: wKey });
          assert.deepEqual(lead, alone.json.data);
          assert.match(lead.createdAt, ISO_MS);
        }
        assert.deepEqual(list.json.data.map((l: any) => l.name), names.toReversed());
      });

      it('answers an empty workspace with {data: []} and no Link', async () => {
        const empty = await t.workspace('pro');
        const res = await t.api('GET', '/api/v1/leads', { key: (await t.key(empty.id)).key });
        assert.deepEqual(res.json, { data: [] });
        assert.equal(res.headers.get('link'), null);
      });

      it('refuses leads:write alone with 403: writing does not grant reading', async () => {
        const res = await t.api('GET', '/api/v1/leads', { key: writeOnly });
        assertProblem(res, 403, 'insufficient_scope');
        assert.equal(res.json.requiredScope, 'leads:read');
      });
    });

    describe('GET /api/v1/leads/{id}', () => {
      it('answers {data: lead}', async () => {
        const lead = await createLead(t, key, { name: 'Readable', email: 'r@example.com' });
        const res = await t.api('GET', `/api/v1/leads/${lead.id}`, { key: readOnly });
        assert.equal(res.status, 200);
        assert.deepEqual(res.json, { data: lead });
      });

      for (const [what, id] of [['an unknown id', randomUUID()], ['a malformed id', 'not-a-uuid'], ['a number', '12345'], ['an encoded path', '..%2F..%2Fruns']]) {
        it(`answers 404 for ${what}`, async () => {
          assertProblem(await t.api('GET', `/api/v1/leads/${id}`, { key }), 404, 'not_found');
        });
      }

      it("answers 404 for another workspace's lead", async () => {
        const theirs = await createLead(t, keyB, { name: 'Theirs' });
        const res = await t.api('GET', `/api/v1/leads/${theirs.id}`, { key });
        assertProblem(res, 404, 'not_found');
        assert.ok(!res.text.includes('Theirs'));
      });

      it('refuses leads:write alone with 403', async () => {
        const lead = await createLead(t, key, { name: 'X' });
        assertProblem(await t.api('GET', `/api/v1/leads/${lead.id}`, { key: writeOnly }), 403, 'insufficient_scope');
      });
    });

    describe('PATCH /api/v1/leads/{id}', () => {
      const patch = (id: string, body: unknown, k = key) => t.api('PATCH', `/api/v1/leads/${id}`, { key: k, body });

      it('changes only the fields sent and moves updatedAt forward', async () => {
        const lead = await createLead(t, key, { name: 'Patch Me', email: 'p@example.com', companyName: 'Old Co', status: 'DISCOVERY' });
        tick(5_000);
        const res = await patch(lead.id, { companyName: 'New Co', status: 'CONTACTED' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.json), ['data']);
        const updated = res.json.data;
        assert.deepEqual(updated, { ...lead, companyName: 'New Co', status: 'CONTACTED', updatedAt: clock.now().toISOString() });
        assert.ok(Date.parse(updated.updatedAt) > Date.parse(lead.updatedAt));
        assert.deepEqual((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data, updated, 'stored');
      });

      it('answers 204 with no body to leads:write alone, which does not grant reading; the change is made and audited', async () => {
        const lead = await createLead(t, key, { name: 'Write Only', email: 'w@example.com', companyName: 'Old Co' });
        tick(1_000);
        const res = await patch(lead.id, { companyName: 'New Co' }, writeOnly);
        assert.equal(res.status, 204, res.text);
        assert.equal(res.text, '');
        assert.equal(res.headers.get('content-type'), null);
        const stored = (await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data;
        assert.deepEqual(stored, { ...lead, companyName: 'New Co', updatedAt: clock.now().toISOString() });
        const [audit] = (await auditRows(t, { workspaceId: A.id })).filter((e) => e.action === 'lead.updated' && e.target_id === lead.id);
        assert.equal(audit?.outcome, 'success');
        assert.equal(audit?.status, 204);
      });

      it('lists a changed lead as it now is', async () => {
        const W = await t.workspace('pro');
        const wKey = (await t.key(W.id)).key;
        const lead = await createLead(t, wKey, { name: 'Before', email: 'b@example.com', companyWebsite: 'https://b.example' });
        tick(1_000);
        const res = await patch(lead.id, { name: 'After "quoted"', email: null, companyName: 'Now Co', status: 'WON', assignedToUserId: W.adminUserId }, wKey);
        assert.equal(res.status, 200, res.text);
        const listed = await t.api('GET', '/api/v1/leads', { key: wKey });
        assert.deepEqual(listed.json.data, [res.json.data]);
      });

      it('refuses a PATCH with no body, or a JSON null, with 400: it would change nothing', async () => {
        const lead = await createLead(t, key, { name: 'Untouched', email: 'u@example.com' });
        for (const body of [undefined, null]) {
          const res = await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, ...(body === undefined ? {} : { body }) });
          assertProblem(res, 400, 'invalid_request');
        }
        assert.deepEqual((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data, lead);
      });

      it('clears an optional field with null', async () => {
        const lead = await createLead(t, key, { name: 'Clear Me', email: 'c@example.com', companyWebsite: 'https://c.example', assignedToUserId: A.adminUserId });
        tick();
        const res = await patch(lead.id, { email: null, companyWebsite: null, assignedToUserId: null });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.data.email, null);
        assert.equal(res.json.data.companyWebsite, null);
        assert.equal(res.json.data.assignedToUserId, null);
        assert.equal(res.json.data.name, 'Clear Me');
      });

      it('never moves updatedAt back, nor before createdAt, when a clock lags', async () => {
        const lead = await createLead(t, key, { name: 'Skewed' });
        clock.advance(-60_000); // another server whose clock is a minute behind
        try {
          const res = await patch(lead.id, { companyName: 'Skew Co' });
          assert.equal(res.status, 200, res.text);
          assert.ok(Date.parse(res.json.data.updatedAt) >= Date.parse(lead.updatedAt), `updatedAt ${res.json.data.updatedAt} < ${lead.updatedAt}`);
          assert.ok(Date.parse(res.json.data.updatedAt) >= Date.parse(res.json.data.createdAt));
        } finally {
          clock.advance(60_000);
        }
      });

      it('assigns a user of the workspace, and refuses one of another workspace naming the field', async () => {
        const lead = await createLead(t, key, { name: 'Assign Me' });
        assert.equal((await patch(lead.id, { assignedToUserId: A.adminUserId })).json.data.assignedToUserId, A.adminUserId);
        assertInvalid(await patch(lead.id, { assignedToUserId: B.adminUserId }), ['assignedToUserId']);
        assertInvalid(await patch(lead.id, { assignedToUserId: randomUUID() }), ['assignedToUserId']);
      });

      const invalid: Array<[string, unknown, string[]]> = [
        ['an empty body', {}, []],
        ['an unknown field', { nickname: 'Ada' }, ['nickname']],
        ['an empty name', { name: '' }, ['name']],
        ['a null name', { name: null }, ['name']],
        ['a null status', { status: null }, ['status']],
        ['an unknown status', { status: 'DONE' }, ['status']],
        ['a bad e-mail', { email: 'nope' }, ['email']],
        ['a javascript: website', { companyWebsite: 'javascript:alert(1)' }, ['companyWebsite']],
        ['an array', [], []],
      ];
      for (const [what, body, fields] of invalid) {
        it(`refuses ${what} with 400 and changes nothing`, async () => {
          const lead = await createLead(t, key, { name: 'Unchanged', email: 'u@example.com' });
          tick();
          assertInvalid(await patch(lead.id, body), fields, what);
          assert.deepEqual((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data, lead);
        });
      }

      it("answers 404 for an unknown, malformed or other workspace's lead and changes nothing", async () => {
        assertProblem(await patch(randomUUID(), { name: 'X' }), 404, 'not_found');
        assertProblem(await patch('not-a-uuid', { name: 'X' }), 404, 'not_found');
        const lead = await createLead(t, key, { name: 'Mine' });
        assertProblem(await patch(lead.id, { name: 'Stolen' }, keyB), 404, 'not_found');
        assert.deepEqual((await t.api('GET', `/api/v1/leads/${lead.id}`, { key })).json.data, lead);
      });

      it('refuses leads:read alone with 403', async () => {
        const lead = await createLead(t, key, { name: 'X' });
        assertProblem(await patch(lead.id, { name: 'Y' }, readOnly), 403, 'insufficient_scope');
      });
    });
  });
}

// Bad input is a 400 naming the field, never a 500: event ids out of range, integers written other than in decimal
// digits, forged pagination cursors, date-times JavaScript or the database cannot hold, and bodies with more errors
// than anyone reads (the list is cut, the count kept).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { createSession } from '../../src/domain/members/sessions.ts';
import { createEndpoint } from '../../src/domain/webhooks/endpoints.ts';
import { SESSION_COOKIE } from '../../src/http/auth.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, countRows, createCall, createLead, startRun } from './support.ts';

/** A cursor in the shape the API gives out (base64url of "timestamp|id"), holding whatever timestamp a forger chose. */
const forgedCursor = (at: string, id = randomUUID()) => Buffer.from(`${at}|${id}`).toString('base64url');

for (const kind of BACKENDS) {
  describe(kind, () => {
    let t: TestApp;
    let key: string;
    let workspaceId: string;
    let lead: any;
    let run: any;
    let webhookId: string;
    let asAdmin: Record<string, string>;

    before(async () => {
      t = await startTestApp(kind); // no worker: the run stays QUEUED
      const A = await t.workspace('pro');
      workspaceId = A.id;
      key = (await t.key(A.id)).key;
      lead = await createLead(t, key);
      const call = await createCall(t, key, lead.id);
      run = await startRun(t, key, lead.id, call.id);
      webhookId = (await t.database.db.transaction().execute((trx) => createEndpoint(trx, A.id, { url: 'http://127.0.0.1:9/hook' },
        { secrets: t.deps.secrets, clock: systemClock, allowPrivateHosts: true }, ['leads:read', 'runs:read']))).id;
      const session = await createSession(t.database.db, A.adminUserId, systemClock, { ip: '127.0.0.1', userAgent: 'bad-input' });
      asAdmin = { cookie: `${SESSION_COOKIE}=${session.token}` };
    });
    after(() => t?.close());

    describe('event ids', () => {
      const events = (query = '', headers: Record<string, string> = {}) => t.api('GET', `/api/v1/runs/${run.id}/events${query}`, { key, headers });

      for (const bad of ['1e999', '99999999999999999999', '9007199254740992', '0x10', '1.0', ' 1', '-1']) {
        it(`refuses after=${bad} with 400 naming after, as JSON and as a stream`, async () => {
          assertInvalid(await events(`?after=${encodeURIComponent(bad)}`), ['after']);
          assertInvalid(await events(`?after=${encodeURIComponent(bad)}`, { accept: 'text/event-stream' }), ['after']);
        });
      }

      for (const bad of ['99999999999999999999', '9007199254740992', '1e999', '0x10', '-1', '1.5', 'abc']) {
        it(`refuses Last-Event-ID: ${bad} with 400 naming Last-Event-ID, as JSON and as a stream`, async () => {
          assertInvalid(await events('', { 'last-event-id': bad }), ['Last-Event-ID']);
          assertInvalid(await events('', { 'last-event-id': bad, accept: 'text/event-stream' }), ['Last-Event-ID']);
        });
      }

      it('takes the largest event id and zero, and checks them before looking for the run', async () => {
        for (const res of [await events('?after=9007199254740991'), await events('', { 'last-event-id': '9007199254740991' })]) {
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.json, { data: [] });
        }
        const all = await events('', { 'last-event-id': '0' });
        assert.equal(all.status, 200, all.text);
        assert.ok(all.json.data.length > 0, 'the run has events');
        assertInvalid(await t.api('GET', `/api/v1/runs/${randomUUID()}/events?after=1e999`, { key }), ['after']);
      });
    });

    describe('integer query parameters', () => {
      // Every integer query parameter of the API, read from its OpenAPI document, and of the web UI's audit page.
      async function integerParameters(): Promise<Array<{ path: string; name: string; headers: Record<string, string> }>> {
        const document = (await t.api('GET', '/api/v1/openapi.json')).json;
        const found = new Map<string, { path: string; name: string; headers: Record<string, string> }>();
        for (const [template, operations] of Object.entries<any>(document.paths)) {
          for (const parameter of operations.get?.parameters ?? []) {
            if (parameter.in !== 'query' || parameter.schema?.type !== 'integer') continue;
            const id = template.startsWith('/api/v1/runs') ? run.id : template.startsWith('/api/v1/webhooks') ? webhookId : lead.id;
            const path = template.replace('{leadId}', lead.id).replace('{id}', id);
            const headers = path.startsWith('/ui/') ? asAdmin : { authorization: `Bearer ${key}` };
            found.set(`${template} ${parameter.name}`, { path, name: parameter.name, headers });
          }
        }
        found.set('/ui/api/audit limit', { path: '/ui/api/audit', name: 'limit', headers: asAdmin });
        for (const known of ['/api/v1/leads limit', '/api/v1/leads/{leadId}/calls limit', '/api/v1/runs limit', '/api/v1/runs/{id}/events after']) {
          assert.ok(found.has(known), `${known} is found`);
        }
        return [...found.values()];
      }

      it('refuses anything but decimal digits with 400 naming the parameter: hex, binary, exponents, signs, spaces, points', async () => {
        for (const { path, name, headers } of await integerParameters()) {
          for (const bad of ['0x10', '0b11', '0o7', '1e1', '1e999', '+5', ' 5', '5 ', '5.', '1.0', '٥', '']) {
            const res = await t.api('GET', `${path}?${name}=${encodeURIComponent(bad)}`, { headers });
            assertInvalid(res, [name], `${path}?${name}=${JSON.stringify(bad)}`);
          }
          for (const good of ['5', '05']) {
            const res = await t.api('GET', `${path}?${name}=${good}`, { headers });
            assert.equal(res.status, 200, `${path}?${name}=${good}: ${res.text.slice(0, 200)}`);
          }
        }
      });
    });

    describe('pagination cursors', () => {
      const forged = [
        '-200000-01-01T00:00:00.000Z', // a date JavaScript holds but the database does not
        '+275760-09-13T00:00:00.000Z',
        '0000-12-31T23:59:59.999Z',
        '0099-12-31T23:59:59.999Z',
        '+010000-01-01T00:00:00.000Z',
        '2016-12-31T23:59:60.000Z',
        '2021-02-29T00:00:00.000Z',
        '2021-01-01T00:00:00Z', // a real instant, but not written as the API writes one
        '2021-01-01',
        '1609459200000',
      ];

      it('refuses a cursor whose date is not one the API could have given out with 400 naming cursor, on every list', async () => {
        const lists: Array<[string, Record<string, string>]> = [
          ['/api/v1/leads', { authorization: `Bearer ${key}` }],
          ['/api/v1/runs', { authorization: `Bearer ${key}` }],
          [`/api/v1/leads/${lead.id}/calls`, { authorization: `Bearer ${key}` }],
          ['/ui/api/audit', asAdmin],
        ];
        for (const [path, headers] of lists) {
          for (const at of forged) {
            assertInvalid(await t.api('GET', `${path}?cursor=${forgedCursor(at)}`, { headers }), ['cursor'], `${path} at ${at}`);
          }
          const sane = await t.api('GET', `${path}?cursor=${forgedCursor('2000-01-01T00:00:00.000Z')}`, { headers });
          assert.equal(sane.status, 200, `${path}: ${sane.text.slice(0, 200)}`);
          assert.deepEqual(sane.json, { data: [] }, 'nothing is older than 2000');
        }
      });
    });

    describe('occurredAt of a call', () => {
      const post = (occurredAt: string, leadId = lead.id) => t.api('POST', `/api/v1/leads/${leadId}/calls`, { key, body: { transcript: 'Ada: hello', occurredAt } });

      const refused: Array<[string, string]> = [
        ['a leap second', '2016-12-31T23:59:60Z'],
        ['a leap second with a fraction', '2015-06-30T23:59:60.5+00:00'],
        ['a leap second in another zone', '2017-01-01T00:59:60+01:00'],
        ['year 0', '0000-06-01T00:00:00Z'],
        ['year 1', '0001-01-01T00:00:00Z'],
        ['an instant before year 1000 in UTC', '1000-01-01T00:00:00+01:00'],
        ['an instant after year 9999 in UTC', '9999-12-31T23:59:59-23:59'],
        ['an offset JavaScript cannot read', '2016-12-31T23:59:59+01'],
      ];
      for (const [what, occurredAt] of refused) {
        it(`refuses ${what} (${occurredAt}) with 400 naming occurredAt, and creates nothing`, async () => {
          const before = await countRows(t, 'calls', workspaceId);
          assertInvalid(await post(occurredAt), ['occurredAt'], occurredAt);
          assertInvalid(await post(occurredAt, randomUUID()), ['occurredAt'], 'validation comes before looking the lead up');
          assert.equal(await countRows(t, 'calls', workspaceId), before);
        });
      }

      it('stores the first and last instants of the years 1000 to 9999 as sent', async () => {
        for (const occurredAt of ['1000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
          const res = await post(occurredAt);
          assert.equal(res.status, 201, res.text);
          assert.equal(res.json.occurredAt, occurredAt);
          const listed = await t.api('GET', `/api/v1/leads/${lead.id}/calls?limit=100`, { key });
          assert.equal(listed.json.data.find((c: any) => c.id === res.json.id).occurredAt, occurredAt);
        }
      });
    });

    describe('many errors', () => {
      it('lists the first 50 errors of a body with 60,000 unknown fields and counts them all, in a small answer', async () => {
        const body: Record<string, unknown> = { name: 'Many Fields' };
        for (let i = 0; i < 60_000; i++) body[`f${i}`] = 1;
        const before = await countRows(t, 'leads', workspaceId);
        const res = await t.api('POST', '/api/v1/leads', { key, body });
        assertInvalid(res, ['f0', 'f49']);
        assert.equal(res.json.errors.length, 50);
        assert.deepEqual(res.json.errors[49], { field: 'f49', message: 'is not a known field' });
        assert.equal(res.json.errorCount, 60_000);
        assert.match(res.json.detail, /and 59995 more/);
        assert.ok(res.text.length < 10_000, `the answer is ${res.text.length} characters`);
        assert.equal(await countRows(t, 'leads', workspaceId), before);
      });

      it('counts the errors of every validation problem, one included', async () => {
        const res = await t.api('POST', '/api/v1/leads', { key, body: { name: '', email: 'nope' } });
        assertInvalid(res, ['name', 'email']);
        assert.equal(res.json.errorCount, res.json.errors.length);
        const one = await t.api('GET', '/api/v1/leads?limit=0', { key });
        assert.equal(one.json.errorCount, 1);
      });
    });
  });
}

// GET /api/v1/leads/export on both backends: a CSV file (BOM, the header the import reads, a row per lead, newest
// first) of exactly the leads the filters find, cells a spreadsheet would run as formulas defused, 5,000 leads sent
// in pages, and nothing of another workspace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.ts';
import { EXPORT_COLUMNS, EXPORT_PAGE } from '../../src/domain/leads/export.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, createLead, db, walkPages } from './support.ts';

const HEADER = 'name,email,companyName,companyWebsite,status,assignedToUserId,createdAt,updatedAt,'
  + 'ownerName,ownerEmail,lastContactedAt,lastReplyAt,timeZone';
/** A cell as the export writes it: with a ' before what a spreadsheet would run as a formula. */
const defused = (cell: string) => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);

for (const kind of BACKENDS) {
  describe(`lead export (${kind})`, () => {
    const clock = new ManualClock('2026-05-04T21:00:00.000Z');
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let key: string;
    let keyB: string;

    before(async () => {
      t = await startTestApp(kind, { clock });
      A = await t.workspace('pro');
      const B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      keyB = (await t.key(B.id)).key;
      await createLead(t, keyB, { name: 'Bea of B', email: 'bea@b.example', companyName: 'B Corp' });
    });
    after(() => t?.close());

    /** The export's answer, its text decoded as it was sent: a byte order mark is kept (fetch's text() drops it). */
    const exported = async (query = '', k = key) => {
      const res = await fetch(`${t.url}/api/v1/leads/export${query}`, { headers: { authorization: `Bearer ${k}` } });
      const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
      assert.equal(res.status, 200, text.slice(0, 300));
      return { headers: res.headers, text };
    };
    const rowsOf = (text: string): Record<string, string>[] => parse(text, { bom: true, columns: true, relax_column_count: false });

    it('answers an empty workspace with the byte order mark and the header alone', async () => {
      const empty = await t.workspace('pro');
      const res = await exported('', (await t.key(empty.id)).key);
      assert.equal(res.text, `\ufeff${HEADER}\r\n`);
    });

    it('sends a CSV attachment named for the day, with a BOM, the header the import reads, and every field as the API gives it', async () => {
      clock.advance(1000);
      const full = await createLead(t, key, {
        name: 'Zoë Ångström', email: 'zoe@northwind.example', companyName: 'Northwind, "Traders"', companyWebsite: 'https://northwind.example/a?b=c',
        status: 'QUALIFIED', assignedToUserId: A.adminUserId, timeZone: 'Europe/Berlin',
      });
      clock.advance(1000);
      const bare = await createLead(t, key, { name: 'Line\nBreak' });
      const res = await exported();
      assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="leads-2026-05-04.csv"');
      assert.ok(res.text.startsWith(`\ufeff${HEADER}\r\n`), res.text.slice(0, 120));
      assert.deepEqual([...EXPORT_COLUMNS], HEADER.split(','));
      const rows = rowsOf(res.text);
      const owner = await db(t).selectFrom('users').select(['name', 'email']).where('id', '=', A.adminUserId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(rows, [
        {
          name: 'Line\nBreak', email: '', companyName: '', companyWebsite: '', status: 'DISCOVERY',
          assignedToUserId: '', createdAt: bare.createdAt, updatedAt: bare.updatedAt,
          ownerName: '', ownerEmail: '', lastContactedAt: '', lastReplyAt: '', timeZone: '',
        },
        {
          name: full.name, email: full.email, companyName: full.companyName, companyWebsite: full.companyWebsite, status: 'QUALIFIED',
          assignedToUserId: A.adminUserId, createdAt: full.createdAt, updatedAt: full.updatedAt,
          ownerName: owner.name ?? '', ownerEmail: owner.email ?? '', lastContactedAt: '', lastReplyAt: '', timeZone: 'Europe/Berlin',
        },
      ]);
      assert.ok(res.text.includes('"Line\nBreak"'), 'a line break inside a cell is quoted');
      assert.ok(!res.text.includes('Bea of B'), "nothing of another workspace");
    });

    it("defuses cells a spreadsheet would run as a formula, with a ' before them", async () => {
      const hostile = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1:A9)', '\tTabbed', '\rCarriage', 'Fine = fine'];
      for (const name of hostile) {
        clock.advance(1);
        await createLead(t, key, { name, companyName: `=cmd|' /C calc'!A0 ${hostile.indexOf(name)}` });
      }
      const rows = rowsOf((await exported(`?q=${encodeURIComponent('a0')}`)).text);
      assert.deepEqual(rows.map((r) => r.name), hostile.toReversed().map(defused));
      assert.deepEqual(rows.map((r) => r.name).slice(1, 7), hostile.slice(0, 6).toReversed().map((name) => `'${name}`), 'each of the six is defused');
      for (const row of rows) assert.match(row.companyName!, /^'=cmd/);
    });

    it('exports exactly the leads the filters find, as the list and the count find them', async () => {
      const filters = ['?q=zoe', '?q=northwind%20traders', '?status=QUALIFIED', `?assignedToUserId=${A.adminUserId}`, '?assignedToUserId=none&q=line', '?q=xyzzy', ''];
      for (const query of filters) {
        const rows = rowsOf((await exported(query)).text);
        const listed = await walkPages(t, key, `/api/v1/leads${query}${query ? '&' : '?'}limit=100`);
        assert.deepEqual(rows.map((r) => [r.name, r.createdAt]), listed.items.map((l) => [defused(l.name), l.createdAt]), query);
        const counted = await t.api('GET', `/api/v1/leads/count${query}`, { key });
        assert.equal(counted.json.count, rows.length, query);
      }
    });

    it('refuses a filter it cannot use with a 400 problem, before any of the file', async () => {
      assertInvalid(await t.api('GET', `/api/v1/leads/export?q=${encodeURIComponent('a b c d e f g h i j k')}`, { key }), ['q']);
      assertInvalid(await t.api('GET', `/api/v1/leads/export?q=${'x'.repeat(201)}`, { key }), ['q']);
      assertInvalid(await t.api('GET', '/api/v1/leads/export?assignedToUserId=someone', { key }), ['assignedToUserId']);
      assertInvalid(await t.api('GET', '/api/v1/leads/export?status=HOT', { key }), ['status']);
    });

    it('needs a key with leads:read', async () => {
      assertProblem(await t.api('GET', '/api/v1/leads/export'), 401, 'unauthorized');
      const writeOnly = (await t.key(A.id, ['leads:write'])).key;
      assertProblem(await t.api('GET', '/api/v1/leads/export', { key: writeOnly }), 403, 'insufficient_scope');
    });

    it(`exports 5,000 leads, newest first, each once, read ${EXPORT_PAGE} at a time`, async () => {
      const W = await t.workspace('pro');
      const k = (await t.key(W.id)).key;
      // Written in bulk: what is tested is the export. Half of them share each createdAt, so that pages break inside ties.
      await sql`
        INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
        SELECT gen_random_uuid(), ${W.id}, 'Bulk ' || lpad(g::text, 4, '0'), 'bulk' || g || '@example.com', CASE WHEN g % 2 = 0 THEN 'Even Co' ELSE 'Odd Co' END,
               NULL, 'DISCOVERY', NULL, ts, ts
        FROM generate_series(1, 5000) g, LATERAL (SELECT '2026-01-01T00:00:00Z'::timestamptz + (g / 2) * interval '1 second' AS ts) t`.execute(db(t));
      const res = await exported('', k);
      assert.equal(res.headers.get('content-length'), null, 'sent as it is read, not measured first');
      const rows = rowsOf(res.text);
      assert.equal(rows.length, 5000);
      assert.equal(new Set(rows.map((r) => r.email)).size, 5000, 'each lead once');
      for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1]!.createdAt! >= rows[i]!.createdAt!, `newest first at row ${i}`);
      assert.equal(res.text.split('\ufeff').length, 2, 'one byte order mark');
      assert.equal(res.text.split(HEADER).length, 2, 'one header row');
      const odd = rowsOf((await exported('?q=odd%20co', k)).text);
      assert.equal(odd.length, 2500);
      assert.ok(odd.every((r) => r.companyName === 'Odd Co'));
    });
  });
}

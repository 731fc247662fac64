// GET /api/v1/leads?q=… (search), GET /api/v1/leads/count and the assignedToUserId filter, on both backends: words
// found inside the name, e-mail or company whatever their case and accents, every word required, LIKE's wildcards
// taken literally, pages and counts that agree, hostile queries refused with a 400, and nothing of another workspace.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { literal } from '../../src/db/database.ts';
import { addMember } from '../../src/domain/members/users.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { assertInvalid, assertProblem, createLead, nextLink, walkPages } from './support.ts';

for (const kind of BACKENDS) {
  describe(`lead search, counts and the owner filter (${kind})`, () => {
    const clock = new ManualClock('2026-04-01T09:00:00.000Z');
    let t: TestApp;
    let A: { id: string; adminUserId: string };
    let B: { id: string; adminUserId: string };
    let key: string;
    let keyB: string;
    let memberId: string;
    /** Workspace A's leads by a short name. */
    const leads: Record<string, any> = {};
    let leadOfB: any;

    const add = async (label: string, body: Record<string, unknown>, k = () => key) => {
      clock.advance(1000);
      leads[label] = await createLead(t, k(), body);
      return leads[label];
    };

    before(async () => {
      t = await startTestApp(kind, { clock });
      A = await t.workspace('pro');
      B = await t.workspace('pro');
      key = (await t.key(A.id)).key;
      keyB = (await t.key(B.id)).key;
      const member = await t.database.db.transaction().execute((trx) => addMember(trx, A.id, {
        name: 'Mia Member', email: `mia-${A.id.slice(0, 8)}@example.com`, role: 'MEMBER', password: 'a long enough password',
      }, systemClock));
      memberId = member.id;
      await add('zoe', { name: 'Zoë Ångström', email: 'zoe@northwind.example', companyName: 'Northwind Traders', assignedToUserId: memberId });
      await add('ada', { name: 'Ada Lovelace', email: 'ada@analytical.example', companyName: 'Analytical Engines', assignedToUserId: A.adminUserId });
      await add('jurgen', { name: 'Jürgen Straße', companyName: 'Æther GmbH', status: 'QUALIFIED', assignedToUserId: memberId });
      await add('plainZoe', { name: 'Zoe Plain', email: 'zoe.plain@example.com' });
      // "René" written decomposed: e followed by a combining acute accent.
      await add('rene', { name: 'Rene\u0301 Magritte', companyName: 'Pipes SA', status: 'QUALIFIED' });
      await add('percent', { name: 'Percy Cent', companyName: '100% Organic' });
      await add('thousand', { name: 'Tom Sand', companyName: '1000 Organic' });
      await add('underscore', { name: 'Una Score', companyName: 'a_b Labs' });
      await add('axb', { name: 'Axel Bee', companyName: 'axb Labs' });
      await add('backslash', { name: 'Bea Slash', companyName: 'C:\\Temp Corp' });
      await add('cyrillic', { name: 'Дмитрий Иванов', companyName: 'Щука' });
      await add('quote', { name: 'Otto Quote', companyName: "O'Brien Pub" });
      clock.advance(1000);
      leadOfB = await createLead(t, keyB, { name: 'Zoë Ångström', email: 'zoe@northwind.example', companyName: 'Northwind Traders' });
    });
    after(() => t?.close());

    const search = async (q: string, k = key, extra = '') => {
      const res = await t.api('GET', `/api/v1/leads?limit=100&q=${encodeURIComponent(q)}${extra}`, { key: k });
      assert.equal(res.status, 200, `q=${JSON.stringify(q)}: ${res.text}`);
      return res.json.data as any[];
    };
    /** The labels of the leads a search finds, in the order it lists them. */
    const found = async (q: string, extra = '') => {
      const byId = new Map(Object.entries(leads).map(([label, lead]) => [lead.id, label]));
      return (await search(q, key, extra)).map((lead) => byId.get(lead.id) ?? `? ${lead.name}`);
    };
    const count = async (query: string, k = key) => {
      const res = await t.api('GET', `/api/v1/leads/count${query}`, { key: k });
      assert.equal(res.status, 200, `count${query}: ${res.text}`);
      assert.deepEqual(Object.keys(res.json), ['count']);
      return res.json.count as number;
    };

    it('finds a word whatever its case and accents, in the name, the e-mail or the company', async () => {
      for (const q of ['angstrom', 'ÅNGSTRÖM', 'ångström', 'AngStröm', 'northwind', 'NORTHWIND', 'Nörthwind']) {
        assert.deepEqual(await found(q), ['zoe'], q);
      }
      // zoë, ZOE and zoe are one word: both Zoës, newest first.
      for (const q of ['zoë', 'ZOË', 'zoe', 'Zoe']) assert.deepEqual(await found(q), ['plainZoe', 'zoe'], q);
      for (const q of ['straße', 'STRASSE', 'strasse', 'jürgen', 'JURGEN', 'æther', 'ÆTHER', 'aether']) assert.deepEqual(await found(q), ['jurgen'], q);
      // A decomposed é (e and a combining accent) is found by é, by e, and finds é.
      for (const q of ['rené', 'RENÉ', 'rene', 'Rene\u0301']) assert.deepEqual(await found(q), ['rene'], q);
      assert.deepEqual(await found('rene\u0301 magritte'), ['rene']);
      // Letters beyond Latin are folded by lower case (under the UTF-8 locale both backends run with).
      for (const q of ['дмитрий', 'ДМИТРИЙ', 'щука', 'ЩУК']) assert.deepEqual(await found(q), ['cyrillic'], q);
    });

    it('finds a word as part of a longer one: north finds Northwind', async () => {
      assert.deepEqual(await found('north'), ['zoe']);
      assert.deepEqual(await found('wind'), ['zoe']);
      assert.deepEqual(await found('nalyt'), ['ada']);
      assert.deepEqual(await found('@analytical.ex'), ['ada']);
      assert.deepEqual(await found('lovelac'), ['ada']);
      assert.deepEqual(await found('xyzzy'), []);
    });

    it('requires every word, each anywhere in the three fields, however the words are spaced', async () => {
      assert.deepEqual(await found('NORTH wind'), ['zoe']);
      assert.deepEqual(await found('zoe north'), ['zoe'], 'the plain Zoe is not at Northwind');
      assert.deepEqual(await found('ada engines'), ['ada'], 'a word of the name and one of the company');
      assert.deepEqual(await found('  ada \t\n  engines  '), ['ada']);
      assert.deepEqual(await found('engines ada'), ['ada'], 'in any order');
      assert.deepEqual(await found('ada xyzzy'), [], 'one missing word finds nothing');
      assert.deepEqual(await found('zoe zoe zoe'), ['plainZoe', 'zoe']);
      // A word never spans two fields: the fields are apart.
      assert.deepEqual(await found('lovelaceada'), []);
      assert.deepEqual(await found('plainzoe.plain'), []);
    });

    it('takes %, _ and \\ in a word literally, not as LIKE wildcards', async () => {
      assert.deepEqual(await found('100%'), ['percent'], '100% does not find 1000');
      assert.deepEqual(await found('100'), ['thousand', 'percent']);
      assert.deepEqual(await found('%'), ['percent']);
      assert.deepEqual(await found('a_b'), ['underscore'], 'a_b does not find axb');
      assert.deepEqual(await found('_'), ['underscore']);
      assert.deepEqual(await found('c:\\temp'), ['backslash']);
      assert.deepEqual(await found('\\'), ['backslash']);
      assert.deepEqual(await found('%%'), []);
    });

    it('finds a quote as written: the words go into the statement as literals', async () => {
      assert.deepEqual(await found("o'brien"), ['quote']);
      assert.deepEqual(await found("'"), ['quote']);
      assert.deepEqual(await found("o''brien"), []);
      assert.deepEqual(await found("\\'"), []);
      assert.deepEqual(await found("' OR ''='"), []);
      assert.deepEqual(await found("E'\\' quote"), []);
      assert.equal(await count(`?q=${encodeURIComponent("o'brien pub")}`), 1);
    });

    it('writes a literal that reads back as the text, whatever standard_conforming_strings says', async () => {
      const texts = ["'", '\\', "\\'", "'\\", "''", "\\\\'; SELECT 1; --", "E'x'", '$$', '$1', 'Zoë\u202e🦄', '\\0', '\\x41', '\\u0041'];
      for (const conforming of ['on', 'off']) {
        const read = await t.database.db.transaction().execute(async (trx) => {
          await sql.raw(`SET LOCAL standard_conforming_strings = ${conforming}`).execute(trx);
          return Promise.all(texts.map(async (text) => (await sql<{ v: string }>`SELECT ${literal(text)}::text AS v`.execute(trx)).rows[0]!.v));
        });
        assert.deepEqual(read, texts, `standard_conforming_strings = ${conforming}`);
      }
      assert.throws(() => literal('a\u0000b'), /NUL/);
      assert.throws(() => literal(1.5), /safe integer/);
    });

    it('treats a blank q as no search at all', async () => {
      const all = await found('');
      assert.equal(all.length, Object.keys(leads).length);
      for (const q of [' ', '   \t ']) assert.deepEqual(await found(q), all, JSON.stringify(q));
      assert.equal(await count('?q=%20%20'), all.length);
    });

    it('combines the search with status and owner filters', async () => {
      assert.deepEqual(await found('e', '&status=QUALIFIED'), ['rene', 'jurgen']);
      assert.deepEqual(await found('straße', '&status=DISCOVERY'), []);
      assert.deepEqual(await found('zoe', `&assignedToUserId=${memberId}`), ['zoe']);
      assert.deepEqual(await found('zoe', '&assignedToUserId=none'), ['plainZoe']);
    });

    it('finds a lead by what it is now, after an update, and not by what it was', async () => {
      const lead = await add('renamed', { name: 'Oldname Person', companyName: 'Before Ltd' });
      assert.deepEqual(await found('oldname'), ['renamed']);
      const patched = await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { name: 'Newname Persön', companyName: null } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(await found('oldname'), []);
      assert.deepEqual(await found('before'), []);
      assert.deepEqual(await found('newname person'), ['renamed']);
    });

    it('pages through a search with the cursor, the Link keeping q, and counts what it pages through', async () => {
      const pager: string[] = [];
      for (let i = 0; i < 7; i++) pager.push((await add(`pager${i}`, { name: `Pagé Person ${i}`, companyName: i % 2 ? 'Odd Pagers' : 'Even Pagers' })).id);
      // Leads made in the same millisecond are ordered by id: ties across a page boundary are not lost.
      clock.advance(1000);
      for (let i = 7; i < 10; i++) pager.push((await createLead(t, key, { name: `Pagé Person ${i}` })).id);
      const first = await t.api('GET', '/api/v1/leads?q=PAGE%20person&limit=3', { key });
      const link = nextLink(first);
      assert.ok(link, 'a next page');
      assert.equal(new URL(link, 'http://x').searchParams.get('q'), 'PAGE person', 'the Link keeps q');
      const { items, pageSizes } = await walkPages(t, key, '/api/v1/leads?q=PAGE%20person&limit=3');
      assert.deepEqual(pageSizes, [3, 3, 3, 1]);
      const ids = items.map((l) => l.id);
      assert.equal(new Set(ids).size, 10, 'no lead twice');
      assert.deepEqual(new Set(ids), new Set(pager));
      for (let i = 1; i < items.length; i++) {
        const [a, b] = [items[i - 1], items[i]];
        assert.ok(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id), 'newest first, then id descending');
      }
      assert.equal(await count('?q=page%20PERSON'), 10);
      const odd = await walkPages(t, key, '/api/v1/leads?q=pagers%20odd&limit=2');
      assert.equal(odd.items.length, 3);
      assert.equal(await count('?q=pagers%20odd'), 3);
    });

    it('counts exactly what the list pages through, for every filter', async () => {
      const queries = ['', '?q=zoe', '?q=e', '?q=100%25', '?status=QUALIFIED', `?assignedToUserId=${memberId}`, '?assignedToUserId=none',
        `?q=e&status=QUALIFIED&assignedToUserId=${memberId}`, '?q=xyzzy', `?assignedToUserId=${randomUUID()}`];
      for (const query of queries) {
        const listed = await walkPages(t, key, `/api/v1/leads${query}${query ? '&' : '?'}limit=2`, { maxPages: 200 });
        assert.equal(await count(query), listed.items.length, `count${query}`);
      }
    });

    it("filters by owner: a user's leads, or none for the unassigned", async () => {
      const mine = await walkPages(t, key, `/api/v1/leads?assignedToUserId=${memberId}`);
      assert.deepEqual(new Set(mine.items.map((l) => l.id)), new Set([leads.zoe.id, leads.jurgen.id]));
      const admin = await walkPages(t, key, `/api/v1/leads?assignedToUserId=${A.adminUserId.toUpperCase()}`);
      assert.deepEqual(admin.items.map((l) => l.id), [leads.ada.id], 'a UUID in capitals is the same UUID');
      const unassigned = await walkPages(t, key, '/api/v1/leads?assignedToUserId=none&limit=100');
      assert.ok(unassigned.items.length > 0);
      assert.ok(unassigned.items.every((l) => l.assignedToUserId === null));
      // A user of another workspace, or nobody's id: no lead, not an error.
      for (const other of [B.adminUserId, randomUUID()]) {
        assert.deepEqual((await t.api('GET', `/api/v1/leads?assignedToUserId=${other}`, { key })).json.data, []);
        assert.equal(await count(`?assignedToUserId=${other}`), 0);
      }
    });

    it('never finds or counts the leads of another workspace', async () => {
      assert.deepEqual((await search('angstrom', keyB)).map((l) => l.id), [leadOfB.id]);
      assert.deepEqual((await search('northwind traders', key)).map((l) => l.id), [leads.zoe.id]);
      assert.equal(await count('?q=zoe', keyB), 1);
      assert.equal(await count('', keyB), 1);
      assert.deepEqual(await search('ada', keyB), []);
      assert.deepEqual((await t.api('GET', `/api/v1/leads?assignedToUserId=${memberId}`, { key: keyB })).json.data, [], "A's member owns nothing in B");
    });

    describe('refuses what it cannot search, with a 400 naming the parameter, never a 500', () => {
      const refusals: Array<[string, string, string]> = [
        ['a q over 200 characters', `q=${'a'.repeat(201)}`, 'q'],
        ['a q of 5,000 characters', `q=${encodeURIComponent('ab '.repeat(1700))}`, 'q'],
        ['a q of 11 words', `q=${encodeURIComponent('a b c d e f g h i j k')}`, 'q'],
        ['a q of 100 one-letter words', `q=${encodeURIComponent('x '.repeat(100))}`, 'q'],
        ['an owner that is not a UUID', 'assignedToUserId=mia', 'assignedToUserId'],
        ['an owner that is almost a UUID', `assignedToUserId=${randomUUID().slice(0, 35)}`, 'assignedToUserId'],
        ['an empty owner', 'assignedToUserId=', 'assignedToUserId'],
        ['an owner written NONE', 'assignedToUserId=NONE', 'assignedToUserId'],
        ['an unknown status', 'status=HOT', 'status'],
      ];
      for (const [what, query, field] of refusals) {
        it(`${what} (list and count)`, async () => {
          assertInvalid(await t.api('GET', `/api/v1/leads?${query}`, { key }), [field], `list: ${what}`);
          assertInvalid(await t.api('GET', `/api/v1/leads/count?${query}`, { key }), [field], `count: ${what}`);
        });
      }

      it('accepts 10 words and 200 characters', async () => {
        assert.deepEqual(await search('a b c d e f g h i j'), []);
        assert.deepEqual(await search(`${'a'.repeat(100)} ${'b'.repeat(99)}`), []);
      });

      it('refuses a NUL, and takes other control characters for spaces between words', async () => {
        assertInvalid(await t.api('GET', `/api/v1/leads?q=${encodeURIComponent('ada\u0000engines')}`, { key }), ['q']);
        assertInvalid(await t.api('GET', `/api/v1/leads/count?q=${encodeURIComponent('\u0000')}`, { key }), ['q']);
        for (const q of ['ada\u0001engines', 'ada\u007fengines', 'ada\u0085engines', '\u001b']) {
          const res = await t.api('GET', `/api/v1/leads?q=${encodeURIComponent(q)}`, { key });
          assert.equal(res.status, 200, `${JSON.stringify(q)}: ${res.text}`);
        }
        assert.deepEqual(await found('ada\u0001engines'), ['ada']);
        assert.deepEqual(await found('\u001b'), (await found('')), 'only control characters: a blank search');
      });

      it('answers odd but harmless searches with 200', async () => {
        for (const q of ["' OR 1=1 --", '"; DROP TABLE leads; --', '🦄', 'ｎｏｒｔｈ', '\u202e', '$1', '::uuid', '%00', '*', '.*', '(', '[a-z]']) {
          const res = await t.api('GET', `/api/v1/leads?q=${encodeURIComponent(q)}`, { key });
          assert.equal(res.status, 200, `${JSON.stringify(q)}: ${res.text}`);
          const counted = await t.api('GET', `/api/v1/leads/count?q=${encodeURIComponent(q)}`, { key });
          assert.equal(counted.status, 200, `count ${JSON.stringify(q)}: ${counted.text}`);
        }
        assert.deepEqual(await found('ｎｏｒｔｈ'), ['zoe'], 'full-width letters are folded too');
      });
    });

    it('needs leads:read to search and count', async () => {
      const writeOnly = (await t.key(A.id, ['leads:write'])).key;
      assertProblem(await t.api('GET', '/api/v1/leads?q=ada', { key: writeOnly }), 403, 'insufficient_scope');
      assertProblem(await t.api('GET', '/api/v1/leads/count?q=ada', { key: writeOnly }), 403, 'insufficient_scope');
      assertProblem(await t.api('GET', '/api/v1/leads/count'), 401, 'unauthorized');
    });
  });
}

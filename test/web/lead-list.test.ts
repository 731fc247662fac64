// The leads list's address (web/src/lib/leadList.ts), without a browser: what a query string means, what a view
// writes back, and that whatever a mangled or hand-written link holds opens a sane view instead of failing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  exportPath, hasFilters, leadFilters, leadSearch, previousPage, readLeadView as readWith, rememberPreviousPage, SEARCH_MAX_LENGTH, withFilters,
  type LeadView, type PageMemory,
} from '../../web/src/lib/leadList.ts';

const STATUSES = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'] as const;
type Status = (typeof STATUSES)[number];
const readLeadView = (search: string) => readWith(search, STATUSES);

const ME = '0b9c6a4e-7d4b-4c51-9a51-3f1d2c8e9a10';
const MEMBER = '5f0e2a3b-1c4d-4e5f-8a9b-0c1d2e3f4a5b';

describe('the leads list in the address', () => {
  it('reads back every view it writes', () => {
    const views: LeadView<Status>[] = [
      { q: '', status: null, owner: null, page: 1, cursor: null },
      { q: 'zoë ång', status: 'WON', owner: 'me', page: 1, cursor: null },
      { q: 'north', status: null, owner: 'none', page: 3, cursor: 'MjAyNi0xMS0yM1QxNDo1Njo0OC4xMjNafGFi' },
      { q: 'a&b=c #d', status: 'LOST', owner: MEMBER, page: 12, cursor: 'x-y_z' },
    ];
    // The query string as the router writes a view's search (web/src/routes.tsx `plainSearch`).
    const query = (view: LeadView<Status>) => new URLSearchParams(leadSearch(view)).toString();
    for (const view of views) assert.deepEqual(readLeadView(query(view)), view, query(view));
    assert.equal(query(views[0]!), '', 'the plain list has no query string');
    assert.equal(query(views[1]!), 'q=zo%C3%AB+%C3%A5ng&status=WON&owner=me');
  });

  it('opens a sane view from a mangled link', () => {
    assert.deepEqual(readLeadView('?status=ARCHIVED&owner=everyone&page=4'), { q: '', status: null, owner: null, page: 1, cursor: null },
      'an unknown status or owner is no filter; a page without a cursor is the first');
    assert.equal(readLeadView('?cursor=abc').page, 2, 'a cursor without a page number is past the first page');
    for (const page of ['0', '1', '-3', '2.5', 'x', '1e3', '99999999999999999999']) {
      assert.equal(readLeadView(`?cursor=abc&page=${page}`).page, 2, `page=${page}`);
    }
    assert.equal(readLeadView(`?owner=${MEMBER.toUpperCase()}`).owner, MEMBER, 'an id in capitals is the same member');
    assert.equal(readLeadView('?q=%20%20north%20%20').q, 'north', 'the search is trimmed');
    assert.equal(readLeadView(`?q=${'a'.repeat(SEARCH_MAX_LENGTH + 50)}`).q.length, SEARCH_MAX_LENGTH, 'and cut to what the API takes');
  });

  it('starts a changed filter on the first page', () => {
    const deep: LeadView<Status> = { q: 'north', status: 'WON', owner: null, page: 5, cursor: 'c' };
    assert.deepEqual(withFilters(deep, { owner: 'me' }), { q: 'north', status: 'WON', owner: 'me', page: 1, cursor: null });
    assert.deepEqual(withFilters(deep, { q: '' }), { q: '', status: 'WON', owner: null, page: 1, cursor: null });
    assert.equal(hasFilters(withFilters(deep, { q: '', status: null })), false);
  });

  it('asks the API for my leads by my id, and exports with the same filters', () => {
    const view = readLeadView('?q=zo%C3%AB&status=QUALIFIED&owner=me&page=2&cursor=c');
    const filters = leadFilters(view, ME);
    assert.deepEqual(filters, { q: 'zoë', status: 'QUALIFIED', assignedToUserId: ME });
    assert.equal(exportPath(filters), `/api/v1/leads/export?q=zo%C3%AB&status=QUALIFIED&assignedToUserId=${ME}`);
    assert.deepEqual(leadFilters(readLeadView('?owner=none'), ME), { q: null, status: null, assignedToUserId: 'none' });
    assert.equal(exportPath(leadFilters(readLeadView(''), ME)), '/api/v1/leads/export', 'no filter: every lead');
  });

  it('remembers the page before each page, per filters, and says when it does not know', () => {
    const store = new Map<string, string>();
    const memory: PageMemory = { getItem: (key) => store.get(key) ?? null, setItem: (key, value) => void store.set(key, value) };
    const all = leadFilters(readLeadView(''), ME);
    const won = leadFilters(readLeadView('?status=WON'), ME);
    rememberPreviousPage(memory, all, 'page2', null);
    rememberPreviousPage(memory, all, 'page3', 'page2');
    assert.equal(previousPage(memory, all, 'page2'), null, 'before page 2: the first page');
    assert.equal(previousPage(memory, all, 'page3'), 'page2');
    assert.equal(previousPage(memory, won, 'page3'), undefined, 'another filter: not known');
    assert.equal(previousPage(memory, all, 'page9'), undefined, 'a page never opened here: not known');
    const refusing: PageMemory = { getItem: () => { throw new Error('denied'); }, setItem: () => { throw new Error('quota'); } };
    assert.doesNotThrow(() => rememberPreviousPage(refusing, all, 'page2', null));
    assert.equal(previousPage(refusing, all, 'page2'), undefined, 'storage refused: not known');
  });
});

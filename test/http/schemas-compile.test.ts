// The routes' schemas are compiled on first use (src/http/app.ts), so a schema that does not compile would fail its
// route's first request rather than the server's start. Here every one of them is compiled, each route's request
// validators and response serializers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileSchemas } from '../../src/http/app.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';

describe('the routes\' schemas', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(BACKENDS[0] ?? 'pglite'); });
  after(() => t?.close());

  it('all compile, and a request still validates and serializes with them', async () => {
    compileSchemas();
    assert.equal(compileSchemas(), 0, 'nothing is left to compile');
    const ws = await t.workspace();
    const { key } = await t.key(ws.id);
    const refused = await t.api('GET', '/api/v1/leads?limit=0x10', { key });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.json.errors, [{ field: 'limit', message: 'must be a whole number' }]);
    const created = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Ada Lovelace' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.name, 'Ada Lovelace');
  });
});

// packages/client/src/schema.d.ts is generated from the API document as served; @leadrun/client is typed from it.
// This fails when a route's schema changed and `npm run gen:api` was not run, so the client cannot drift from the API.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { CLIENT_SCHEMA_FILE, generateClientTypes } from '../../scripts/gen-client-types.ts';
import { BACKENDS, createTestDatabase } from '../helpers.ts';

test('packages/client/src/schema.d.ts matches the served API document', async () => {
  // The app is built on a test database (a copy of the migrated template) rather than on a new embedded one.
  const testDb = await createTestDatabase(BACKENDS[0] ?? 'pglite');
  const [expected, actual] = await Promise.all([
    generateClientTypes(testDb.database).finally(() => testDb.drop()), readFile(CLIENT_SCHEMA_FILE, 'utf8').catch(() => ''),
  ]);
  if (actual === expected) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  const line = e.findIndex((text, i) => text !== a[i]);
  assert.fail(
    `packages/client/src/schema.d.ts is out of date with the API document: run \`npm run gen:api\`.\n`
    + `First difference at line ${line + 1}:\n  file:     ${a[line] ?? '(end of file)'}\n  expected: ${e[line] ?? '(end of file)'}`,
  );
});

test('the client\'s types cover every path it calls', async () => {
  const [types, client] = await Promise.all([readFile(CLIENT_SCHEMA_FILE, 'utf8'), readFile(new URL('../../packages/client/src/client.ts', import.meta.url), 'utf8')]);
  const used = new Set([...client.matchAll(/'(\/api\/v1\/[^']*)'/g)].map((m) => m[1]!));
  assert.ok(used.size >= 15, [...used].join(', '));
  for (const path of used) assert.ok(types.includes(`"${path}": {`), `${path} is in schema.d.ts`);
});

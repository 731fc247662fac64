// web/src/api/schema.d.ts is generated from the OpenAPI document the app writes; the UI's client is typed from it.
// This fails when a route's schema changed and `npm run gen:api` was not run, so the UI cannot drift from the API.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { generateApiTypes, SCHEMA_FILE } from '../../scripts/gen-api-types.ts';
import { BACKENDS, createTestDatabase } from '../helpers.ts';

test('web/src/api/schema.d.ts matches the OpenAPI document of the app', async () => {
  // The app is built on a test database (a copy of the migrated template) rather than on a new embedded one.
  const testDb = await createTestDatabase(BACKENDS[0] ?? 'pglite');
  const [expected, actual] = await Promise.all([
    generateApiTypes(testDb.database).finally(() => testDb.drop()), readFile(SCHEMA_FILE, 'utf8').catch(() => ''),
  ]);
  if (actual === expected) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  const line = e.findIndex((text, i) => text !== a[i]);
  assert.fail(
    `web/src/api/schema.d.ts is out of date with the OpenAPI document: run \`npm run gen:api\`.\n`
    + `First difference at line ${line + 1}:\n  file:     ${a[line] ?? '(end of file)'}\n  expected: ${e[line] ?? '(end of file)'}`,
  );
});

test('the generated types cover the UI routes and the API', async () => {
  const text = await readFile(SCHEMA_FILE, 'utf8');
  for (const path of ['/api/v1/leads', '/api/v1/runs/{id}/events', '/ui/api/session', '/ui/api/keys/{id}/revoke', '/ui/api/audit', '/ui/api/usage']) {
    assert.ok(text.includes(`"${path}": {`), `${path} is in schema.d.ts`);
  }
});

// The security suites prove that a refused request changed nothing by comparing fingerprints of every table
// (test/security/support.ts). A fingerprint that missed a change would let those suites pass on anything: here each
// kind of change is made by hand and must show, and what a request writes behind (a key's last use) must not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { BACKENDS, startTestApp } from '../helpers.ts';
import { assertUnchanged, fingerprint, tableNames } from './support.ts';

for (const kind of BACKENDS) {
  describe(`table fingerprints (${kind})`, () => {
    it('show an insert, an update, an update to the same value and a delete; not a volatile column or a read', async () => {
      const t = await startTestApp(kind);
      try {
        const workspace = await t.workspace();
        await t.key(workspace.id);
        const db = t.database.db;
        const tables = await tableNames(db);
        let known = await fingerprint(db, tables);
        const changes = async (what: string, table: string) => {
          const now = await fingerprint(db, tables);
          assert.throws(() => assertUnchanged(known, now, what), new RegExp(`table ${table} changed`), what);
          known = now;
        };

        await sql`SELECT * FROM workspaces FOR UPDATE`.execute(db);
        assertUnchanged(known, await fingerprint(db, tables), 'a read that locks');
        await sql`UPDATE api_keys SET last_used_at = now()`.execute(db);
        assertUnchanged(known, await fingerprint(db, tables), 'a key used');

        await sql`UPDATE workspaces SET name = name || '.' WHERE id = ${workspace.id}`.execute(db);
        await changes('an update', 'workspaces');
        await sql`UPDATE workspaces SET name = name WHERE id = ${workspace.id}`.execute(db);
        await changes('an update to the same value', 'workspaces');
        await sql`UPDATE api_keys SET last_used_at = now(), name = name || '.'`.execute(db);
        await changes('an update beside a volatile column', 'api_keys');
        await t.key(workspace.id);
        await changes('an insert', 'api_keys');
        await sql`DELETE FROM api_keys`.execute(db);
        await changes('a delete', 'api_keys');
      } finally {
        await t.close();
      }
    });
  });
}

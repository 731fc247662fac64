// Embedded test databases: an in-memory PGlite that starts as the migrated template (./templates.ts) and is given back
// when the test is done with it, emptied, for the next test of the process. A new one costs about 0.45 s of CPU (its
// WebAssembly memory, the dump unpacked into its file system); emptying one about 0.1 s. One whose schema a test
// changed (a trigger or a table of its own), that it left in a transaction, or that it closed, is not given back.
import { after } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { openPGliteInstance, pgliteDatabase, type Database } from '../../src/db/database.ts';
import { pgliteTemplate } from './templates.ts';

/** At most this many wait in a process for the next test: each holds 100-300 MB. */
const SPARES = 2;
const spares: PGlite[] = [];
/** The template's shape, and the statement that empties its tables: a database of the same shape has the same tables. */
let template: Promise<{ shape: string; truncate: string }> | null = null;

// Registered as this module is first imported, by a test file: a hook of the process's root test, run once every file
// of the process is done. A spare's PostgreSQL keeps timers of its own (statistics it reports when idle), which would
// keep the process alive.
after(async () => {
  await Promise.all(spares.splice(0).map((pglite) => pglite.close()));
});

/**
 * Everything of a database but its rows that a test could change: relations and their columns, constraints, triggers,
 * functions, types, schemas, extensions, roles and settings. Temporary objects are gone by the time it is read.
 */
const SHAPE = `
  WITH items AS (
    SELECT format('relation %s.%s %s', n.nspname, c.relname, c.relkind) AS item
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%temp\\_%'
    UNION ALL SELECT format('column %s.%s %s %s %s %s', c.relname, a.attname, a.atttypid, a.attnotnull, a.atthasdef, a.attisdropped)
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND a.attnum > 0
    UNION ALL SELECT format('constraint %s %s %s', conname, conrelid, contype) FROM pg_constraint
    UNION ALL SELECT format('trigger %s %s', tgname, tgenabled) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT format('function %s.%s %s', n.nspname, p.proname, md5(p.prosrc))
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT format('type %s', t.oid) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%temp\\_%'
    UNION ALL SELECT format('schema %s', nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%temp\\_%'
    UNION ALL SELECT format('extension %s %s', extname, extversion) FROM pg_extension
    UNION ALL SELECT format('role %s %s', rolname, rolsuper) FROM pg_roles
    UNION ALL SELECT format('setting %s %s %s', setdatabase, setrole, setconfig) FROM pg_db_role_setting
  )
  SELECT md5(string_agg(item, E'\\n' ORDER BY item)) AS shape FROM items`;

async function shapeOf(pglite: PGlite): Promise<string> {
  return (await pglite.query<{ shape: string }>(SHAPE)).rows[0]!.shape;
}

async function templateOf(pglite: PGlite): Promise<{ shape: string; truncate: string }> {
  const { rows } = await pglite.query<{ tables: string }>(
    `SELECT string_agg(format('%I', tablename), ', ') AS tables FROM pg_tables WHERE schemaname = 'public'`);
  return { shape: await shapeOf(pglite), truncate: `TRUNCATE ${rows[0]!.tables} RESTART IDENTITY` };
}

/** Empties `pglite` back to the template's state; false when it cannot be (the caller closes it). */
async function recycle(pglite: PGlite): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    // Session state: settings, prepared statements, LISTEN, advisory locks, temporary tables. It fails inside a
    // transaction, which a test that left one open leaves to be closed.
    await pglite.exec('DISCARD ALL');
    const { shape, truncate } = await template!;
    if (await shapeOf(pglite) !== shape) return false;
    await pglite.exec(truncate);
    return true;
  } catch {
    return false;
  }
}

/** An embedded test database, a spare one when the process has one; `drop` gives it back or closes it. */
export async function embeddedTestDatabase(): Promise<{ database: Database; drop(): Promise<void> }> {
  const pglite = spares.pop() ?? await openPGliteInstance({ databaseUrl: null, inMemory: true, loadDataDir: await pgliteTemplate() });
  await (template ??= templateOf(pglite));
  const base = pgliteDatabase(pglite);
  // What the test listens to is let go with it: a PGlite keeps its listeners for the next test otherwise.
  const listening = new Set<() => Promise<void>>();
  const database: Database = {
    ...base,
    async listen(channel, onMessage) {
      const unlisten = await base.listen(channel, onMessage);
      listening.add(unlisten);
      return async () => {
        listening.delete(unlisten);
        await unlisten();
      };
    },
  };
  let dropped = false;
  return {
    database,
    async drop() {
      if (dropped) return;
      dropped = true;
      for (const unlisten of listening) await unlisten().catch(() => {});
      if (spares.length < SPARES && await recycle(pglite)) spares.push(pglite);
      else if (!pglite.closed) await pglite.close();
    },
  };
}

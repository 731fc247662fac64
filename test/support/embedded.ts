// Embedded test databases: an in-memory PGlite that starts as the migrated template (./templates.ts) and is given back
// when the test is done with it, emptied, for the next test of the process. A new one costs about 0.45 s of CPU (its
// WebAssembly memory, the dump unpacked into its file system); emptying one a few milliseconds: the rows of the tables
// the test filled are deleted and the sequences it read restarted (a TRUNCATE of every table took 50-150 ms, for the
// new files of each table and index). One whose schema a test changed (a trigger or a table of its own), whose
// template rows (the migrations applied) it changed, that it left in a transaction, or that it closed, is not given
// back.
import { after } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { openPGliteInstance, pgliteDatabase, type Database } from '../../src/db/database.ts';
import { pgliteTemplate } from './templates.ts';

/** At most this many wait in a process for the next test: each holds 100-300 MB. */
const SPARES = 2;
const spares: PGlite[] = [];
/** The template as a test's database is compared with: a database of the same shape has the same tables. */
interface Template {
  shape: string;
  /**
   * One row: `cleanup`, the statements that undo what a test did to the rows (a DELETE for each table empty in the
   * template that holds rows now, an ALTER SEQUENCE … RESTART for each sequence read); `own`, a digest of the
   * template's own rows.
   */
  state: string;
  /** The value of `own` in the template. */
  own: string;
}
let template: Promise<Template> | null = null;

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

async function templateOf(pglite: PGlite): Promise<Template> {
  const { rows: tables } = await pglite.query<{ name: string }>(
    `SELECT format('%I', tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  const holdsRows = await Promise.all(tables.map(async ({ name }) =>
    (await pglite.query(`SELECT 1 FROM ${name} LIMIT 1`)).rows.length > 0));
  const empty = tables.filter((_, i) => !holdsRows[i]).map((t) => t.name);
  const filled = tables.filter((_, i) => holdsRows[i]).map((t) => t.name);
  const own = filled.length === 0 ? `''` : `md5(concat(${filled.map((name) =>
    `(SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM ${name} t)`).join(', ')}))`;
  const cleanup = [
    ...empty.map((name) => `SELECT 'DELETE FROM ${name}' WHERE EXISTS (SELECT 1 FROM ${name})`),
    `SELECT format('ALTER SEQUENCE %I.%I RESTART', schemaname, sequencename) FROM pg_sequences WHERE last_value IS NOT NULL`,
  ];
  const state = `SELECT ARRAY(${cleanup.join(' UNION ALL ')}) AS cleanup, ${own} AS own`;
  const { rows } = await pglite.query<{ cleanup: string[]; own: string }>(state);
  // A sequence the template had read would be restarted to its start, not to where the template left it.
  if (rows[0]!.cleanup.length > 0) throw new Error(`the test template is not what recycling makes of a database: ${rows[0]!.cleanup.join('; ')}`);
  return { shape: await shapeOf(pglite), state, own: rows[0]!.own };
}

/** Empties `pglite` back to the template's state; false when it cannot be (the caller closes it). */
async function recycle(pglite: PGlite): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    // Session state: settings, prepared statements, LISTEN, advisory locks, temporary tables. It fails inside a
    // transaction, which a test that left one open leaves to be closed.
    await pglite.exec('DISCARD ALL');
    const { shape, state, own } = await template!;
    if (await shapeOf(pglite) !== shape) return false;
    const now = (await pglite.query<{ cleanup: string[]; own: string }>(state)).rows[0]!;
    if (now.own !== own) return false;
    // As a replica applies rows: without the foreign keys' triggers, so the tables empty in any order.
    if (now.cleanup.length > 0) await pglite.exec(['SET session_replication_role = replica', ...now.cleanup, 'RESET session_replication_role', ''].join(';\n'));
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

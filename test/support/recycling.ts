// A test database given back when the test is done with it, emptied, for the next test of the process, rather than
// made anew: on PostgreSQL a CREATE DATABASE from the template and a DROP DATABASE cost the server 0.13-0.17 s of CPU
// (the pages written through the WAL, each backend told to let go of the dropped files), and an embedded database
// about 0.45 s (its WebAssembly memory, the dump unpacked into its file system). Emptying one costs a few
// milliseconds: the rows of the tables the test filled are deleted and the sequences it read restarted (a TRUNCATE of
// every table took 50-150 ms on PGlite, for the new files of each table and index). A database whose schema a test
// changed (a trigger or a table of its own), or whose template rows (the migrations applied) it changed, is not given
// back.

/** A session on the database being given back. */
export interface Session {
  rows<T>(text: string): Promise<T[]>;
  /** Statements separated by semicolons, without parameters. */
  exec(script: string): Promise<void>;
}

/**
 * Everything of a database but its rows that a test could change: relations and their columns, constraints, triggers,
 * functions, types, schemas, extensions, roles and the database's settings. Temporary objects are gone by the time it
 * is read. A copy of a template keeps the template's OIDs, on PostgreSQL as on PGlite.
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
    -- The settings of every database and role are one catalog on a server: those of this database, and of all.
    UNION ALL SELECT format('setting %s %s %s', setdatabase <> 0, setrole, setconfig) FROM pg_db_role_setting
      WHERE setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
  )
  SELECT md5(string_agg(item, E'\\n' ORDER BY item)) AS shape FROM items`;

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

async function shapeOf(session: Session): Promise<string> {
  return (await session.rows<{ shape: string }>(SHAPE))[0]!.shape;
}

async function templateOf(session: Session): Promise<Template> {
  const tables = await session.rows<{ name: string }>(
    `SELECT format('%I', tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  // One at a time: a PostgreSQL connection runs one statement at a time (pg warns of one given while another runs).
  const holdsRows: boolean[] = [];
  for (const { name } of tables) holdsRows.push((await session.rows(`SELECT 1 FROM ${name} LIMIT 1`)).length > 0);
  const empty = tables.filter((_, i) => !holdsRows[i]).map((t) => t.name);
  const filled = tables.filter((_, i) => holdsRows[i]).map((t) => t.name);
  const own = filled.length === 0 ? `''` : `md5(concat(${filled.map((name) =>
    `(SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM ${name} t)`).join(', ')}))`;
  const cleanup = [
    ...empty.map((name) => `SELECT 'DELETE FROM ${name}' WHERE EXISTS (SELECT 1 FROM ${name})`),
    `SELECT format('ALTER SEQUENCE %I.%I RESTART', schemaname, sequencename) FROM pg_sequences WHERE last_value IS NOT NULL`,
  ];
  const state = `SELECT ARRAY(${cleanup.join(' UNION ALL ')}) AS cleanup, ${own} AS own`;
  const [row] = await session.rows<{ cleanup: string[]; own: string }>(state);
  // A sequence the template had read would be restarted to its start, not to where the template left it.
  if (row!.cleanup.length > 0) throw new Error(`the test template is not what recycling makes of a database: ${row!.cleanup.join('; ')}`);
  return { shape: await shapeOf(session), state, own: row!.own };
}

/** Recycles the test databases of one backend in this process, all copies of one template. */
export class Recycler {
  #template: Promise<Template> | null = null;

  /** Whether the template is learnt, or being learnt. */
  get learnt(): boolean {
    return this.#template !== null;
  }

  /** Learns the template from `session`, on a database that is still a copy of it (the first one made). */
  async learn(session: Session): Promise<void> {
    await (this.#template ??= templateOf(session));
  }

  /**
   * Empties the database of `session` back to the template's state, with no other session on it; false when it
   * cannot be (the caller then drops or closes it).
   */
  async recycle(session: Session): Promise<boolean> {
    if (!this.#template) return false;
    try {
      const { shape, state, own } = await this.#template;
      if (await shapeOf(session) !== shape) return false;
      const [now] = await session.rows<{ cleanup: string[]; own: string }>(state);
      if (now!.own !== own) return false;
      // As a replica applies rows: without the foreign keys' triggers, so the tables empty in any order.
      if (now!.cleanup.length > 0) await session.exec(['SET session_replication_role = replica', ...now!.cleanup, 'RESET session_replication_role', ''].join(';\n'));
      return true;
    } catch {
      return false;
    }
  }
}

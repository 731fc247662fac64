// The database factory: a real PostgreSQL through `pg` when DATABASE_URL is set, embedded PGlite otherwise.
// Both speak the same SQL and share one set of migrations; the rest of the program sees only `Database`.
import { mkdir } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import { ConnectionQueue, PGliteDialect, PLAN_EACH_TIME_MARK } from './pglite-dialect.ts';
import { PgListener } from './pg-listener.ts';
import { WASM_TIERING_FLAG } from './wasm-tiering.ts';
import { migrate, type MigrationSession } from './migrate.ts';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { DB } from './schema.ts';
import { analyzeChangedTables } from './statistics.ts';

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  readonly kind: DatabaseKind;
  readonly db: Kysely<DB>;
  /** Calls `onMessage` for every NOTIFY on `channel`; resolves to a function that stops listening. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  /** Applies pending migrations; safe when several processes start at once. */
  migrate(): Promise<string[]>;
  /**
   * Brings the planner's statistics up to date where enough rows changed (./statistics.ts): on PGlite, which has no
   * autovacuum to do it; on PostgreSQL nothing, its autovacuum does. Returns the tables analyzed.
   */
  refreshStatistics(): Promise<string[]>;
  close(): Promise<void>;
}

// A DATE column is a calendar day, not an instant: keep it as 'YYYY-MM-DD' text.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

const PREPARE_MARK = '/* leadrun:prepare */';

/**
 * Put first in a hot statement (sql`${prepare}SELECT …`) to have PostgreSQL parse and plan it once per connection
 * instead of at every execution. Only for statements with a fixed text, with named result
 * columns, never `*` (a migration that adds a column must not change the row type of a statement already
 * prepared), and whose generic plan is as good as a custom one (it is always used). On PGlite it is a comment.
 */
export const prepare = sql.raw(`${PREPARE_MARK} `);

/**
 * Put first in a statement whose best plan depends on how large its tables are at the time (sql`${planEachTime}…`),
 * to have it planned at each execution. On PostgreSQL every statement not marked with `prepare` is; on PGlite, whose
 * connection keeps every statement prepared (./pglite-dialect.ts), a statement so marked is not. A kept statement
 * keeps the plan it was first given, until an ANALYZE of its tables (./statistics.ts) has it planned again.
 */
export const planEachTime = sql.raw(`${PLAN_EACH_TIME_MARK} `);

/**
 * A value written into a statement's text as an SQL literal, for a value its plan depends on. leadrun's PostgreSQL
 * connections plan every statement once for any values of its parameters (`plan_cache_mode=force_generic_plan`,
 * below), which suits a statement whose best plan does not depend on them; a search for a word is not one
 * (src/domain/leads/leads.ts): its words and its LIMIT are written into its text, and it is planned for them, in one round
 * trip, without a transaction that changes the setting.
 *
 * A text is quoted by the `pg` driver's escapeLiteral (quotes doubled; with a backslash, the E'…' form with every
 * backslash doubled), so that it reads the same whatever standard_conforming_strings says; a NUL character (which
 * PostgreSQL refuses in text anyway) is refused here. A number must be a safe integer.
 */
export function literal(value: string | number): RawBuilder<unknown> {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`literal: ${value} is not a safe integer`);
    return sql.raw(String(value));
  }
  if (value.includes('\0')) throw new Error('literal: a text with a NUL character');
  return sql.raw(pg.escapeLiteral(value));
}

const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `leadrun_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** A pg client that sends statements marked with `prepare` as named (prepared) statements. */
class PreparingClient extends pg.Client {
  // pg's query() has a dozen overloads; only (text, values) from Kysely is rewritten, the rest pass through.
  override query(...args: any[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && text.trimStart().startsWith(PREPARE_MARK)) {
      return super.query({ name: statementName(text), text, values });
    }
    return (super.query as (...rest: unknown[]) => unknown)(...args);
  }
}

export interface OpenOptions {
  databaseUrl: string | null;
  dataDir?: string;
  /** For PGlite tests: a data directory in memory. */
  inMemory?: boolean;
  /** For PGlite tests: start from this dump of a data directory (PGlite's dumpDataDir) instead of an empty one. */
  loadDataDir?: Blob;
  poolSize?: number;
  /** PostgreSQL: how long a query waits for a pool connection before it fails (DATABASE_POOL_WAIT_SECONDS). */
  poolWaitMs?: number;
  /** Called when the pool reports a lost connection, so the process can log it instead of crashing. */
  onPoolError?: (error: Error) => void;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPGlite(options);
}

async function openPostgres(url: string, options: OpenOptions): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.poolWaitMs ?? 5_000,
    Client: PreparingClient,
    // Only the statements marked with `prepare` are prepared, and each was checked to have a good generic plan. Left
    // to choose, PostgreSQL keeps planning a LIMIT $n statement at every execution, since its generic plan cannot
    // know n and is estimated dearer than the custom ones: the very cost preparing is meant to save.
    // Dates as pg parses them, whatever the server's default DateStyle.
    options: '-c plan_cache_mode=force_generic_plan -c DateStyle=ISO',
  });
  pool.on('error', (error) => options.onPoolError?.(error));
  // A connection lost while checked out (mid-query or mid-transaction) emits 'error' on its client, where pg-pool
  // has no listener then: unhandled, it would crash the process. The query fails on its own; the pool drops the client.
  pool.on('connect', (client) => client.on('error', (error) => options.onPoolError?.(error)));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const listener = new PgListener(url);

  return {
    kind: 'postgres',
    db,
    listen: (channel, onMessage) => listener.listen(channel, onMessage),
    async migrate() {
      const client = await pool.connect();
      try {
        const session: MigrationSession = {
          exec: async (script) => { await client.query(script); },
          query: async (text, params) => (await client.query(text, params)).rows,
        };
        return await migrate(session);
      } finally {
        client.release();
      }
    },
    refreshStatistics: async () => [],
    async close() {
      await listener.close();
      await db.destroy();
      // Kysely ends the pool only if it ever used it; `migrate` alone does not, and an idle pooled client keeps
      // the process alive for pg's idle timeout (10 s).
      if (!pool.ending) await pool.end();
    },
  };
}

async function openPGlite(options: OpenOptions): Promise<Database> {
  return pgliteDatabase(await openPGliteInstance(options));
}

/** PGlite with leadrun's settings and the extensions its migrations need, in memory or in `DATA_DIR/pgdata`. */
export async function openPGliteInstance(options: OpenOptions): Promise<PGlite> {
  // V8 runs PGlite's WebAssembly in baseline code first, and compiles a function again with its optimizing compiler
  // once it has run enough: its tiering budget, about 13 MB of code executed by default. Parsing a start's statements
  // uses that up in PostgreSQL's SQL parser, one function of 105 kB, whose optimized compile costs seconds of CPU and
  // hundreds of MB in a thread of V8's, which a command on DATA_DIR would wait for before it could exit. At 150 times
  // the default the start stays in baseline code, and what a busy server runs over and over still reaches it. bin/leadrun starts
  // Node with it (./wasm-tiering.ts); set here too for a process started otherwise, before PGlite's module is compiled.
  process.getBuiltinModule('node:v8').setFlagsFromString(WASM_TIERING_FLAG);
  // Loaded only for the embedded database: a server on PostgreSQL never holds it.
  const [{ PGlite }, { pg_trgm }, { unaccent }] = await Promise.all([
    import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm'), import('@electric-sql/pglite/contrib/unaccent'),
  ]);
  // The extensions lead search is built on (0008_lead_search.sql); PostgreSQL has them as contrib modules.
  const extensions = { pg_trgm, unaccent };
  const loaded = options.loadDataDir ? { loadDataDir: options.loadDataDir } : {};
  // PostgreSQL's buffer cache lives in PGlite's WebAssembly memory, which never gives a page back to the system once
  // touched: its default of 128 MB made most of an embedded server's resident memory after a few reads. The files
  // stay cached by the system beneath it, outside the process. Not smaller: a large import would then write evicted
  // index pages out on this thread, stalling it for a second or more.
  //
  // The trigram index of lead search (0008_lead_search.sql) takes new entries into a pending list, which the insert
  // that fills it past gin_pending_list_limit moves into the index, all of it, within that one statement: at the
  // default 4 MB, every 3,500 imported leads or so, one statement held this thread 70-150 ms longer than the others.
  // At 512 kB each move is an eighth of that. (PostgreSQL keeps the default: its statements stall no one else.)
  //
  // Statements are planned once for any values of their parameters, as on PostgreSQL (below): PGlite's connection keeps
  // them prepared (./pglite-dialect.ts), and a statement whose plan depends on its values writes them in (`literal`).
  const startParams = [
    ...PGlite.defaultStartParams, '-c', 'shared_buffers=64MB', '-c', 'gin_pending_list_limit=512kB', '-c', 'plan_cache_mode=force_generic_plan',
  ];
  if (options.inMemory) return PGlite.create({ extensions, startParams, ...loaded });
  if (!options.dataDir) throw new Error('openDatabase: dataDir is required for the embedded database');
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({ dataDir: `${options.dataDir}/pgdata`, extensions, startParams, ...loaded });
}

/** The `Database` over an embedded PGlite; its `close` closes the PGlite. */
export function pgliteDatabase(pglite: PGlite): Database {
  const queue = new ConnectionQueue();
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, queue) });

  return {
    kind: 'pglite',
    db,
    async listen(channel, onMessage) {
      const unlisten = await pglite.listen(channel, onMessage);
      return async () => { await unlisten(); };
    },
    async migrate() {
      return queue.run(() => migrate({
        exec: async (script) => { await pglite.exec(script); },
        query: async (text, params) => (await pglite.query<Record<string, unknown>>(text, params)).rows,
      }));
    },
    refreshStatistics: () => analyzeChangedTables(db),
    async close() {
      await db.destroy();
      await queue.run(() => pglite.close());
    },
  };
}

/** The database the configuration names, migrated unless `migrate` is false (the migrate command applies them itself). */
export async function openConfiguredDatabase(config: Config, logger: Logger, migrate = true): Promise<Database> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolWaitMs: config.databasePoolWaitMs,
    onPoolError: (error) => logger.warn({ err: error }, 'a database connection was lost'),
  });
  if (migrate) await database.migrate();
  return database;
}

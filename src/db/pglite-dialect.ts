// A Kysely dialect for PGlite. PGlite is one PostgreSQL session in this process, so there is exactly one
// connection: whoever holds it (a single query or a whole transaction) runs alone, and others wait in line.
import { messages, parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

const { serialize } = protocol;

/** A statement of the connection's own, parsed and planned once, and the types of its parameters. */
interface Prepared {
  name: string;
  types: number[];
}

/** Statements worth keeping: what Kysely builds, after any leading comment (`prepare`, src/db/database.ts). */
const PREPARABLE = /^\s*(?:\/\*[^*]*\*\/\s*)*(?:select|insert|update|delete|with)\b/i;
/**
 * The mark of a statement planned at each execution, as PostgreSQL plans every statement leadrun does not prepare:
 * one whose best plan depends on how large its tables are now (`planEachTime`, src/db/database.ts).
 */
export const PLAN_EACH_TIME_MARK = '/* leadrun:plan-each-time */';
/** Statements that let go of every prepared statement of the session. */
const FORGETS_STATEMENTS = /^\s*(?:discard|deallocate)\b/i;
/**
 * How many statements a connection keeps, the least recently used let go first: a bound on PostgreSQL's memory, which
 * PGlite never gives back. One let go is prepared again when next needed, for one more call. A search writes its words
 * into its text (`literal`), and each of those is one more statement, soon let go. (The tests of `test/http` and the
 * worker, their own queries included, prepare about 420 distinct statements in all, literals set apart.)
 */
const KEPT_STATEMENTS = 200;
let statementCount = 0;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The connection. PGlite's own `query` makes six calls into its WebAssembly for each statement (parse, describe,
 * bind, describe, execute, sync), and PostgreSQL parses and plans the statement every time. Here a statement Kysely
 * builds is prepared under a name the first time it is seen, and every later execution is one call: bind, describe,
 * execute, sync. That took a point lookup from about 250 to 55 µs of CPU. Its plan is
 * generic, as on PostgreSQL (plan_cache_mode=force_generic_plan, src/db/database.ts), where a plan that depends on
 * the values is written into the text (`literal`). Parameters are serialized as PGlite's `query` does, by the types
 * PostgreSQL gave them, and rows parsed by PGlite's own parsers.
 */
class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite;
  /** By text, the most recently used last. */
  readonly #statements = new Map<string, Prepared>();

  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const params = query.parameters as unknown[];
    let result;
    if (PREPARABLE.test(query.sql) && !query.sql.startsWith(PLAN_EACH_TIME_MARK)) {
      result = await this.#runPrepared(query.sql, params);
    } else if (params.length === 0) {
      // BEGIN, COMMIT, SET and the like: one call, and nothing to keep.
      result = parse.parseResults(await this.#exchange([
        serialize.parse({ text: query.sql }), serialize.bind({}), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync(),
      ]), this.#pglite.parsers)[0]!;
      if (FORGETS_STATEMENTS.test(query.sql)) this.#statements.clear();
    } else {
      result = await this.#pglite.query(query.sql, params);
    }
    return {
      rows: result.rows as R[],
      ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    };
  }

  async #runPrepared(text: string, params: unknown[], retried = false): Promise<Results> {
    const statement = this.#statements.get(text) ?? await this.#prepare(text);
    this.#statements.delete(text);
    this.#statements.set(text, statement);
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serializer = this.#pglite.serializers[statement.types[i]!];
      return serializer ? serializer(param) : String(param);
    });
    const replies = await this.#exchange([
      serialize.bind({ statement: statement.name, values: values as string[] }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync(),
    ], false);
    const error = replies.find((reply) => reply instanceof messages.DatabaseError);
    if (!error) return parse.parseResults(replies, this.#pglite.parsers)[0]!;
    // The statement no longer fits the schema (a column added to a table it reads with *), or the session let go of
    // it: prepared again and run once more, unless a transaction it was part of has failed with it.
    const stale = (error.code === '0A000' && /cached plan must not change result type/.test(error.message)) || error.code === '26000';
    if (stale) {
      this.#statements.delete(text);
      await this.#exchange([serialize.close({ type: 'S', name: statement.name }), serialize.sync()], false);
      const idle = replies.findLast((reply) => reply instanceof messages.ReadyForQueryMessage)?.status === 'I';
      if (idle && !retried) return this.#runPrepared(text, params, true);
    }
    throw error;
  }

  async #prepare(text: string): Promise<Prepared> {
    const name = `leadrun_${++statementCount}`;
    const oldest = this.#statements.size >= KEPT_STATEMENTS ? this.#statements.entries().next().value : undefined;
    if (oldest) this.#statements.delete(oldest[0]);
    const replies = await this.#exchange([
      ...(oldest ? [serialize.close({ type: 'S', name: oldest[1].name })] : []),
      serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync(),
    ]);
    return { name, types: parse.parseDescribeStatementResults(replies) };
  }

  /**
   * One call into PGlite, under its own lock (which its `query` and `listen` take too). Throws the first error, unless
   * asked to return it among the messages.
   */
  async #exchange(parts: Uint8Array[], throwOnError = true): Promise<messages.BackendMessage[]> {
    const message = concat(parts);
    return this.#pglite.runExclusive(async () => (await this.#pglite.execProtocol(message, { throwOnError })).messages);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not stream query results');
  }
}

/** A lock with a queue: the next waiter gets the connection when the holder releases it. */
export class ConnectionQueue {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => { release = resolve; });
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return ready;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

class PGliteDriver implements Driver {
  readonly #connection: PGliteConnection;
  readonly #queue: ConnectionQueue;
  readonly #releases = new WeakMap<DatabaseConnection, () => void>();

  constructor(pglite: PGlite, queue: ConnectionQueue) {
    this.#connection = new PGliteConnection(pglite);
    this.#queue = queue;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.#queue.acquire();
    this.#releases.set(this.#connection, release);
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const isolation = settings.isolationLevel ? ` ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}` : '';
    await connection.executeQuery(CompiledQuery.raw(`BEGIN${isolation}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const release = this.#releases.get(connection);
    this.#releases.delete(connection);
    release?.();
  }

  /** Once the connection is given back: a query or transaction still running finishes first. */
  async destroy(): Promise<void> {
    await this.#queue.run(async () => {});
  }
}

export class PGliteDialect implements Dialect {
  readonly #pglite: PGlite;
  readonly #queue: ConnectionQueue;
  constructor(pglite: PGlite, queue: ConnectionQueue) {
    this.#pglite = pglite;
    this.#queue = queue;
  }
  createAdapter() { return new PostgresAdapter(); }
  createDriver() { return new PGliteDriver(this.#pglite, this.#queue); }
  createIntrospector(db: Kysely<unknown>) { return new PostgresIntrospector(db); }
  createQueryCompiler() { return new PostgresQueryCompiler(); }
}

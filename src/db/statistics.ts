// The planner's statistics on the embedded database. PostgreSQL's autovacuum analyzes a table once enough of its rows
// have changed; PGlite has no autovacuum, so on an embedded installation nothing ever did: a table's statistics were
// those it was created with, and every statement was planned for the tables as they were when it was first prepared
// (src/db/pglite-dialect.ts keeps statements prepared, with generic plans). A dedupe import prepared on a workspace of
// a few thousand leads kept a plan that read every lead of the workspace for each batch of 250 rows: on a workspace
// of 150,000 leads, a 50,000-row import took 26 minutes, holding the one connection and the event loop. An ANALYZE
// records the tables as they are and makes PostgreSQL plan every statement that reads them again.
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/**
 * autovacuum's own rule, with its defaults: a table is analyzed again once more rows than 50 and a tenth of it have
 * been inserted, updated or deleted since the last time (autovacuum_analyze_threshold, _scale_factor).
 */
const CHANGED_ROWS = 50;
const CHANGED_SHARE = 0.1;

/**
 * The rows ANALYZE samples are 300 times this (default_statistics_target, 100 by default). On PGlite an ANALYZE runs on
 * the event loop's thread: at 100 it held it 220 ms for 150,000 leads, at 10 it held it 33 ms, and 3,000 sampled rows
 * tell the planner what it needs of leadrun's tables (how many rows, how many distinct workspaces and statuses).
 */
const STATISTICS_TARGET = 10;

/** Analyzes each table of leadrun's whose rows changed enough since its last analysis; returns their names. */
export async function analyzeChangedTables(db: Kysely<DB>): Promise<string[]> {
  // A session hands its counts of changed rows over to the statistics when it goes idle, at most once a second; the
  // embedded database's one session is asked to hand them over now, so that what was just written is counted.
  await sql`SELECT pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ table: string }>`
    SELECT s.relname AS table
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = 'public' AND s.n_mod_since_analyze > ${CHANGED_ROWS} + ${CHANGED_SHARE} * greatest(c.reltuples, 0)
    ORDER BY s.n_mod_since_analyze DESC`.execute(db);
  for (const { table } of rows) {
    // One table at a time, letting the event loop answer what came in between (a PGlite statement never does).
    await new Promise((resolve) => setImmediate(resolve));
    await db.transaction().execute(async (trx) => {
      await sql.raw(`SET LOCAL default_statistics_target = ${STATISTICS_TARGET}`).execute(trx);
      await sql`ANALYZE ${sql.table(table)}`.execute(trx);
    });
  }
  return rows.map((row) => row.table);
}

/** How often an embedded server looks for tables to analyze: autovacuum's own naptime. */
export const REFRESH_EVERY_MS = 60_000;

/**
 * Refreshes the statistics now and then every `everyMs`, never two at once; `stop` waits for one under way, so that
 * the database can be closed after it.
 */
export function refreshStatisticsEvery(
  refresh: () => Promise<string[]>, everyMs: number, onError: (error: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= refresh().then(() => {}, onError).finally(() => { running = null; });
  };
  tick();
  const timer = setInterval(tick, everyMs).unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

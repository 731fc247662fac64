// Numbered SQL migrations in migrations/, applied in order, forward only, each once.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface MigrationSession {
  /** Runs a script of several statements. */
  exec(script: string): Promise<void>;
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

const MIGRATIONS_DIR = path.join(import.meta.dirname, 'migrations');
// Any fixed number: every leadrun process that migrates takes this advisory lock, so they take turns.
const MIGRATION_LOCK = 7_361_204_551;

export async function migrationFiles(): Promise<{ version: number; name: string; file: string }[]> {
  const names = (await readdir(MIGRATIONS_DIR)).filter((n) => /^\d{4}_[a-z0-9_]+\.sql$/.test(n)).sort();
  return names.map((name) => ({ version: Number(name.slice(0, 4)), name, file: path.join(MIGRATIONS_DIR, name) }));
}

/** Applies every pending migration in one transaction; returns the names applied. */
export async function migrate(session: MigrationSession): Promise<string[]> {
  const files = await migrationFiles();
  await session.exec('BEGIN');
  try {
    await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await session.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await session.query('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
    const applied: string[] = [];
    for (const migration of files) {
      if (done.has(migration.version)) continue;
      await session.exec(await readFile(migration.file, 'utf8'));
      await session.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration.name);
    }
    await session.exec('COMMIT');
    return applied;
  } catch (error) {
    await session.exec('ROLLBACK').catch(() => {});
    throw error;
  }
}

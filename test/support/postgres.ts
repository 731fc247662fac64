// The test backends, and test databases on the PostgreSQL server the tests are given (TEST_PG_ADMIN_URL): made as
// copies of the migrated template (test/support/templates.ts) and dropped by the test that made them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseKind } from '../../src/db/database.ts';
import { postgresTemplate } from './templates.ts';

/** The backends every storage-touching test runs on; TEST_BACKENDS=pglite (or postgres) narrows it. */
export const BACKENDS: DatabaseKind[] = (process.env.TEST_BACKENDS ?? 'postgres,pglite')
  .split(',').map((s) => s.trim()).filter((s): s is DatabaseKind => s === 'postgres' || s === 'pglite');

export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const adminPools = new Map<string, pg.Pool>();

/**
 * Runs `text` on a connection of the process's own to the server at `adminUrl`, kept for the next: a test database
 * is made and dropped by two statements, and a connection of their own cost PostgreSQL a process each. Idle, the
 * connections never keep the process alive.
 */
async function adminQuery(adminUrl: string, text: string): Promise<void> {
  let pool = adminPools.get(adminUrl);
  if (!pool) {
    pool = new pg.Pool({ connectionString: adminUrl, max: 2, allowExitOnIdle: true });
    // A connection lost while idle (the server restarted) is dropped by the pool; the next statement opens another.
    pool.on('error', () => {});
    adminPools.set(adminUrl, pool);
  }
  await pool.query(text);
}

/**
 * A new database named `prefix_` and 12 random hex digits on the PostgreSQL server at `adminUrl` (the tests' and the
 * benchmark's): empty, or a copy of `template`. `drop` removes it, closing any session still on it.
 */
export async function createDatabaseOn(adminUrl: string, prefix: string, template?: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A new PostgreSQL test database (dropped by `drop`): empty, or a copy of `template`. */
export async function createPostgresDatabase(template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createDatabaseOn(PG_ADMIN_URL, 'leadrun_test', template);
}

/** A new PostgreSQL database migrated already: a copy of the test template (for a test about something else). */
export async function createMigratedPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return createPostgresDatabase(await postgresTemplate(PG_ADMIN_URL));
}

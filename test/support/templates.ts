// Migrated template databases. A test database starts as a copy of one made and migrated once per content of the
// migrations, instead of empty and then migrated: for PGlite, its initdb and the migrations take about 2.5 s of CPU,
// loading a dump of the migrated data directory about 0.3 s; for PostgreSQL, CREATE DATABASE … TEMPLATE copies the
// migrated schema. The PGlite dump is kept in node_modules/.cache for the test processes that follow.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { migrate, migrationFiles } from '../../src/db/migrate.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CACHE_DIR = path.join(ROOT, 'node_modules/.cache/leadrun-test');

/**
 * WAL segments of 1 MB instead of 16, and no spare ones kept at the checkpoint before the dump: the dump holds every
 * segment whole, and each test database that starts from it copies it in, in JavaScript. With the template databases
 * left out too (`withoutDirectories`), 42 MB became 15.
 */
const INITDB_PARAMS = ['--wal-segsize=1'];
const TEMPLATE_PARAMS = ['-c', 'min_wal_size=2MB', '-c', 'max_wal_size=2MB'];

let digest: Promise<string> | null = null;
let pgliteDump: Promise<{ file: string; dump: Blob }> | null = null;
const postgresTemplates = new Map<string, Promise<string>>();

/** What a template is made of: the migrations and the PGlite version that ran them. */
function templateDigest(): Promise<string> {
  digest ??= (async () => {
    const hash = createHash('sha256');
    const pglite = JSON.parse(await readFile(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
    hash.update(`pglite ${pglite.version} ${INITDB_PARAMS.join(' ')} ${TEMPLATE_PARAMS.join(' ')} without template0 and template1\n`);
    for (const migration of await migrationFiles()) hash.update(`${migration.name}\n`).update(await readFile(migration.file));
    return hash.digest('hex').slice(0, 16);
  })();
  return digest;
}

/** A dump of a migrated PGlite data directory, to start an embedded test database from. */
export async function pgliteTemplate(): Promise<Blob> {
  return (await pgliteDumpFile()).dump;
}

/**
 * Makes `DATA_DIR/pgdata` a migrated embedded database, for a `leadrun serve` started on `dataDir`: the dump is a tar
 * of the data directory, unpacked as it is.
 */
export async function seedDataDir(dataDir: string): Promise<void> {
  const { file } = await pgliteDumpFile();
  const pgdata = path.join(dataDir, 'pgdata');
  await mkdir(pgdata, { recursive: true, mode: 0o700 });
  await promisify(execFile)('tar', ['-xf', file, '-C', pgdata]);
}

function pgliteDumpFile(): Promise<{ file: string; dump: Blob }> {
  pgliteDump ??= (async () => {
    const file = path.join(CACHE_DIR, `pglite-${await templateDigest()}.tar`);
    try {
      return { file, dump: new Blob([await readFile(file)]) };
    } catch {
      // Not made yet: made here, and kept for the processes that follow.
    }
    const [{ PGlite }, { pg_trgm }, { unaccent }] = await Promise.all([
      import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm'), import('@electric-sql/pglite/contrib/unaccent'),
    ]);
    const pglite = await PGlite.create({
      extensions: { pg_trgm, unaccent }, initDbStartParams: INITDB_PARAMS, startParams: [...PGlite.defaultStartParams, ...TEMPLATE_PARAMS],
    });
    try {
      await migrate({
        exec: async (script) => { await pglite.exec(script); },
        query: async (text, params) => (await pglite.query<Record<string, unknown>>(text, params)).rows,
      });
      await pglite.exec('CHECKPOINT');
      // template0 and template1 are only ever copied by CREATE DATABASE, which a PGlite database never runs.
      const templates = await pglite.query<{ oid: number }>(`SELECT oid FROM pg_database WHERE datname IN ('template0', 'template1')`);
      const tar = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
      const kept = withoutDirectories(tar, templates.rows.map((row) => `base/${row.oid}`));
      await mkdir(CACHE_DIR, { recursive: true });
      // Written aside and renamed: a process reading the cache never sees half a file.
      const partial = `${file}.${randomBytes(4).toString('hex')}`;
      await writeFile(partial, kept);
      await rename(partial, file);
      return { file, dump: new Blob([kept]) };
    } finally {
      await pglite.close();
    }
  })();
  return pgliteDump;
}

/** A tar archive (ustar, as PGlite writes it) without the entries under any of `directories`. */
function withoutDirectories(tar: Buffer, directories: string[]): Buffer {
  const kept: Buffer[] = [];
  const text = (from: number, length: number, at: number) => tar.subarray(at + from, at + from + length).toString('latin1').replace(/\0[^]*$/, '');
  for (let at = 0; at + 512 <= tar.length;) {
    if (tar.subarray(at, at + 512).every((byte) => byte === 0)) break; // the archive's end
    const prefix = text(345, 155, at);
    const name = `${prefix ? `${prefix}/` : ''}${text(0, 100, at)}`.replace(/^\/+/, '');
    const size = Number.parseInt(text(124, 12, at).trim() || '0', 8);
    const length = 512 + Math.ceil(size / 512) * 512;
    if (!directories.some((dir) => name === dir || name.startsWith(`${dir}/`))) kept.push(tar.subarray(at, at + length));
    at += length;
  }
  return Buffer.concat([...kept, Buffer.alloc(1024)]);
}

async function adminQuery<T extends pg.QueryResultRow>(adminUrl: string, work: (client: pg.Client) => Promise<T[]>): Promise<T[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The name of a migrated PostgreSQL database to copy test databases from, made once by whichever test process asks
 * first (the others wait on an advisory lock); templates of other migrations made over a day before are dropped then.
 */
export function postgresTemplate(adminUrl: string): Promise<string> {
  let template = postgresTemplates.get(adminUrl);
  if (!template) {
    template = (async () => {
      const name = `leadrun_template_${await templateDigest()}`;
      await adminQuery(adminUrl, async (client) => {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', ['leadrun test templates']);
        const { rows } = await client.query<{ datname: string; made: string | null }>(`
          SELECT datname, shobj_description(oid, 'pg_database') AS made FROM pg_database WHERE datname LIKE 'leadrun\\_template\\_%'`);
        if (!rows.some((row) => row.datname === name)) {
          // Another checkout's tests may still copy a template of other migrations: only a day-old one goes.
          const stale = rows.filter((row) => !row.made || Date.parse(row.made) < Date.now() - 86_400_000);
          for (const old of stale) await client.query(`DROP DATABASE IF EXISTS ${old.datname} WITH (FORCE)`);
          await client.query(`CREATE DATABASE ${name}`);
          await client.query(`COMMENT ON DATABASE ${name} IS '${new Date().toISOString()}'`);
          const url = new URL(adminUrl);
          url.pathname = `/${name}`;
          const database = await openDatabase({ databaseUrl: url.toString() });
          try {
            await database.migrate();
          } catch (error) {
            await database.close();
            await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            throw error;
          }
          await database.close();
        }
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['leadrun test templates']);
        return [];
      });
      return name;
    })();
    postgresTemplates.set(adminUrl, template);
  }
  return template;
}

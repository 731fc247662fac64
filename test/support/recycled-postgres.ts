// PostgreSQL test databases for the tests' own apps: a copy of the migrated template, given back when the test is done
// with it, emptied (./recycling.ts), for the next test of the process; the spares left are dropped when the process's
// tests are done. A database some other session is still on when it is given back (a process the test started, say)
// is dropped, as one that cannot be emptied is.
import { setTimeout as sleep } from 'node:timers/promises';
import { after } from 'node:test';
import pg from 'pg';
import { createMigratedPostgresDatabase } from './postgres.ts';
import { Recycler, type Session } from './recycling.ts';

type Created = Awaited<ReturnType<typeof createMigratedPostgresDatabase>>;

/** At most this many wait in a process for the next test. */
const SPARES = 4;
const spares: Created[] = [];
const recycler = new Recycler();

// Registered as this module is first imported, by a test file: a hook of the process's root test, run once every file
// of the process is done.
after(async () => {
  await Promise.all(spares.splice(0).map((created) => created.drop()));
});

/** Runs `use` on a connection of its own to the database at `url`. */
async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function session(client: pg.Client): Session {
  return {
    rows: async <R>(text: string) => (await client.query(text)).rows as R[],
    exec: async (script: string) => { await client.query(script); },
  };
}

/** How many sessions besides `client`'s are on its database. */
async function others(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return rows[0]!.n;
}

/** Empties the database back to the template's state; false when it cannot be (the caller drops it). */
async function recycle(url: string): Promise<boolean> {
  try {
    return await withClient(url, async (client) => {
      // The test's own connections were closed before: their backends are gone within milliseconds.
      for (let wait = 0; await others(client) > 0; wait++) {
        if (wait === 20) return false;
        await sleep(10);
      }
      return recycler.recycle(session(client));
    });
  } catch {
    return false;
  }
}

/** A PostgreSQL test database, a spare one when the process has one; `drop` gives it back or drops it. */
export async function postgresTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const created = spares.pop() ?? await createMigratedPostgresDatabase();
  if (!recycler.learnt) await withClient(created.url, (client) => recycler.learn(session(client)));
  let dropped = false;
  return {
    url: created.url,
    async drop() {
      if (dropped) return;
      dropped = true;
      if (spares.length < SPARES && await recycle(created.url)) spares.push(created);
      else await created.drop();
    },
  };
}

// Embedded test databases: an in-memory PGlite that starts as the migrated template (./templates.ts) and is given back
// when the test is done with it, emptied (./recycling.ts), for the next test of the process. One that a test left in a
// transaction, or closed, is not given back.
import { after } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { openPGliteInstance, pgliteDatabase, type Database } from '../../src/db/database.ts';
import { Recycler, type Session } from './recycling.ts';
import { pgliteTemplate } from './templates.ts';

/** At most this many wait in a process for the next test: each holds 100-300 MB. */
const SPARES = 2;
const spares: PGlite[] = [];
const recycler = new Recycler();

// Registered as this module is first imported, by a test file: a hook of the process's root test, run once every file
// of the process is done. A spare's PostgreSQL keeps timers of its own (statistics it reports when idle), which would
// keep the process alive.
after(async () => {
  await Promise.all(spares.splice(0).map((pglite) => pglite.close()));
});

function session(pglite: PGlite): Session {
  return {
    rows: async <T>(text: string) => (await pglite.query<T>(text)).rows,
    exec: async (script: string) => { await pglite.exec(script); },
  };
}

/** Empties `pglite` back to the template's state; false when it cannot be (the caller closes it). */
async function recycle(pglite: PGlite): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    // Session state: settings, prepared statements, LISTEN, advisory locks, temporary tables. It fails inside a
    // transaction, which a test that left one open leaves to be closed.
    await pglite.exec('DISCARD ALL');
  } catch {
    return false;
  }
  return recycler.recycle(session(pglite));
}

/** An embedded test database, a spare one when the process has one; `drop` gives it back or closes it. */
export async function embeddedTestDatabase(): Promise<{ database: Database; drop(): Promise<void> }> {
  const pglite = spares.pop() ?? await openPGliteInstance({ databaseUrl: null, inMemory: true, loadDataDir: await pgliteTemplate() });
  await recycler.learn(session(pglite));
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
      // The test's database lets go of PGlite before the next test has it: a query the test's app still had running
      // ends first, and one it starts later is refused, instead of running in the next test's session (inside its
      // transaction, among its prepared statements).
      await base.db.destroy();
      for (const unlisten of listening) await unlisten().catch(() => {});
      if (spares.length < SPARES && await recycle(pglite)) spares.push(pglite);
      else if (!pglite.closed) await pglite.close();
    },
  };
}

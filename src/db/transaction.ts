// Runs `work` in a transaction: the caller's, when it is already in one, or a new one.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

export function inTransaction<T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<DB>) : db.transaction().execute(work);
}

// Runs work in a transaction, and runs it again when PostgreSQL ended it for a deadlock or a serialization failure.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

/** deadlock_detected and serialization_failure: PostgreSQL rolled the transaction back, and the same work may succeed. */
const CONFLICT_CODES = new Set(['40P01', '40001']);
export const CONFLICT_ATTEMPTS = 3;

/** True for an error with which PostgreSQL (pg's `code`, PGlite's alike) ended a transaction that can be tried again. */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONFLICT_CODES.has(code);
}

/**
 * Runs `work` in a transaction: the caller's, when it is already in one (only the owner of a transaction can retry
 * it), or a new one, tried up to CONFLICT_ATTEMPTS times while PostgreSQL ends it with a deadlock or a serialization
 * failure. Each try starts afresh, after a short random pause so that the two sides of a deadlock do not meet again
 * at once. So `work` must be safe to run again: whatever it does is in the transaction, and what it leaves in memory
 * is what it returns.
 */
export async function inTransaction<T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<DB>);
  return retryConflicts(() => db.transaction().execute(work));
}

/** Runs `work` (a transaction, or a statement on its own), again while PostgreSQL ends it with a conflict. */
export async function retryConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= CONFLICT_ATTEMPTS || !isTransactionConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

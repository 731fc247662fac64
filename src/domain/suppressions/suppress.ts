// The suppression list's write path (DESIGN §15): the one function every cause calls (an unsubscribe, a bounce, a
// reply asking to stop, a person, an import), inside the transaction that records the cause.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export type SuppressionReason = 'unsubscribed' | 'bounced' | 'complained' | 'manual' | 'imported';

export interface SuppressInput {
  workspaceId: string;
  email: string;
  reason: SuppressionReason;
  /** Where it came from: `unsubscribe_link`, `reply`, `bounce`, `api`, `ui`, `import`… */
  source: string;
  at: Date;
}

/** Suppresses the address in the workspace (idempotent) and stops its sequences. True when it was new. */
export async function suppressAddress(_trx: Kysely<DB>, _input: SuppressInput): Promise<boolean> {
  // The suppression list arrives with issue 43.
  return false;
}

// Bounces (DESIGN §15): the recipient's server refused an e-mail for good, at once (a 5xx to RCPT TO) or later by a
// delivery status notification (src/mail/dsn.ts). The delivery becomes BOUNCED (`draft.bounced`), the address is
// suppressed (`bounced`) and its sequences stop, in the caller's transaction.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { applyTransition, DELIVERY } from '../runs/lifecycle.ts';
import { suppressAddress } from './suppress.ts';

export interface Bounce {
  workspaceId: string;
  runId: string;
  deliveryId: string;
  /** The refused address. */
  email: string;
  /** What the server said: the reply line, or the DSN's status and diagnostic. */
  error: string;
  /** `smtp` (at send time) or `dsn`. */
  source: 'smtp' | 'dsn';
  at: Date;
}

/** Records a bounce; answers whether the delivery changed (a DSN read twice changes nothing the second time). */
export async function recordBounce(trx: Kysely<DB>, bounce: Bounce): Promise<boolean> {
  const changed = await applyTransition(trx, DELIVERY.bounce, {
    workspaceId: bounce.workspaceId, runId: bounce.runId, deliveryId: bounce.deliveryId, at: bounce.at,
    set: { error: bounce.error.slice(0, 1000) }, event: { error: bounce.error.slice(0, 1000) },
  });
  if (changed === 0) return false;
  await suppressAddress(trx, { workspaceId: bounce.workspaceId, email: bounce.email, reason: 'bounced', source: bounce.source === 'smtp' ? 'bounce' : 'dsn', at: bounce.at });
  return true;
}

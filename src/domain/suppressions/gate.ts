// Where the suppression list stops an e-mail (DESIGN §15): at approval (409 recipient_suppressed) and in the
// transaction that claims a delivery for sending, so that an address suppressed after the approval is never written to.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { applyTransition, DELIVERY } from '../runs/lifecycle.ts';
import { stopEnrolments } from '../sequences/stops.ts';
import { domainOf, lockAddress, lockWholeList, normalEmail, refuseSuppressed, suppressionOf } from './entries.ts';
import { missingIdentity, refuseIncomplete, senderIdentity } from './identity.ts';

export { refuseSuppressed };

/**
 * What an approval with delivery checks besides the transport (DESIGN §15): the workspace's sender identity is
 * complete (409 sender_incomplete), and the recipient is not suppressed (409 recipient_suppressed).
 */
export async function refuseUndeliverable(
  trx: Kysely<DB>, workspaceId: string, to: string | null,
  sender: { senderUserId: string | null; from: { name?: string | null; address: string } | null; postalAddress?: string | null | undefined },
): Promise<void> {
  const identity = await senderIdentity(trx, workspaceId, { mailPostalAddress: sender.postalAddress ?? null });
  const user = sender.senderUserId
    ? await trx.selectFrom('users').select(['name', 'sender_name']).where('id', '=', sender.senderUserId).executeTakeFirst()
    : undefined;
  // The name the e-mail will carry, as the delivery picks it (src/jobs/handlers/email-deliver.ts).
  const name = user?.sender_name?.trim() || user?.name?.trim() || sender.from?.name?.trim() || null;
  refuseIncomplete(missingIdentity(identity, { name, address: sender.from?.address ?? null }));
  await refuseSuppressed(trx, workspaceId, to);
}

export interface ClaimTarget {
  workspaceId: string;
  runId: string;
  deliveryId: string;
  leadId: string;
  to: string;
}

/**
 * The suppression list's part of a delivery's claim (src/jobs/handlers/email-deliver.ts), first in the claim's
 * transaction: takes a share of the whole list's lock (which an import holds alone), the address's and the domain's
 * locks, and reads the list, so an unsubscribe or import committed before the claim ends the delivery SUPPRESSED
 * unsent (with its run event, and its lead's sequence stopped), and one made after waits for the claim to commit.
 * Answers `clear` (the claim goes on), `suppressed`, or `gone` (the delivery had already ended).
 */
export async function suppressIfListed(trx: Kysely<DB>, target: ClaimTarget, at: Date): Promise<'clear' | 'suppressed' | 'gone'> {
  const email = normalEmail(target.to);
  await lockWholeList(trx, target.workspaceId, 'shared');
  await lockAddress(trx, target.workspaceId, email);
  await lockAddress(trx, target.workspaceId, `@${domainOf(email)}`);
  const entry = await suppressionOf(trx, target.workspaceId, email);
  if (!entry) return 'clear';
  const suppressed = await applyTransition(trx, DELIVERY.suppress, {
    workspaceId: target.workspaceId, runId: target.runId, deliveryId: target.deliveryId, at,
    set: { error: `Not sent: the ${entry.email ? 'address' : 'domain'} is on the suppression list (${entry.reason}).` },
    event: { error: entry.reason },
  });
  if (suppressed === 0) return 'gone';
  await stopEnrolments(trx, { workspaceId: target.workspaceId, leadId: target.leadId, reason: 'suppressed', at });
  return 'suppressed';
}

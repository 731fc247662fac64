// The suppression list's write path (DESIGN §15): the one function every cause calls (an unsubscribe, a bounce, a
// reply asking to stop, a person, an import), inside the transaction that records the cause.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { stopEnrolments, type SequenceStopReason } from '../sequences/stops.ts';
import { emitWebhookEvent } from '../webhooks/events.ts';
import { domainOf, lockAddress, normalEmail, toSuppression, type Suppression } from './entries.ts';

export type SuppressionReason = 'unsubscribed' | 'bounced' | 'complained' | 'manual' | 'imported';

export interface SuppressInput {
  workspaceId: string;
  email: string;
  reason: SuppressionReason;
  /** Where it came from: `unsubscribe_link`, `reply`, `bounce`, `api`, `ui`, `import`… */
  source: string;
  at: Date;
}

const STOP_REASON: Record<SuppressionReason, SequenceStopReason> = {
  unsubscribed: 'unsubscribed', bounced: 'bounced', complained: 'suppressed', manual: 'suppressed', imported: 'suppressed',
};

/** Suppresses the address in the workspace (idempotent) and stops its sequences. True when it was new. */
export async function suppressAddress(trx: Kysely<DB>, input: SuppressInput): Promise<boolean> {
  return (await addAddress(trx, input)) !== null;
}

/**
 * suppressAddress's work, answering the new entry (null when the address was on the list already). The address's
 * lock is the one a delivery's claim takes (gate.ts): an e-mail claimed after this commits is not sent.
 */
export async function addAddress(trx: Kysely<DB>, input: SuppressInput): Promise<Suppression | null> {
  const email = normalEmail(input.email);
  await lockAddress(trx, input.workspaceId, email);
  const row = await trx.insertInto('suppressions')
    .values({ id: randomUUID(), workspace_id: input.workspaceId, email, domain: null, reason: input.reason, source: input.source, created_at: input.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'email']).where('email', 'is not', null).doNothing())
    .returningAll().executeTakeFirst();
  await stopEnrolments(trx, { workspaceId: input.workspaceId, email, reason: STOP_REASON[input.reason], at: input.at });
  if (!row) return null;
  const entry = toSuppression(row);
  if (input.reason === 'unsubscribed') {
    await emitWebhookEvent(trx, input.workspaceId, 'recipient.unsubscribed', entry, { at: input.at });
  }
  return entry;
}

/** Suppresses every address at `domain` (idempotent). Answers the new entry, or null when it was there already. */
export async function addDomain(
  trx: Kysely<DB>, input: Omit<SuppressInput, 'email'> & { domain: string },
): Promise<Suppression | null> {
  const domain = input.domain.trim().toLowerCase();
  await lockAddress(trx, input.workspaceId, `@${domain}`);
  const row = await trx.insertInto('suppressions')
    .values({ id: randomUUID(), workspace_id: input.workspaceId, email: null, domain, reason: input.reason, source: input.source, created_at: input.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'domain']).where('domain', 'is not', null).doNothing())
    .returningAll().executeTakeFirst();
  // Sequences stop per address (stops.ts): each lead of the workspace at the domain.
  const leads = await trx.selectFrom('leads').select('email').distinct()
    .where('workspace_id', '=', input.workspaceId)
    .where(sql<boolean>`lower(split_part(email, '@', 2)) = ${domain}`).execute();
  for (const lead of leads) {
    if (lead.email && domainOf(lead.email) === domain) {
      await stopEnrolments(trx, { workspaceId: input.workspaceId, email: normalEmail(lead.email), reason: STOP_REASON[input.reason], at: input.at });
    }
  }
  return row ? toSuppression(row) : null;
}

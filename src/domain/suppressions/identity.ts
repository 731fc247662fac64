// The sender's identity (DESIGN §15): what every e-mail of a workspace carries besides the sender's name and address,
// the company's name (the workspace's name unless set) and, while the footer is on, its postal address (the
// workspace's, else MAIL_POSTAL_ADDRESS). A workspace delivers nothing until they are set: 409 sender_incomplete.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../errors.ts';

export interface SenderIdentity {
  companyName: string | null;
  postalAddress: string | null;
  footerEnabled: boolean;
  /** An address that takes unsubscribe requests by mail, for List-Unsubscribe's `mailto:`. */
  unsubscribeAddress: string | null;
}

export type IdentityField = 'senderName' | 'senderAddress' | 'companyName' | 'postalAddress';

export async function senderIdentity(db: Kysely<DB>, workspaceId: string, config: Pick<Config, 'mailPostalAddress'>): Promise<SenderIdentity> {
  const row = await db.selectFrom('workspaces as w')
    .leftJoin('mail_settings as m', 'm.workspace_id', 'w.id')
    .select(['w.name', 'm.company_name', 'm.postal_address', 'm.footer_enabled', 'm.unsubscribe_address'])
    .where('w.id', '=', workspaceId).executeTakeFirst();
  return {
    companyName: row?.company_name?.trim() || row?.name?.trim() || null,
    postalAddress: row?.postal_address?.trim() || config.mailPostalAddress?.trim() || null,
    footerEnabled: row?.footer_enabled ?? true,
    unsubscribeAddress: row?.unsubscribe_address?.trim() || null,
  };
}

/** What the identity lacks for the workspace to deliver: the sender's name and address, the company, the address. */
export function missingIdentity(identity: SenderIdentity, sender: { name: string | null; address: string | null }): IdentityField[] {
  const missing: IdentityField[] = [];
  if (!sender.name?.trim()) missing.push('senderName');
  if (!sender.address) missing.push('senderAddress');
  if (!identity.companyName) missing.push('companyName');
  if (identity.footerEnabled && !identity.postalAddress) missing.push('postalAddress');
  return missing;
}

/** Refuses (409 sender_incomplete, `missing` naming each field) a delivery from an incomplete identity. */
export function refuseIncomplete(missing: IdentityField[]): void {
  if (missing.length === 0) return;
  throw new AppError('sender_incomplete',
    `The workspace's sender identity lacks ${missing.join(', ')}: an admin sets ${missing.length === 1 ? 'it' : 'them'} in Settings / E-mail `
    + '(the postal address may come from MAIL_POSTAL_ADDRESS). Nothing was approved.', { extra: { missing } });
}

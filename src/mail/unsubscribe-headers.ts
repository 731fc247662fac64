// What every delivered e-mail carries for its recipient to stop (DESIGN §15): List-Unsubscribe with the one-click
// URL (and a mailto: when the workspace has an unsubscribe address), List-Unsubscribe-Post (RFC 8058, RFC 2369), and,
// while the footer is on, a plain-text footer with the company's name, its postal address and a line offering to stop.
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { senderIdentity, type SenderIdentity } from '../domain/suppressions/identity.ts';
import { unsubscribeToken } from '../domain/suppressions/tokens.ts';

export interface ConsentParts {
  /** Header name → value, as written (already in their final form: nodemailer does not touch them). */
  headers: Record<string, string>;
  footer: string | null;
}

/** The unsubscribe page's address for a token. */
export const unsubscribeUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/unsubscribe/${token}`;

/** RFC 8058's pair of headers: the HTTPS URL first, then the mailto: (RFC 2369 lets a client take either). */
export function unsubscribeHeaders(url: string, mailto: string | null, recipient: string): Record<string, string> {
  const targets = [`<${url}>`];
  if (mailto) targets.push(`<mailto:${mailto}?subject=${encodeURIComponent(`unsubscribe ${recipient}`)}>`);
  return { 'List-Unsubscribe': targets.join(', '), 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/** The footer's lines: the company and where it is, and how to stop. Null with the footer off. */
export function footerText(identity: SenderIdentity, url: string): string | null {
  if (!identity.footerEnabled) return null;
  const where = identity.postalAddress?.split(/\s*\r?\n\s*/).filter(Boolean).join(', ');
  return [
    [identity.companyName, where].filter(Boolean).join(', '),
    `If you would rather not hear from us again, reply "stop" or unsubscribe here: ${url}`,
  ].filter(Boolean).join('\n');
}

/** The headers and footer of an e-mail from the workspace to `to`, its token made on first use. */
export async function consentParts(
  db: Kysely<DB>, box: SecretBox, config: Pick<Config, 'publicUrl' | 'mailPostalAddress'>, workspaceId: string, to: string, at: Date,
): Promise<ConsentParts> {
  const identity = await senderIdentity(db, workspaceId, config);
  const url = unsubscribeUrl(config.publicUrl, await unsubscribeToken(db, box, workspaceId, to, at));
  return { headers: unsubscribeHeaders(url, identity.unsubscribeAddress, to), footer: footerText(identity, url) };
}

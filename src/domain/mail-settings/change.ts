// An admin's change to Settings / E-mail (DESIGN §7): the rules a change must meet beyond its schema's shape, the
// private-address guard on the servers it names, and what the audit entry says changed. Never a password in any of
// it: the audit says only that one was changed.
import { isIP } from 'node:net';
import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { DB, MailSettingsTable } from '../../db/schema.ts';
import type { AuditDetails } from '../audit/audit.ts';
import { AppError, type FieldError } from '../errors.ts';
import { oneLineProblem } from '../validation.ts';
import { AddressRefused, resolveMailHost } from './mail-host.ts';
import type { SecretBox } from '../secret-box.ts';
import {
  bindingOfChange, getMailSettingsView, keptPassword, saveMailSettings, type MailSettingsInput, type MailSettingsView,
} from './settings.ts';

export const HOST_MAX = 253;
export const FROM_NAME_MAX = 100;
export const DRAFTS_FOLDER_MAX = 200;
export const MAIL_USER_MAX = 320;
export const MAIL_PASSWORD_MAX = 1024;

// A DNS name (labels of letters, digits, hyphens and underscores, an optional final dot) or an IPv4 address.
const HOST_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** What is wrong with a host as typed, or null: the host alone, as the client dials it. */
export function hostNameProblem(host: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return 'must be the host name alone, without a scheme (mail.example.com, not smtp://mail.example.com)';
  if (/\s/.test(host)) return 'must not contain spaces';
  if (/^[^:]+:\d+$/.test(host)) return 'must not include the port; set the port in its own field';
  if (isIP(host.replace(/^\[(.*)\]$/, '$1'))) return null;
  if (!HOST_NAME.test(host)) return 'must be a host name like mail.example.com, or an IP address';
  return null;
}

/** The host as stored and dialled: an IPv6 address without its brackets. */
const normalHost = (host: string) => host.replace(/^\[(.*)\]$/, '$1');

/** Refuses a change that breaks a rule its schema cannot state, naming every field at fault. */
export function checkMailSettingsInput(input: MailSettingsInput, current: Selectable<MailSettingsTable> | undefined): void {
  const errors: FieldError[] = [];
  // The sender's name goes into the From header, the user into the SMTP conversation: one line each.
  const text = (field: string, value: string | null | undefined) => {
    const problem = value ? oneLineProblem(value) : null;
    if (problem) errors.push({ field, message: problem });
  };
  text('fromName', input.fromName);
  text('companyName', input.companyName);
  if (input.smtp) {
    const problem = hostNameProblem(input.smtp.host);
    if (problem) errors.push({ field: 'smtp.host', message: problem });
    text('smtp.user', input.smtp.user);
    const user = input.smtp.user !== undefined ? input.smtp.user || null : current?.smtp_user ?? null;
    if (input.smtp.password && !user) errors.push({ field: 'smtp.user', message: 'is required with a password' });
  }
  if (input.imap) {
    const problem = hostNameProblem(input.imap.host);
    if (problem) errors.push({ field: 'imap.host', message: problem });
    text('imap.user', input.imap.user);
    text('imap.draftsFolder', input.imap.draftsFolder);
    // IMAP always signs in: a mailbox is someone's. Without a user and password the settings could not be used.
    const binding = bindingOfChange(current, 'imap', input.imap);
    const kept = keptPassword(current, 'imap', binding);
    const password = input.imap.password !== undefined ? input.imap.password || null : kept;
    if (!binding.user) errors.push({ field: 'imap.user', message: 'is required: IMAP signs in to a mailbox' });
    if (!password) {
      // The saved password is bound to the server it was saved for: a change of server asks for it again.
      errors.push({
        field: 'imap.password',
        message: current?.imap_password && input.imap.password === undefined
          ? 'is required again: the saved password is sent only to the host, port, user and security it was saved with'
          : 'is required: IMAP signs in to a mailbox',
      });
    }
  }
  if (errors.length > 0) {
    throw new AppError('invalid_request', `The request is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, { errors });
  }
}

/**
 * Refuses servers on private, loopback or otherwise internal addresses unless ALLOW_PRIVATE_HOSTS is set, with the
 * guard's own words. A name that does not resolve now is let through: DNS may be down, and every connection is
 * guarded again when it is made.
 */
export async function refusePrivateMailHosts(input: MailSettingsInput, allowPrivateHosts: boolean): Promise<void> {
  if (allowPrivateHosts) return;
  const errors: FieldError[] = [];
  for (const [field, host] of [['smtp.host', input.smtp?.host], ['imap.host', input.imap?.host]] as const) {
    if (!host) continue;
    try {
      await resolveMailHost(normalHost(host), false);
    } catch (error) {
      if (!(error instanceof AddressRefused)) throw error;
      if (!error.unresolved) errors.push({ field, message: error.message });
    }
  }
  if (errors.length > 0) throw new AppError('invalid_request', errors.map((e) => e.message).join(' '), { errors });
}

type Row = Selectable<MailSettingsTable>;

const PARTS = {
  sender: ['from_name', 'from_address'],
  defaultDeliver: ['default_deliver'],
  identity: ['company_name', 'postal_address', 'footer_enabled', 'unsubscribe_address'],
  smtp: ['smtp_host', 'smtp_port', 'smtp_security', 'smtp_user', 'smtp_password'],
  imap: ['imap_host', 'imap_port', 'imap_security', 'imap_user', 'imap_password', 'imap_drafts_folder'],
} as const satisfies Record<string, ReadonlyArray<keyof Row>>;

/**
 * What the audit entry of a change says: which parts changed, whether SMTP and IMAP were added, changed or removed,
 * and whether a password was changed (a new ciphertext, or none any more), never which.
 */
export function describeMailSettingsChange(before: Row | undefined, after: Row | undefined): AuditDetails {
  const value = (row: Row | undefined, column: keyof Row) => row?.[column] ?? null;
  const differs = (columns: ReadonlyArray<keyof Row>) => columns.some((c) => value(before, c) !== value(after, c));
  const transport = (part: 'smtp' | 'imap') => {
    const had = value(before, `${part}_host`) !== null;
    const has = value(after, `${part}_host`) !== null;
    return !had && has ? 'added' : had && !has ? 'removed' : differs(PARTS[part]) ? 'changed' : 'unchanged';
  };
  const smtpPasswordChanged = value(before, 'smtp_password') !== value(after, 'smtp_password');
  const imapPasswordChanged = value(before, 'imap_password') !== value(after, 'imap_password');
  return {
    changed: (Object.keys(PARTS) as Array<keyof typeof PARTS>).filter((part) => differs(PARTS[part])).join(','),
    smtp: transport('smtp'),
    imap: transport('imap'),
    passwordChanged: smtpPasswordChanged || imapPasswordChanged,
    smtpPasswordChanged,
    imapPasswordChanged,
  };
}

async function readRowForUpdate(trx: Kysely<DB>, workspaceId: string): Promise<Row | undefined> {
  return trx.selectFrom('mail_settings').selectAll().where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
}

/**
 * Checks and saves a change (call inside a transaction; resolve hosts with refusePrivateMailHosts before it) and
 * answers the settings as they now are, with what the audit entry records.
 */
export async function changeMailSettings(
  trx: Kysely<DB>, workspaceId: string, input: MailSettingsInput,
  deps: { secrets: () => SecretBox; clock: Clock; config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailPostalAddress'> }, userId: string | null,
): Promise<{ view: MailSettingsView; details: AuditDetails }> {
  const before = await readRowForUpdate(trx, workspaceId);
  checkMailSettingsInput(input, before);
  const normal: MailSettingsInput = {
    ...input,
    ...(input.fromName !== undefined ? { fromName: input.fromName?.trim() || null } : {}),
    ...(input.fromAddress !== undefined ? { fromAddress: input.fromAddress?.trim() || null } : {}),
    ...(input.companyName !== undefined ? { companyName: input.companyName?.trim() || null } : {}),
    ...(input.postalAddress !== undefined ? { postalAddress: input.postalAddress?.trim() || null } : {}),
    ...(input.unsubscribeAddress !== undefined ? { unsubscribeAddress: input.unsubscribeAddress?.trim() || null } : {}),
    ...(input.smtp ? { smtp: { ...input.smtp, host: normalHost(input.smtp.host) } } : {}),
    ...(input.imap ? { imap: { ...input.imap, host: normalHost(input.imap.host) } } : {}),
  };
  // The key is read (or made, on the embedded default) only when a password is sealed.
  await saveMailSettings(trx, workspaceId, normal, deps.secrets, userId, deps.clock);
  const after = await readRowForUpdate(trx, workspaceId);
  return { view: await getMailSettingsView(trx, workspaceId, deps.config), details: describeMailSettingsChange(before, after) };
}

// A workspace's mail transport (DESIGN §7): what admins set in Settings / E-mail, with the installation's SMTP_URL and
// MAIL_FROM as the fallback for what a workspace leaves unset. Passwords are sealed (src/domain/secret-box.ts) before they are
// stored and opened only to talk to the server; the view an answer shows says whether one is set, never what it is.
// A stored password is bound to the host, port, user and security it was saved with (passwordAppliesTo): saving,
// the connection checks, the test e-mail, delivery and the reply check all go by that one rule.
import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { DB, MailSettingsTable, TlsMode } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import type { SecretBox } from '../secret-box.ts';

export type DeliverMethod = 'send' | 'mailbox' | 'none';

/**
 * How a client secures its connection: `tls` from the first byte, `starttls` required, `none` plain. SMTP_URL's
 * `smtp://` is `opportunistic`: STARTTLS when the server offers it, as mail clients do.
 */
export type Security = TlsMode | 'opportunistic';

export interface SmtpSettings {
  host: string;
  port: number;
  security: Security;
  user: string | null;
  password: string | null;
}

export interface ImapSettings {
  host: string;
  port: number;
  security: TlsMode;
  user: string;
  password: string;
  /** Where `mailbox` delivery saves drafts. */
  draftsFolder: string;
}

export interface Address {
  name: string | null;
  address: string;
}

/** Everything a delivery, a connection check or the reply check needs, passwords opened. */
export interface MailTransport {
  smtp: SmtpSettings | null;
  imap: ImapSettings | null;
  /** The workspace's sender; a person's own sender name replaces the name on e-mails sent in their name. */
  from: Address | null;
  /** What an approval without `deliver` does. */
  defaultDeliver: DeliverMethod;
  /** Whether SMTP comes from the workspace's settings or from SMTP_URL. */
  smtpSource: 'workspace' | 'installation' | null;
}

/** Settings / E-mail as an answer shows it: no password, only whether one is stored. */
export interface MailSettingsView {
  fromName: string | null;
  fromAddress: string | null;
  defaultDeliver: DeliverMethod | null;
  smtp: { host: string; port: number; security: TlsMode; user: string | null; passwordSet: boolean } | null;
  imap: { host: string; port: number; security: TlsMode; user: string | null; passwordSet: boolean; draftsFolder: string } | null;
  /** The sender's identity the footer carries (DESIGN §15), as stored: null where the fallback applies. */
  identity: { companyName: string | null; postalAddress: string | null; footerEnabled: boolean; unsubscribeAddress: string | null };
  /** What applies where the workspace sets nothing: SMTP_URL's server (without its credentials), MAIL_FROM and MAIL_POSTAL_ADDRESS. */
  installation: { smtp: { host: string; port: number } | null; from: Address | null; postalAddress: string | null };
  updatedAt: Date | null;
}

/**
 * A change to the settings. A password left out keeps the stored one while host, port, user and security stay as
 * they were saved, and is dropped when any of them changes; null removes it; `smtp: null` removes SMTP.
 */
export interface MailSettingsInput {
  fromName?: string | null;
  fromAddress?: string | null;
  defaultDeliver?: DeliverMethod | null;
  smtp?: { host: string; port: number; security: TlsMode; user?: string | null; password?: string | null } | null;
  imap?: { host: string; port: number; security: TlsMode; user?: string | null; password?: string | null; draftsFolder?: string | null } | null;
  /** The sender's identity (DESIGN §15), the footer's: left out, kept; null, the fallback. */
  companyName?: string | null;
  postalAddress?: string | null;
  footerEnabled?: boolean;
  unsubscribeAddress?: string | null;
}

/** The identity columns a change writes: what it gives, else what is stored. */
function identityOfChange(current: Selectable<MailSettingsTable> | undefined, input: MailSettingsInput) {
  const pick = <T>(given: T | undefined, stored: T): T => (given !== undefined ? given : stored);
  return {
    company_name: pick(input.companyName, current?.company_name ?? null),
    postal_address: pick(input.postalAddress, current?.postal_address ?? null),
    footer_enabled: pick(input.footerEnabled, current?.footer_enabled ?? true),
    unsubscribe_address: pick(input.unsubscribeAddress, current?.unsubscribe_address ?? null),
  };
}

export const DEFAULT_DRAFTS_FOLDER = 'Drafts';

type PasswordField = 'smtp_password' | 'imap_password';

/**
 * Where a stored password may be sent: the server (host and port), the user and the security it was saved with. A
 * password typed for one server must not reach another because an admin changed the port or the host and left the
 * password field alone, and one saved for TLS or STARTTLS must never cross a connection in clear text.
 */
export interface PasswordBinding {
  host: string;
  port: number;
  security: Security;
  user: string | null;
}

/** A host as a resolver sees it: without brackets around an IPv6 address, a final dot, or capitals. */
const hostKey = (host: string) => host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();

/**
 * Whether a password saved for `saved` may be sent to `target`: only when host, port, user and security are all the
 * same. The one rule for every path that would send a stored password; a change of any of them drops the password.
 */
export function passwordAppliesTo(saved: PasswordBinding, target: PasswordBinding): boolean {
  return hostKey(saved.host) === hostKey(target.host) && saved.port === target.port
    && saved.security === target.security && (saved.user || null) === (target.user || null);
}

/**
 * The ciphertext's context: the workspace, the field and what the password is bound to, so a sealed password opens
 * only in the row and field it was stored in, and only while the row names the server, user and security it was saved
 * for. A row changed behind the application's back (by hand, or by a path that forgot the rule) then cannot send it.
 */
const passwordContext = (workspaceId: string, field: PasswordField, binding: PasswordBinding) => {
  const boundTo = [hostKey(binding.host), binding.port, binding.security, binding.user || null];
  return `mail_settings:${workspaceId}:${field}:${JSON.stringify(boundTo)}`;
};

/**
 * The context of passwords sealed before they were bound to their server: they open for the row as it stands. Saving
 * the password again seals it under the bound context; a change of server drops it whichever context sealed it.
 */
const unboundPasswordContext = (workspaceId: string, field: PasswordField) => `mail_settings:${workspaceId}:${field}`;

/** SMTP_URL as settings: `smtps://` is TLS from the first byte (port 465), `smtp://` STARTTLS when offered (587). */
export function smtpFromUrl(smtpUrl: string): SmtpSettings {
  const url = new URL(smtpUrl);
  const tls = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : tls ? 465 : 587,
    security: tls ? 'tls' : 'opportunistic',
    user: url.username ? decodeURIComponent(url.username) : null,
    password: url.password ? decodeURIComponent(url.password) : null,
  };
}

/**
 * A stored password that does not open: sealed under another key (SECRETS_KEY changed, or DATA_DIR/secrets.key lost)
 * or for another workspace or field (a row copied by hand). Nothing can be sent with it until an admin saves the
 * password again; it is the admin's to fix, so it answers 409, never 500.
 */
export class MailSettingsUnreadable extends AppError {
  readonly field: 'smtp.password' | 'imap.password';

  constructor(field: 'smtp.password' | 'imap.password') {
    const which = field === 'smtp.password' ? 'SMTP' : 'IMAP';
    super('invalid_state', `The mail settings are unreadable: the stored ${which} password cannot be decrypted with this installation's `
      + `key (was SECRETS_KEY changed?). Save the password again in Settings / E-mail.`, { errors: [{ field, message: 'cannot be decrypted; save it again' }] });
    this.name = 'MailSettingsUnreadable';
    this.field = field;
  }
}

function openPassword(
  box: SecretBox, sealed: string, workspaceId: string, field: PasswordField, binding: PasswordBinding,
): string {
  for (const context of [passwordContext(workspaceId, field, binding), unboundPasswordContext(workspaceId, field)]) {
    try {
      return box.open(sealed, context);
    } catch {
      // Sealed under another context (or key): the next one is tried, and none opening makes the settings unreadable.
    }
  }
  throw new MailSettingsUnreadable(field === 'smtp_password' ? 'smtp.password' : 'imap.password');
}

/** What the row's SMTP or IMAP password is bound to, or null when the row has no such server. */
function bindingOf(row: Selectable<MailSettingsTable> | undefined, part: 'smtp' | 'imap'): PasswordBinding | null {
  const host = row?.[`${part}_host`];
  const port = row?.[`${part}_port`];
  const security = row?.[`${part}_security`];
  return host && port && security ? { host, port, security, user: row[`${part}_user`] } : null;
}

/**
 * The stored ciphertext a change of the SMTP or IMAP server keeps when it leaves the password out: the current one
 * when the change keeps host, port, user and security, else none. Saving and the check of a change both ask this.
 */
export function keptPassword(
  current: Selectable<MailSettingsTable> | undefined, part: 'smtp' | 'imap', next: PasswordBinding,
): string | null {
  const sealed = current?.[`${part}_password`] ?? null;
  const saved = bindingOf(current, part);
  return sealed !== null && saved !== null && passwordAppliesTo(saved, next) ? sealed : null;
}

async function readRow(db: Kysely<DB>, workspaceId: string): Promise<Selectable<MailSettingsTable> | undefined> {
  return db.selectFrom('mail_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/**
 * The transport a workspace's deliveries use: its own settings, then the installation's. Throws
 * MailSettingsUnreadable when a stored password does not open.
 */
export async function loadMailTransport(
  db: Kysely<DB>, workspaceId: string, box: SecretBox, config: Pick<Config, 'smtpUrl' | 'mailFrom'>,
): Promise<MailTransport> {
  const row = await readRow(db, workspaceId);
  let smtp: SmtpSettings | null = null;
  let smtpSource: MailTransport['smtpSource'] = null;
  if (row?.smtp_host && row.smtp_port && row.smtp_security) {
    smtp = {
      host: row.smtp_host, port: row.smtp_port, security: row.smtp_security, user: row.smtp_user,
      password: row.smtp_password === null
        ? null : openPassword(box, row.smtp_password, workspaceId, 'smtp_password', bindingOf(row, 'smtp')!),
    };
    smtpSource = 'workspace';
  } else if (config.smtpUrl) {
    smtp = smtpFromUrl(config.smtpUrl);
    smtpSource = 'installation';
  }
  const imap: ImapSettings | null = row?.imap_host && row.imap_port && row.imap_security && row.imap_user && row.imap_password
    ? {
      host: row.imap_host, port: row.imap_port, security: row.imap_security, user: row.imap_user,
      password: openPassword(box, row.imap_password, workspaceId, 'imap_password', bindingOf(row, 'imap')!),
      draftsFolder: row.imap_drafts_folder ?? DEFAULT_DRAFTS_FOLDER,
    }
    : null;
  const from: Address | null = row?.from_address
    ? { name: row.from_name, address: row.from_address }
    : config.mailFrom ?? (smtp?.user?.includes('@') ? { name: row?.from_name ?? null, address: smtp.user } : null);
  const defaultDeliver: DeliverMethod = row?.default_deliver ?? (smtp ? 'send' : imap ? 'mailbox' : 'none');
  return { smtp, imap, from, defaultDeliver, smtpSource };
}

export async function getMailSettingsView(
  db: Kysely<DB>, workspaceId: string, config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailPostalAddress'>,
): Promise<MailSettingsView> {
  const row = await readRow(db, workspaceId);
  const installationSmtp = config.smtpUrl ? smtpFromUrl(config.smtpUrl) : null;
  return {
    fromName: row?.from_name ?? null,
    fromAddress: row?.from_address ?? null,
    defaultDeliver: row?.default_deliver ?? null,
    smtp: row?.smtp_host && row.smtp_port && row.smtp_security
      ? { host: row.smtp_host, port: row.smtp_port, security: row.smtp_security, user: row.smtp_user, passwordSet: row.smtp_password !== null }
      : null,
    imap: row?.imap_host && row.imap_port && row.imap_security
      ? {
        host: row.imap_host, port: row.imap_port, security: row.imap_security, user: row.imap_user,
        passwordSet: row.imap_password !== null, draftsFolder: row.imap_drafts_folder ?? DEFAULT_DRAFTS_FOLDER,
      }
      : null,
    identity: {
      companyName: row?.company_name ?? null, postalAddress: row?.postal_address ?? null,
      footerEnabled: row?.footer_enabled ?? true, unsubscribeAddress: row?.unsubscribe_address ?? null,
    },
    installation: {
      smtp: installationSmtp && { host: installationSmtp.host, port: installationSmtp.port }, from: config.mailFrom,
      postalAddress: config.mailPostalAddress ?? null,
    },
    updatedAt: row?.updated_at ?? null,
  };
}

/**
 * What a change of the SMTP or IMAP server binds its password to: the host, port and security given, and the user
 * given or, when the change leaves it out, the stored one.
 */
export function bindingOfChange(
  current: Selectable<MailSettingsTable> | undefined, part: 'smtp' | 'imap',
  change: { host: string; port: number; security: TlsMode; user?: string | null },
): PasswordBinding {
  const user = change.user !== undefined ? change.user || null : current?.[`${part}_user`] ?? null;
  return { host: change.host, port: change.port, security: change.security, user };
}

/**
 * Writes a change to the settings (validated by the caller's schema). Call inside a transaction: the row is read
 * for update so that a password left out keeps the stored ciphertext, as long as the change keeps the host, port,
 * user and security it was saved with; a change of any of them drops it. `box` may be given as a function, called
 * only when a password is sealed: a change without one then needs no key.
 */
export async function saveMailSettings(
  trx: Kysely<DB>, workspaceId: string, input: MailSettingsInput, box: SecretBox | (() => SecretBox), userId: string | null, clock: Clock,
): Promise<void> {
  const current = await trx.selectFrom('mail_settings').selectAll().where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
  const password = (part: 'smtp' | 'imap', change: NonNullable<MailSettingsInput['smtp' | 'imap']>): string | null => {
    const binding = bindingOfChange(current, part, change);
    if (change.password === undefined) return keptPassword(current, part, binding);
    if (change.password === null || change.password === '') return null;
    const context = passwordContext(workspaceId, `${part}_password`, binding);
    return (typeof box === 'function' ? box() : box).seal(change.password, context);
  };
  const row: Selectable<MailSettingsTable> = {
    workspace_id: workspaceId,
    from_name: input.fromName !== undefined ? input.fromName : current?.from_name ?? null,
    from_address: input.fromAddress !== undefined ? input.fromAddress : current?.from_address ?? null,
    default_deliver: input.defaultDeliver !== undefined ? input.defaultDeliver : current?.default_deliver ?? null,
    smtp_host: current?.smtp_host ?? null, smtp_port: current?.smtp_port ?? null, smtp_security: current?.smtp_security ?? null,
    smtp_user: current?.smtp_user ?? null, smtp_password: current?.smtp_password ?? null,
    imap_host: current?.imap_host ?? null, imap_port: current?.imap_port ?? null, imap_security: current?.imap_security ?? null,
    imap_user: current?.imap_user ?? null, imap_password: current?.imap_password ?? null, imap_drafts_folder: current?.imap_drafts_folder ?? null,
    ...identityOfChange(current, input),
    updated_at: clock.now(),
    updated_by_user_id: userId,
  };
  if (input.smtp === null) {
    Object.assign(row, { smtp_host: null, smtp_port: null, smtp_security: null, smtp_user: null, smtp_password: null });
  } else if (input.smtp) {
    Object.assign(row, {
      smtp_host: input.smtp.host, smtp_port: input.smtp.port, smtp_security: input.smtp.security,
      smtp_user: bindingOfChange(current, 'smtp', input.smtp).user,
      smtp_password: password('smtp', input.smtp),
    });
  }
  if (input.imap === null) {
    Object.assign(row, { imap_host: null, imap_port: null, imap_security: null, imap_user: null, imap_password: null, imap_drafts_folder: null });
  } else if (input.imap) {
    Object.assign(row, {
      imap_host: input.imap.host, imap_port: input.imap.port, imap_security: input.imap.security,
      imap_user: bindingOfChange(current, 'imap', input.imap).user,
      imap_password: password('imap', input.imap),
      imap_drafts_folder: input.imap.draftsFolder !== undefined ? input.imap.draftsFolder || null : row.imap_drafts_folder,
    });
  }
  const { workspace_id: _id, ...changes } = row;
  await trx.insertInto('mail_settings').values(row)
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(changes))
    .execute();
}

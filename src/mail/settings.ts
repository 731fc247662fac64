// A workspace's mail transport (DESIGN §7): what admins set in Settings / E-mail, with the installation's SMTP_URL and
// MAIL_FROM as the fallback for what a workspace leaves unset. Passwords are sealed (secrets.ts) before they are
// stored and opened only to talk to the server; the view an answer shows says whether one is set, never what it is.
import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB, MailSettingsTable, TlsMode } from '../db/schema.ts';
import { AppError } from '../domain/errors.ts';
import type { SecretBox } from './secrets.ts';

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
  /** What applies where the workspace sets nothing: SMTP_URL's server (without its credentials) and MAIL_FROM. */
  installation: { smtp: { host: string; port: number } | null; from: Address | null };
  updatedAt: Date | null;
}

/** A change to the settings. A password left out keeps the stored one; null removes it; `smtp: null` removes SMTP. */
export interface MailSettingsInput {
  fromName?: string | null;
  fromAddress?: string | null;
  defaultDeliver?: DeliverMethod | null;
  smtp?: { host: string; port: number; security: TlsMode; user?: string | null; password?: string | null } | null;
  imap?: { host: string; port: number; security: TlsMode; user?: string | null; password?: string | null; draftsFolder?: string | null } | null;
}

export const DEFAULT_DRAFTS_FOLDER = 'Drafts';

/** The ciphertext's context: the workspace and the field, so a sealed password opens only where it was stored. */
const passwordContext = (workspaceId: string, field: 'smtp_password' | 'imap_password') => `mail_settings:${workspaceId}:${field}`;

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

function openPassword(box: SecretBox, sealed: string, workspaceId: string, field: 'smtp_password' | 'imap_password'): string {
  try {
    return box.open(sealed, passwordContext(workspaceId, field));
  } catch {
    throw new MailSettingsUnreadable(field === 'smtp_password' ? 'smtp.password' : 'imap.password');
  }
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
      password: row.smtp_password === null ? null : openPassword(box, row.smtp_password, workspaceId, 'smtp_password'),
    };
    smtpSource = 'workspace';
  } else if (config.smtpUrl) {
    smtp = smtpFromUrl(config.smtpUrl);
    smtpSource = 'installation';
  }
  const imap: ImapSettings | null = row?.imap_host && row.imap_port && row.imap_security && row.imap_user && row.imap_password
    ? {
      host: row.imap_host, port: row.imap_port, security: row.imap_security, user: row.imap_user,
      password: openPassword(box, row.imap_password, workspaceId, 'imap_password'),
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
  db: Kysely<DB>, workspaceId: string, config: Pick<Config, 'smtpUrl' | 'mailFrom'>,
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
    installation: { smtp: installationSmtp && { host: installationSmtp.host, port: installationSmtp.port }, from: config.mailFrom },
    updatedAt: row?.updated_at ?? null,
  };
}

/**
 * Writes a change to the settings (validated by the caller's schema). Call inside a transaction: the row is read
 * for update so that a password left out keeps the stored ciphertext. `box` may be given as a function, called only
 * when a password is sealed: a change without one then needs no key.
 */
export async function saveMailSettings(
  trx: Kysely<DB>, workspaceId: string, input: MailSettingsInput, box: SecretBox | (() => SecretBox), userId: string | null, clock: Clock,
): Promise<void> {
  const current = await trx.selectFrom('mail_settings').selectAll().where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
  const seal = (password: string | null | undefined, field: 'smtp_password' | 'imap_password'): string | null =>
    password === undefined ? current?.[field] ?? null : password === null || password === ''
      ? null : (typeof box === 'function' ? box() : box).seal(password, passwordContext(workspaceId, field));
  const row: Selectable<MailSettingsTable> = {
    workspace_id: workspaceId,
    from_name: input.fromName !== undefined ? input.fromName : current?.from_name ?? null,
    from_address: input.fromAddress !== undefined ? input.fromAddress : current?.from_address ?? null,
    default_deliver: input.defaultDeliver !== undefined ? input.defaultDeliver : current?.default_deliver ?? null,
    smtp_host: current?.smtp_host ?? null, smtp_port: current?.smtp_port ?? null, smtp_security: current?.smtp_security ?? null,
    smtp_user: current?.smtp_user ?? null, smtp_password: current?.smtp_password ?? null,
    imap_host: current?.imap_host ?? null, imap_port: current?.imap_port ?? null, imap_security: current?.imap_security ?? null,
    imap_user: current?.imap_user ?? null, imap_password: current?.imap_password ?? null, imap_drafts_folder: current?.imap_drafts_folder ?? null,
    updated_at: clock.now(),
    updated_by_user_id: userId,
  };
  if (input.smtp === null) {
    Object.assign(row, { smtp_host: null, smtp_port: null, smtp_security: null, smtp_user: null, smtp_password: null });
  } else if (input.smtp) {
    Object.assign(row, {
      smtp_host: input.smtp.host, smtp_port: input.smtp.port, smtp_security: input.smtp.security,
      smtp_user: input.smtp.user !== undefined ? input.smtp.user || null : row.smtp_user,
      smtp_password: seal(input.smtp.password, 'smtp_password'),
    });
  }
  if (input.imap === null) {
    Object.assign(row, { imap_host: null, imap_port: null, imap_security: null, imap_user: null, imap_password: null, imap_drafts_folder: null });
  } else if (input.imap) {
    Object.assign(row, {
      imap_host: input.imap.host, imap_port: input.imap.port, imap_security: input.imap.security,
      imap_user: input.imap.user !== undefined ? input.imap.user || null : row.imap_user,
      imap_password: seal(input.imap.password, 'imap_password'),
      imap_drafts_folder: input.imap.draftsFolder !== undefined ? input.imap.draftsFolder || null : row.imap_drafts_folder,
    });
  }
  const { workspace_id: _id, ...changes } = row;
  await trx.insertInto('mail_settings').values(row)
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(changes))
    .execute();
}

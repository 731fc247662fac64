// The sender's own mailbox over IMAP (DESIGN §7), through imapflow: `mailbox` delivery saves an approved e-mail as a
// draft there, the reply check reads its inbox, and Settings / E-mail checks the connection. The server is reached
// only at the address the mail-host guard approved; TLS still checks the certificate against the configured name.
import { isIP } from 'node:net';
import type { ImapFlow, ListResponse } from 'imapflow';
import { AddressRefused, resolveMailHost } from '../domain/mail-settings/mail-host.ts';
import type { ImapSettings } from '../domain/mail-settings/settings.ts';
import { attemptFailure, isAttemptFailure, PermanentError, RetryableError } from '../jobs/errors.ts';

export interface ImapOptions {
  allowPrivateHosts: boolean;
  signal?: AbortSignal;
  /**
   * Certificates (PEM) to trust besides the system's, for a server whose certificate no public authority signed.
   * Tests pass their self-signed one here; an installation trusts an intranet authority with NODE_EXTRA_CA_CERTS.
   */
  ca?: string;
}

const CONNECT_TIMEOUT_MS = 15_000;
const SOCKET_TIMEOUT_MS = 60_000;

/** An authenticated connection; close it with `client.logout()` (or `close()` after an error). */
export async function connectImap(settings: ImapSettings, options: ImapOptions): Promise<ImapFlow> {
  options.signal?.throwIfAborted();
  let address: string;
  try {
    address = await resolveMailHost(settings.host, options.allowPrivateHosts);
  } catch (error) {
    throw new RetryableError(error instanceof AddressRefused ? error.message : `Could not resolve ${settings.host}.`);
  }
  const name = settings.host.replace(/\.$/, '').replace(/^\[|\]$/g, '');
  // Loaded by the first connection, not by every process that starts (docs/PERFORMANCE.md, Memory).
  const imapflow = await import('imapflow');
  const client = new imapflow.ImapFlow({
    host: address,
    port: settings.port,
    secure: settings.security === 'tls',
    // `none` means plain: a server that offers STARTTLS is not taken up on it, as the admin chose.
    doSTARTTLS: settings.security === 'starttls' ? true : settings.security === 'none' ? false : undefined,
    ...(isIP(name) ? {} : { servername: name }),
    tls: { ...(isIP(name) ? {} : { servername: name }), ...(options.ca ? { ca: options.ca } : {}), minVersion: 'TLSv1.2' },
    auth: { user: settings.user, pass: settings.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    clientInfo: { name: 'leadrun' },
    // A hostile server must not make us hold more than this in memory for one answer.
    maxLiteralSize: 16 * 1024 * 1024,
    maxResponseSize: 32 * 1024 * 1024,
    maxLineLength: 8 * 1024 * 1024,
  });
  // imapflow reports a dropped connection as an event too; the failing command already says so.
  client.on('error', () => {});
  const abort = () => client.close();
  options.signal?.addEventListener('abort', abort, { once: true });
  client.once('close', () => options.signal?.removeEventListener('abort', abort));
  try {
    await client.connect();
  } catch (error) {
    client.close();
    options.signal?.throwIfAborted();
    // A refused password is permanent: repeated tries can get the account locked.
    throw attemptFailure(describeImapError(error, settings), (error as { authenticationFailed?: boolean }).authenticationFailed === true);
  }
  return client;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO',
  'ERR_SSL_UNSUPPORTED_PROTOCOL', 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', 'ClosedAfterConnectTLS',
]);

/** What went wrong, for an admin: never the password, never a stack. */
export function describeImapError(error: unknown, settings: Pick<ImapSettings, 'host' | 'port' | 'security'>): string {
  if (isAttemptFailure(error)) return error.message;
  const e = error as { code?: string; authenticationFailed?: boolean; message?: string; responseText?: string; reason?: string };
  const where = `${settings.host}:${settings.port}`;
  if (e?.authenticationFailed) return 'The server refused the user name or password.';
  switch (e?.code) {
    case 'ECONNREFUSED': return `Nothing answered at ${where}: the connection was refused.`;
    case 'ECONNRESET': return `${where} closed the connection.`;
    case 'EHOSTUNREACH': case 'ENETUNREACH': return `${where} cannot be reached from here.`;
    case 'CONNECT_TIMEOUT': case 'GREETING_TIMEOUT': case 'ETIMEDOUT': case 'ETIMEOUT': case 'UPGRADE_TIMEOUT':
      return `${where} did not answer in time.`;
    case 'ENOTFOUND': case 'EAI_AGAIN': return `Could not resolve ${settings.host}.`;
    case 'ClosedAfterConnectText':
      return `${where} closed the connection before it greeted${settings.security === 'tls' ? '' : ': does it expect TLS from the first byte?'}`;
  }
  if (e?.code && TLS_CODES.has(e.code)) {
    const detail = e.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || e.code === 'EPROTO' || e.code === 'ClosedAfterConnectTLS'
      ? 'the server does not speak TLS on this port (try STARTTLS, or the TLS port)'
      : e.code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? `its certificate is not for ${settings.host}`
      : e.code === 'CERT_HAS_EXPIRED' ? 'its certificate has expired'
      : 'its certificate is not signed by an authority this installation trusts';
    return `The TLS connection to ${where} failed: ${detail}.`;
  }
  const text = `${e?.message ?? ''} ${e?.responseText ?? ''}`;
  if (/STARTTLS/i.test(text)) return `${where} does not offer STARTTLS; choose TLS or (only on a trusted network) no encryption.`;
  if (/certificate|ssl|tls/i.test(text)) return `The TLS connection to ${where} failed.`;
  return `The IMAP conversation with ${where} failed${e?.responseText ? `: ${e.responseText.slice(0, 200)}` : '.'}`;
}

/** The folder drafts go to: the configured one when it exists, else the one the server marks \Drafts. */
export async function resolveDraftsFolder(client: ImapFlow, configured: string): Promise<string | null> {
  const folders: ListResponse[] = await client.list();
  const named = folders.find((f) => f.path === configured)
    ?? folders.find((f) => f.path.toLowerCase() === configured.toLowerCase());
  if (named && !named.flags.has('\\Noselect')) return named.path;
  return folders.find((f) => f.specialUse === '\\Drafts')?.path ?? null;
}

async function withClient<T>(settings: ImapSettings, options: ImapOptions, work: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = await connectImap(settings, options);
  try {
    const result = await work(client);
    await client.logout().catch(() => client.close());
    return result;
  } catch (error) {
    client.close();
    options.signal?.throwIfAborted();
    throw isAttemptFailure(error) ? error : new RetryableError(describeImapError(error, settings));
  }
}

/** Signs in and finds the Drafts folder, as "Check connection" in Settings / E-mail does. */
export async function verifyImap(settings: ImapSettings, options: ImapOptions): Promise<{ ok: true } | { ok: false; error: string }> {
  try {
    await withClient(settings, options, async (client) => {
      if (await resolveDraftsFolder(client, settings.draftsFolder) === null) {
        throw new RetryableError(`Signed in, but there is no folder "${settings.draftsFolder}" and none marked as the Drafts folder.`);
      }
    });
    return { ok: true };
  } catch (error) {
    options.signal?.throwIfAborted();
    return { ok: false, error: describeImapError(error, settings) };
  }
}

/** The Message-ID as it appears between angle brackets in a header. */
export function bracketed(messageId: string): string {
  const bare = messageId.trim().replace(/^<|>$/g, '');
  return `<${bare}>`;
}

/**
 * Saves the message as a draft (`\Draft`) in the sender's Drafts folder. A message with this Message-ID already
 * there is not saved again: a retry after a crash between the APPEND and the commit that records it finds it and
 * answers as the first attempt did. Throws RetryableError or PermanentError, in words for an admin.
 */
export async function appendDraft(
  imap: ImapSettings, raw: Buffer, messageId: string, options: { allowPrivateHosts: boolean; signal?: AbortSignal; ca?: string },
): Promise<{ response: string }> {
  const id = bracketed(messageId);
  return withClient(imap, options, async (client) => {
    const folder = await resolveDraftsFolder(client, imap.draftsFolder);
    if (folder === null) throw new PermanentError(`There is no folder "${imap.draftsFolder}" and none marked as the Drafts folder.`);
    const lock = await client.getMailboxLock(folder);
    try {
      const found = await client.search({ header: { 'Message-ID': id } }, { uid: true });
      if (found && found.length > 0) return { response: `already in ${folder} (UID ${Math.min(...found)})` };
      const appended = await client.append(folder, raw, ['\\Draft', '\\Seen']);
      if (!appended) throw new RetryableError(`The server did not save the draft in ${folder}.`);
      return { response: `saved in ${appended.destination}${appended.uid ? ` (UID ${appended.uid})` : ''}` };
    } finally {
      lock.release();
    }
  });
}

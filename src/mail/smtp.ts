// Talking to an SMTP server through nodemailer: the host resolved once through the private-address guard and dialled
// by address (TLS still checks the name), the workspace's TLS mode, and errors told apart as a delivery needs them:
// a 5xx answer is final, a 4xx answer or a broken connection is worth another try.
import { isIP } from 'node:net';
import { asciiDomain } from '../domain/validation.ts';
import { AddressRefused, resolveMailHost } from '../domain/mail-settings/mail-host.ts';
import type { SmtpSettings } from '../domain/mail-settings/settings.ts';
import { attemptFailure, isAttemptFailure, PermanentError, RetryableError } from '../jobs/errors.ts';

const TIMEOUT_MS = 30_000;

export interface SmtpOptions {
  allowPrivateHosts: boolean;
  /**
   * Certificates to trust besides the system's, for a server with a private CA. Operators set NODE_EXTRA_CA_CERTS,
   * which Node reads at start; tests, which cannot, pass their self-signed certificate here.
   */
  extraCa?: string | null;
  signal?: AbortSignal;
}

/** The server refused the recipient for good (a 5xx to RCPT TO): a bounce at send time (DESIGN §15). */
export class RecipientRefused extends PermanentError {
  readonly responseCode: number;
  constructor(message: string, responseCode: number) {
    super(message);
    this.name = 'RecipientRefused';
    this.responseCode = responseCode;
  }
}

interface NodemailerError extends Error {
  command?: string;
  code?: string;
  responseCode?: number;
  response?: string;
}

/** The reply line a person should read: the server's own words where it gave some. */
function explain(error: NodemailerError, host: string): RetryableError | PermanentError {
  if (error instanceof AddressRefused) return new PermanentError(error.message);
  const code = typeof error.responseCode === 'number' ? error.responseCode : null;
  const said = error.response?.trim();
  if (error.code === 'EAUTH') {
    return attemptFailure(`The server refused the user name or password: ${said || error.message}`, code === null || code >= 500);
  }
  if (code !== null) {
    const permanent = code >= 500 && code !== 503;
    if (permanent && (error.command === 'RCPT TO' || error.code === 'EENVELOPE')) {
      return new RecipientRefused(`The server refused the recipient: ${said || `${code} ${error.message}`}`, code);
    }
    return attemptFailure(`The server answered ${said || `${code} ${error.message}`}`, permanent);
  }
  const text = error.message;
  if (/certificate|self[- ]signed|altname|unable to verify/i.test(text)) {
    return new PermanentError(`The TLS certificate of ${host} is not trusted: ${text}`);
  }
  if (error.code === 'ETLS' || /STARTTLS/i.test(text)) return new PermanentError(`TLS with ${host} failed: ${text}`);
  if (error.code === 'EDNS') return new RetryableError(`Could not resolve ${host}: ${text}`);
  if (error.code === 'ETIMEDOUT') return new RetryableError(`${host} did not answer in time: ${text}`);
  return new RetryableError(`Could not talk to ${host}: ${text}`);
}

async function transportFor(smtp: SmtpSettings, options: SmtpOptions) {
  // Loaded by the first message sent or checked, not by every process that starts (docs/PERFORMANCE.md, Memory).
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport(await connectionOptions(smtp, options));
}

/** How the server is reached: its address through the guard, the workspace's TLS mode, and the time limits. */
async function connectionOptions(smtp: SmtpSettings, options: SmtpOptions) {
  const address = await resolveMailHost(smtp.host, options.allowPrivateHosts);
  const name = smtp.host.replace(/\.$/, '');
  return {
    host: address,
    port: smtp.port,
    secure: smtp.security === 'tls',
    requireTLS: smtp.security === 'starttls',
    ignoreTLS: smtp.security === 'none',
    // `opportunistic` (smtp:// in SMTP_URL): STARTTLS when the server offers it, which is nodemailer's default.
    tls: {
      ...(isIP(name) ? {} : { servername: name }),
      ...(options.extraCa ? { ca: options.extraCa } : {}),
    },
    ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/**
 * An address as the envelope gives it to the server: the domain in its IDNA (ASCII) form, which every server reads
 * (info@müller.de is sent to info@xn--mller-kva.de). The part before the @ is what it is: beyond ASCII, it needs
 * SMTPUTF8 (RFC 6531).
 */
export function envelopeAddress(address: string): string {
  const at = address.lastIndexOf('@');
  const ascii = at < 0 ? null : asciiDomain(address.slice(at + 1));
  return ascii === null ? address : `${address.slice(0, at)}@${ascii}`;
}

const BEYOND_ASCII = /[^\u0000-\u007f]/;

/**
 * Refuses, before the message is sent, an envelope the server cannot take: an address with more than ASCII before
 * its @ needs the server's SMTPUTF8, and nodemailer, when the server does not offer it, sends the address without it,
 * which a server may take and mangle. The server's extensions are read from a connection of their own (nodemailer
 * keeps them in SMTPConnection's `_supportedExtensions`, which its transport does not show); this happens only for
 * such an address.
 */
async function requireSmtpUtf8(smtp: SmtpSettings, options: SmtpOptions, addresses: readonly string[]): Promise<void> {
  const unicode = addresses.find((address) => BEYOND_ASCII.test(address));
  if (unicode === undefined) return;
  const { default: SMTPConnection } = await import('nodemailer/lib/smtp-connection');
  const connection = new SMTPConnection(await connectionOptions(smtp, options));
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once('error', reject);
      connection.connect(() => resolve());
    });
    const extensions = (connection as unknown as { _supportedExtensions?: unknown })._supportedExtensions;
    if (Array.isArray(extensions) && extensions.includes('SMTPUTF8')) return;
  } finally {
    connection.quit();
  }
  throw new PermanentError(`${unicode} has characters beyond ASCII before the @, which need the SMTPUTF8 extension, and `
    + `${smtp.host} does not offer it: the message was not sent. Send it through a server that offers SMTPUTF8, or use `
    + 'another address.');
}

/** Sends a composed message; resolves to the server's reply line (`250 …`). Throws RetryableError or PermanentError, in words for a person. */
export async function sendRaw(
  smtp: SmtpSettings, envelope: { from: string; to: string[] }, raw: Buffer, options: SmtpOptions,
): Promise<{ response: string }> {
  try {
    const wire = { from: envelopeAddress(envelope.from), to: envelope.to.map(envelopeAddress) };
    await requireSmtpUtf8(smtp, options, [wire.from, ...wire.to]);
    const transport = await transportFor(smtp, options);
    try {
      const mail = { envelope: wire, raw, ...(options.signal ? { signal: options.signal } : {}) };
      const info = await transport.sendMail(mail as Parameters<typeof transport.sendMail>[0]);
      return { response: String(info.response ?? '250 accepted') };
    } finally {
      transport.close();
    }
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (isAttemptFailure(error)) throw error;
    throw explain(error as NodemailerError, smtp.host);
  }
}

/** Connects, says hello, secures and authenticates as a delivery would, and sends nothing. Throws RetryableError or PermanentError, in words for a person. */
export async function verifySmtp(smtp: SmtpSettings, options: SmtpOptions): Promise<void> {
  try {
    const transport = await transportFor(smtp, options);
    try {
      await transport.verify();
    } finally {
      transport.close();
    }
  } catch (error) {
    throw explain(error as NodemailerError, smtp.host);
  }
}

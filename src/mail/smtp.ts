// Talking to an SMTP server through nodemailer: the host resolved once through the private-address guard and dialled
// by address (TLS still checks the name), the workspace's TLS mode, and errors told apart as a delivery needs them:
// a 5xx answer is final, a 4xx answer or a broken connection is worth another try.
import { isIP } from 'node:net';
import { MailHostRefused, resolveMailHost } from './guard.ts';
import type { SmtpSettings } from './settings.ts';

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

/** A failed exchange with the server, in words for a person, and whether trying again could help. */
export class SmtpFailure extends Error {
  readonly permanent: boolean;
  readonly responseCode: number | null;
  constructor(message: string, permanent: boolean, responseCode: number | null = null) {
    super(message);
    this.name = 'SmtpFailure';
    this.permanent = permanent;
    this.responseCode = responseCode;
  }
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** The reply line a person should read: the server's own words where it gave some. */
function explain(error: NodemailerError, host: string): SmtpFailure {
  if (error instanceof MailHostRefused) return new SmtpFailure(error.message, true);
  const code = typeof error.responseCode === 'number' ? error.responseCode : null;
  const said = error.response?.trim();
  if (error.code === 'EAUTH') {
    return new SmtpFailure(`The server refused the user name or password: ${said || error.message}`, code === null || code >= 500, code);
  }
  if (code !== null) {
    const permanent = code >= 500 && code !== 503;
    return new SmtpFailure(`The server answered ${said || `${code} ${error.message}`}`, permanent, code);
  }
  const text = error.message;
  if (/certificate|self[- ]signed|altname|unable to verify/i.test(text)) {
    return new SmtpFailure(`The TLS certificate of ${host} is not trusted: ${text}`, true);
  }
  if (error.code === 'ETLS' || /STARTTLS/i.test(text)) return new SmtpFailure(`TLS with ${host} failed: ${text}`, true);
  if (error.code === 'EDNS') return new SmtpFailure(`Could not resolve ${host}: ${text}`, false);
  if (error.code === 'ETIMEDOUT') return new SmtpFailure(`${host} did not answer in time: ${text}`, false);
  return new SmtpFailure(`Could not talk to ${host}: ${text}`, false);
}

async function transportFor(smtp: SmtpSettings, options: SmtpOptions) {
  const address = await resolveMailHost(smtp.host, options.allowPrivateHosts);
  const name = smtp.host.replace(/\.$/, '');
  // Loaded by the first message sent or checked, not by every process that starts (docs/PERFORMANCE.md, Memory).
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport({
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
  });
}

/** Sends a composed message; resolves to the server's reply line (`250 …`). Throws SmtpFailure. */
export async function sendRaw(
  smtp: SmtpSettings, envelope: { from: string; to: string[] }, raw: Buffer, options: SmtpOptions,
): Promise<{ response: string }> {
  try {
    const transport = await transportFor(smtp, options);
    try {
      const mail = { envelope, raw, ...(options.signal ? { signal: options.signal } : {}) };
      const info = await transport.sendMail(mail as Parameters<typeof transport.sendMail>[0]);
      return { response: String(info.response ?? '250 accepted') };
    } finally {
      transport.close();
    }
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw explain(error as NodemailerError, smtp.host);
  }
}

/** Connects, says hello, secures and authenticates as a delivery would, and sends nothing. Throws SmtpFailure. */
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

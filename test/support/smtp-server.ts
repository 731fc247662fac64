// A real SMTP server on loopback for the delivery tests (the `smtp-server` package: a complete implementation), with
// optional AUTH, STARTTLS or TLS under a self-signed certificate made for the test, and answers the test decides:
// each message can be taken (250), refused for now (4xx) or for good (5xx), or held while the test acts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  /** Whether MAIL FROM carried SMTPUTF8. */
  smtpUtf8: boolean;
  user: string | null;
  raw: Buffer;
  parsed: ParsedMail;
}

/** What the server answers to a message's DATA: accept, or refuse with a code (421, 451, 550…) and text. */
export type Answer = { accept: true } | { code: number; message: string };

export interface TestSmtpServer {
  host: string;
  port: number;
  /** Messages the server accepted, in order. */
  received: ReceivedMail[];
  /** Every command a client sent, as sent. */
  commands: string[];
  /** Every DATA the server got, accepted or not. */
  attempts: number;
  /** Every AUTH the server was sent, refused or not, and whether the connection was encrypted when it came. */
  auths: Array<{ user: string; password: string; secure: boolean }>;
  /** Decides the answer to each DATA (default: accept); may wait, to hold the client while the test acts. */
  answer: (mail: ReceivedMail, attempt: number) => Answer | Promise<Answer>;
  /** Resolves once `count` messages were accepted. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export interface SmtpServerOptions {
  /** Users and passwords; with them, AUTH (PLAIN, LOGIN) is required. */
  users?: Record<string, string>;
  /** `starttls`: plain, offering STARTTLS; `tls`: TLS from the first byte; `none`: no TLS offered. */
  security?: 'none' | 'starttls' | 'tls';
  certificate?: { key: string; cert: string };
  /** false: the server does not offer SMTPUTF8 (smtp-server offers it by default). */
  smtpUtf8?: boolean;
  /** Refuses RCPT TO for these addresses (lower-cased) with `550 5.1.1 … does not exist`: a bounce at send time. */
  unknownRecipients?: string[];
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadrun-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const security = options.security ?? 'none';
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const state: TestSmtpServer = {
    host: '127.0.0.1',
    port: 0,
    received: [],
    commands: [],
    attempts: 0,
    auths: [],
    answer: () => ({ accept: true }),
    async waitFor(count, timeoutMs = 20_000) {
      if (state.received.length < count) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`the SMTP server got ${state.received.length} of ${count} messages`)), timeoutMs);
          waiters.push({ count, resolve: () => { clearTimeout(timer); resolve(); } });
        });
      }
      return state.received;
    },
    close: async () => {},
  };
  const users = options.users;
  const serverOptions: SMTPServerOptions = {
    secure: security === 'tls',
    ...(security !== 'none' && options.certificate ? { key: options.certificate.key, cert: options.certificate.cert } : {}),
    hideSTARTTLS: security === 'none',
    hideSMTPUTF8: options.smtpUtf8 === false,
    disabledCommands: users ? [] : ['AUTH'],
    authOptional: !users,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    // The client's commands as they came (MAIL FROM, RCPT TO…): smtp-server shows an envelope's domains decoded from
    // their IDNA form, and a test of what went on the wire reads these.
    logger: {
      debug: (_meta: unknown, prefix: unknown, line: unknown) => {
        if (prefix === 'C:' && typeof line === 'string') state.commands.push(line);
      },
      info: () => {}, warn: () => {}, error: () => {}, trace: () => {}, fatal: () => {},
    } as unknown as SMTPServerOptions['logger'],
    onAuth(auth, session, callback) {
      state.auths.push({ user: auth.username ?? '', password: auth.password ?? '', secure: session.secure });
      if (users && users[auth.username ?? ''] !== undefined && users[auth.username ?? ''] === auth.password) {
        callback(null, { user: auth.username });
        return;
      }
      const error = Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 });
      callback(error);
    },
    onRcptTo(address, _session, callback) {
      if (options.unknownRecipients?.includes(address.address.toLowerCase())) {
        callback(Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void (async () => {
          const raw = Buffer.concat(chunks);
          const mail: ReceivedMail = {
            envelope: {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            },
            smtpUtf8: Boolean(((session.envelope.mailFrom || undefined)?.args || undefined)?.SMTPUTF8),
            user: typeof session.user === 'string' ? session.user : null,
            raw,
            parsed: await simpleParser(raw),
          };
          state.attempts += 1;
          const answer = await state.answer(mail, state.attempts);
          if ('code' in answer) {
            callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
            return;
          }
          state.received.push(mail);
          for (const waiter of [...waiters]) {
            if (state.received.length >= waiter.count) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve();
            }
          }
          callback(null, `Message queued as ${state.received.length}`);
        })().catch((error: Error) => callback(error));
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address();
  state.port = typeof address === 'object' && address ? address.port : 0;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

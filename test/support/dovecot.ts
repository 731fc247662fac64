// A private Dovecot for a test file: Debian's /usr/sbin/dovecot with a configuration in a temporary folder, its own
// base_dir, state_dir and log, a passwd-file user, maildir storage and a Drafts folder marked \Drafts, listening on
// free loopback ports (IMAP with STARTTLS, and IMAPS) with a self-signed certificate made for the test. It never
// touches the system's Dovecot: nothing is read from /etc/dovecot and no port of the system's is used.
//
// As root, Dovecot refuses two things: a login process running as root, and mail access as root. The login
// processes run as `nobody`, and so do the mail processes (the mail folder is given to nobody); the temporary
// folder is opened for it to traverse. As any other user, everything runs as that user.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';

const run = promisify(execFile);

export const DOVECOT = '/usr/sbin/dovecot';
export const DOVEADM = '/usr/bin/doveadm';

export interface Dovecot {
  host: '127.0.0.1';
  /** Plain IMAP, offering STARTTLS. */
  port: number;
  /** IMAP over TLS from the first byte. */
  tlsPort: number;
  user: string;
  password: string;
  /** The self-signed certificate the server presents (PEM), for a client that is told to trust it. */
  certificate: string;
  folder: string;
  /** Saves a raw message into a folder of the user's mailbox (INBOX unless said otherwise), as a delivery would. */
  deliver(raw: string | Buffer, folder?: string): Promise<void>;
  /** The raw messages of a folder, in UID order, with their flags. */
  messages(folder: string): Promise<Array<{ uid: number; flags: string[]; raw: string }>>;
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Resolves when the port answers with an IMAP greeting; Dovecot forks its listeners after it starts. */
async function waitForGreeting(port: number, child: ChildProcess, logPath: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    if (child.exitCode !== null) {
      throw new Error(`dovecot exited with ${child.exitCode}: ${await readFile(logPath, 'utf8').catch(() => '')}`);
    }
    const greeted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(2000);
      socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('* OK')); });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => { socket.destroy(); resolve(false); });
    });
    if (greeted) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not answer on ${port}: ${await readFile(logPath, 'utf8').catch(() => '')}`);
    // Nothing to await here but the listener: the master binds it before it forks the login process that greets.
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** `drafts: false` gives a mailbox with no Drafts folder and none marked \Drafts, as some servers have. */
export async function startDovecot(options: { user?: string; password?: string; drafts?: boolean } = {}): Promise<Dovecot> {
  const user = options.user ?? 'rep';
  const password = options.password ?? 'correct horse battery staple';
  const folder = await mkdtemp(join(tmpdir(), 'leadrun-dovecot-'));
  // The login and mail processes (nobody, as root) must reach their sockets and the mail folder below this one.
  await chmod(folder, 0o755);
  const baseDir = join(folder, 'run');
  const mailDir = join(folder, 'mail');
  await mkdir(join(folder, 'state'));
  await mkdir(mailDir);

  const asRoot = process.getuid?.() === 0;
  const me = userInfo();
  const mailUid = asRoot ? 65534 : me.uid;
  const mailGid = asRoot ? 65534 : me.gid;
  if (asRoot) await chown(mailDir, mailUid, mailGid);
  const loginUser = asRoot ? 'nobody' : me.username;
  // Dovecot wants the group by name.
  const group = asRoot ? 'root' : (await run('id', ['-gn'])).stdout.trim();

  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem'),
  ]);
  const certificate = await readFile(join(folder, 'cert.pem'), 'utf8');
  // Empty uid/gid: mail_uid/mail_gid below apply. The password is stored in the clear, as {PLAIN}.
  await writeFile(join(folder, 'users'), `${user}:{PLAIN}${password}::::::\n`);

  const port = await freePort();
  const tlsPort = await freePort();
  const logPath = join(folder, 'dovecot.log');
  const conf = join(folder, 'dovecot.conf');
  await writeFile(conf, `
base_dir = ${baseDir}
state_dir = ${join(folder, 'state')}
log_path = ${logPath}
instance_name = leadrun-test-${port}
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <${join(folder, 'cert.pem')}
ssl_key = <${join(folder, 'key.pem')}
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
default_internal_user = ${me.username}
default_internal_group = ${group}
default_login_user = ${loginUser}
mail_uid = ${mailUid}
mail_gid = ${mailGid}
first_valid_uid = ${Math.min(mailUid, 1)}
first_valid_gid = 0
mail_location = maildir:${mailDir}/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${join(folder, 'users')}
}
userdb {
  driver = passwd-file
  args = ${join(folder, 'users')}
  default_fields = home=${mailDir}/%u
}
namespace inbox {
  inbox = yes
  separator = /
${options.drafts === false ? '' : `  mailbox Drafts {
    auto = subscribe
    special_use = \\Drafts
  }
`}}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = ${tlsPort}
    ssl = yes
  }
}
service pop3-login {
  chroot =
}
# No authentication penalty: a test of the wrong password must not slow the next sign-in from 127.0.0.1 down.
service anvil {
  chroot =
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service auth {
  chroot =
}
`);

  // In the foreground, as our child: its exit is an event to await, and it cannot outlive the test process.
  const child = spawn(DOVECOT, ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = once(child, 'exit');
  try {
    await waitForGreeting(port, child, logPath);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    await rm(folder, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }

  const doveadm = async (args: string[], input?: string | Buffer): Promise<string> => {
    const proc = spawn(DOVEADM, ['-c', conf, ...args], { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    proc.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    if (input !== undefined) {
      // A doveadm that exits before reading all of it closes the pipe: its exit code says what went wrong, not EPIPE.
      proc.stdin!.on('error', () => {});
      proc.stdin!.end(input);
    }
    const [code] = await once(proc, 'exit') as [number | null];
    if (code !== 0) throw new Error(`doveadm ${args.join(' ')} failed (${code}): ${err}`);
    return out;
  };

  return {
    host: '127.0.0.1',
    port,
    tlsPort,
    user,
    password,
    certificate,
    folder,
    async deliver(raw, mailbox = 'INBOX') {
      await doveadm(['save', '-u', user, '-m', mailbox], raw);
    },
    async messages(mailbox) {
      const out = await doveadm(['-f', 'json', 'fetch', '-u', user, 'uid flags text', 'mailbox', mailbox]);
      const rows = JSON.parse(out || '[]') as Array<{ uid: string; flags: string; text: string }>;
      return rows.map((r) => ({ uid: Number(r.uid), flags: r.flags.split(' ').filter(Boolean), raw: r.text }))
        .sort((a, b) => a.uid - b.uid);
    },
    log: () => readFile(logPath, 'utf8'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(folder, { recursive: true, force: true });
    },
  };
}

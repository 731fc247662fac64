// The embedded database (PGlite) belongs to one process. That process listens on a local socket in DATA_DIR;
// binding it is how a process takes the data directory, and any other `leadrun` command sends its work
// through it instead of opening the files a second time. The socket is private to the user (0600).
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AdminCommand } from './commands.ts';
import { AppError, type ErrorCode } from '../domain/errors.ts';

export type ControlHandler = (command: AdminCommand) => Promise<unknown>;

interface Reply {
  ok: boolean;
  result?: unknown;
  error?: { code: ErrorCode; message: string };
}

/** Unix socket paths are limited to about 100 bytes; a deep DATA_DIR gets its socket in the temp directory. */
export function controlSocketPath(dataDir: string): string {
  const inDir = path.join(dataDir, 'leadrun.sock');
  if (Buffer.byteLength(inDir) < 100) return inDir;
  const digest = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `leadrun-${digest}.sock`);
}

/** DATA_DIR cannot be created, or is not a directory this process can write to. */
export class DataDirError extends Error {}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOENT: 'it cannot be created there',
  ENOTDIR: 'a file is in the way',
  EEXIST: 'a file is in the way',
  ENOSPC: 'the disk is full',
};

/** mkdir -p by hand: Node's recursive mkdir never returns for some paths (e.g. under /proc). */
async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!(await stat(dir)).isDirectory()) throw error;
      return;
    }
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw error;
    await makeDir(parent);
    await mkdir(dir, { mode: 0o700 }).catch((again: NodeJS.ErrnoException) => { if (again.code !== 'EEXIST') throw again; });
  }
}

/**
 * Creates DATA_DIR if need be, checks that it can be written and makes it private, so that a bad one fails at once
 * and says why.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  try {
    await makeDir(path.resolve(dataDir));
    await access(dataDir, constants.W_OK | constants.X_OK);
    // Permission bits do not tell about a read-only mount, nor about root: write a file to be sure.
    const probe = path.join(dataDir, `.leadrun-probe-${process.pid}`);
    await writeFile(probe, '');
    await unlink(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be used: ${REASONS[code] ?? (error as Error).message}`);
  }
  await makePrivate(dataDir, dataDir);
  await makePrivate(dataDir, path.join(dataDir, 'pgdata'));
}

/**
 * Mode 0700 on DATA_DIR and on its pgdata, whatever they had: mkdir's mode applies only to a folder it creates,
 * and a DATA_DIR made by hand or by an older leadrun kept 0755. PGlite writes the files inside pgdata 0644 (every
 * lead, transcript and password hash); a folder only its owner can enter is what closes them off, so the files
 * themselves are left as they are. A folder owned by someone else is refused rather than changed: its owner could
 * open it again at any time, so it can never be private to this process.
 */
async function makePrivate(dataDir: string, dir: string): Promise<void> {
  let owner: number;
  try {
    owner = (await stat(dir)).uid;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && dir !== dataDir) return; // pgdata before the first start
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be made private: ${(error as Error).message}`);
  }
  const uid = process.getuid?.();
  const what = dir === dataDir ? 'it' : path.basename(dir);
  if (uid !== undefined && owner !== uid) {
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be made private: ${what} belongs to user ${owner}, `
      + `not to user ${uid} who runs leadrun; change its owner or set another DATA_DIR`);
  }
  try {
    await chmod(dir, 0o700);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const reason = REASONS[code] ?? (error as Error).message;
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be made private: ${what}: ${reason}`);
  }
}

/** Who holds a data directory: written next to the socket by the holder, so that others can name it. */
export interface DataDirHolder {
  pid: number;
  /** The command that holds it: `serve`, `worker` or an admin command. */
  role: string;
}

function holderPath(dataDir: string): string {
  return path.join(dataDir, 'leadrun.holder');
}

/** The live process holding the data directory, as it wrote itself down; null when unknown. */
export async function dataDirHolder(dataDir: string): Promise<DataDirHolder | null> {
  try {
    const [pid, role] = (await readFile(holderPath(dataDir), 'utf8')).trim().split(' ');
    if (!Number.isInteger(Number(pid)) || !role) return null;
    // A file left by a process that died is not the holder's: its successor has not written its own yet.
    process.kill(Number(pid), 0);
    return { pid: Number(pid), role };
  } catch {
    return null;
  }
}

export interface DataDirClaim {
  /** Set what incoming commands run on, once the database is open. */
  serve(handler: ControlHandler): void;
  release(): Promise<void>;
}

function canConnect(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/** Takes the data directory; null when a live process holds it. */
export async function claimDataDir(dataDir: string, role: string): Promise<DataDirClaim | null> {
  await prepareDataDir(dataDir);
  const socketPath = controlSocketPath(dataDir);
  let handler: ControlHandler | null = null;
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      // Only the new chunk is searched: a command can be megabytes long (a lead import's file).
      const end = chunk.indexOf('\n');
      if (end < 0) {
        buffer += chunk;
        return;
      }
      const line = buffer + chunk.slice(0, end);
      void answer(line).then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    });
  });
  const answer = async (line: string): Promise<Reply> => {
    if (!handler) return { ok: false, error: { code: 'unavailable', message: 'leadrun is still starting; try again in a moment.' } };
    try {
      return { ok: true, result: await handler(JSON.parse(line) as AdminCommand) };
    } catch (error) {
      if (error instanceof AppError) return { ok: false, error: { code: error.code, message: error.message } };
      return { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
    }
  };

  for (let tries = 0; tries < 2; tries++) {
    const listening = await new Promise<boolean | 'in-use'>((resolve) => {
      server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' ? 'in-use' : false));
      server.listen(socketPath, () => resolve(true));
    });
    if (listening === true) {
      await chmod(socketPath, 0o600);
      await writeFile(holderPath(dataDir), `${process.pid} ${role}\n`, { mode: 0o600 });
      return {
        serve: (next) => { handler = next; },
        release: async () => {
          await unlink(holderPath(dataDir)).catch(() => {});
          await new Promise<void>((resolve) => server.close(() => resolve()));
        },
      };
    }
    if (listening === false) throw new Error(`cannot listen on ${socketPath}`);
    if (await canConnect(socketPath)) return null;
    // A socket file left by a process that died: nobody answers on it, so it is safe to remove.
    await unlink(socketPath).catch(() => {});
  }
  return null;
}

/** Sends one command to the process holding the data directory; null when nobody answers. */
export async function sendControlCommand(dataDir: string, command: AdminCommand): Promise<{ result: unknown } | null> {
  const socketPath = controlSocketPath(dataDir);
  const reply = await new Promise<Reply | null>((resolve, reject) => {
    const socket = net.connect(socketPath);
    let text = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(command)}\n`));
    socket.on('data', (chunk: string) => { text += chunk; });
    socket.once('end', () => {
      try {
        resolve(JSON.parse(text) as Reply);
      } catch {
        reject(new Error('the running leadrun process gave an unreadable answer'));
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(null);
      else reject(error);
    });
  });
  if (!reply) return null;
  if (!reply.ok) throw new AppError(reply.error?.code ?? 'internal', reply.error?.message ?? 'the command failed');
  return { result: reply.result };
}

/**
 * Embedded mode: take DATA_DIR. Another serve or worker holding it is refused at once, naming it; a short-lived
 * admin command that holds it is waited for a little.
 */
export async function claimOrWait(dataDir: string, logger: Logger, role: 'serve' | 'worker'): Promise<DataDirClaim> {
  const deadline = Date.now() + 15_000;
  let told = false;
  for (;;) {
    const claim = await claimDataDir(dataDir, role);
    if (claim) return claim;
    const holder = await dataDirHolder(dataDir);
    if (holder && (holder.role === 'serve' || holder.role === 'worker')) {
      throw new DataDirError(`DATA_DIR ${dataDir} is in use by another leadrun process (leadrun ${holder.role}, pid ${holder.pid}); stop it or set another DATA_DIR`);
    }
    if (Date.now() > deadline) {
      throw new DataDirError(`DATA_DIR ${dataDir} is in use by another leadrun process${holder ? ` (pid ${holder.pid})` : ''}; stop it or set another DATA_DIR`);
    }
    if (!told) logger.info({ pid: holder?.pid ?? null }, 'DATA_DIR is held by a leadrun command; waiting for it to finish');
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

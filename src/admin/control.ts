// The embedded database (PGlite) belongs to one process. That process listens on a local socket in DATA_DIR;
// binding it is how a process takes the data directory, and any other `leadrun` command sends its work
// through it instead of opening the files a second time. The socket is private to the user (0600).
import { createHash } from 'node:crypto';
import { chmod, mkdir, unlink } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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
export async function claimDataDir(dataDir: string): Promise<DataDirClaim | null> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const socketPath = controlSocketPath(dataDir);
  let handler: ControlHandler | null = null;
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      const line = buffer.slice(0, end);
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
      return {
        serve: (next) => { handler = next; },
        release: () => new Promise<void>((resolve) => server.close(() => resolve())),
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

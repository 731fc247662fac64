// Child processes of the benchmark (leadrun serve, leadrun worker, the baseline, the peers) and what /proc says of them.
// Every child is tracked, so that a failing benchmark still stops each one it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../test/support/ports.ts';

export { freePort };

export const ROOT = path.resolve(import.meta.dirname, '..');
const NODE = process.execPath;

export interface Child {
  name: string;
  pid: number;
  /** The last lines the child wrote to stderr (and stdout, when it is not ignored), for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<Child>();

/** Stops every child still running (used on failure). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop()));
}

function track(name: string, proc: ChildProcess, keepStdout: boolean): Child {
  let tail = '';
  const keep = (chunk: Buffer) => { tail = (tail + chunk.toString('utf8')).slice(-4000); };
  proc.stderr?.on('data', keep);
  if (keepStdout) proc.stdout?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const child: Child = {
    name,
    pid: proc.pid ?? -1,
    output: () => tail,
    async stop() {
      running.delete(child);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(child);
  return child;
}

async function waitUntil(what: string, child: Child, proc: ChildProcess, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${proc.exitCode ?? proc.signalCode}) before ${what}:\n${child.output()}`);
    }
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await child.stop();
  throw new Error(`${child.name}: no ${what} within ${timeoutMs / 1000} s:\n${child.output()}`);
}

export interface ServeOptions {
  env: Record<string, string | undefined>;
  worker: boolean;
  /** Keep the request log (LOG_LEVEL=info lines) in the output tail; by default stdout goes to /dev/null. */
  keepStdout?: boolean;
  /** Another copy of leadrun to start instead of this one (an A/B comparison of a change). */
  root?: string;
}

/** `bin/leadrun serve` on a free loopback port; resolves once /healthz answers. */
export async function startServe(options: ServeOptions): Promise<Child & { url: string }> {
  const port = await freePort();
  const env = { ...options.env, PORT: String(port), HOST: '127.0.0.1' };
  const args = ['serve', ...(options.worker ? [] : ['--no-worker'])];
  // bin/leadrun execs node, so the child's pid is the server's own.
  const root = options.root ?? ROOT;
  const proc = spawn(path.join(root, 'bin/leadrun'), args, { cwd: root, env: cleanEnv(env), stdio: ['ignore', options.keepStdout ? 'pipe' : 'ignore', 'pipe'] });
  const child = track(`leadrun serve${options.worker ? '' : ' --no-worker'}${options.root ? ` (${root})` : ''}`, proc, Boolean(options.keepStdout));
  const url = `http://127.0.0.1:${port}`;
  await waitUntil('an answer on /healthz', child, proc, async () => (await fetch(`${url}/healthz`)).ok);
  return { ...child, url };
}

/** `bin/leadrun worker`; resolves once it has started (it logs "job runner started"). */
export async function startWorker(env: Record<string, string | undefined>): Promise<Child> {
  const proc = spawn(path.join(ROOT, 'bin/leadrun'), ['worker'], { cwd: ROOT, env: cleanEnv({ ...env, LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
  const child = track('leadrun worker', proc, false);
  let started = false;
  proc.stdout?.on('data', (chunk: Buffer) => { if (!started && chunk.toString().includes('job runner started')) started = true; });
  await waitUntil('"job runner started"', child, proc, async () => started);
  // The worker logs a line per step; nothing reads them from here on.
  proc.stdout?.removeAllListeners('data');
  proc.stdout?.resume();
  return child;
}

/** A program of another project run with this node in its own folder (bench/peers.ts); resolves once `ready` says so. */
export async function startProgram(
  name: string, args: string[], options: { cwd: string; env: Record<string, string | undefined>; ready: () => Promise<boolean> },
): Promise<Child> {
  const proc = spawn(NODE, args, { cwd: options.cwd, env: cleanEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  const child = track(name, proc, true);
  await waitUntil('a ready answer', child, proc, options.ready);
  return child;
}

/** A command run to its end; resolves with its stdout, or fails with the tail of its output when it exits non-zero. */
export async function runToEnd(
  name: string, command: string, args: string[], options: { cwd: string; env: Record<string, string | undefined>; input?: string },
): Promise<string> {
  const proc = spawn(command, args, { cwd: options.cwd, env: cleanEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
  const child = track(name, proc, false);
  let stdout = '';
  proc.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  proc.stdin?.end(options.input ?? '');
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  running.delete(child);
  if (code !== 0) throw new Error(`${name} exited (${code ?? signal}):\n${(child.output() || stdout.slice(-4000)).trim()}`);
  return stdout;
}

/** The baseline server (bench/baseline.ts); resolves with its address once it listens. */
export async function startBaseline(env: Record<string, string | undefined>): Promise<Child & { url: string }> {
  const proc = spawn(NODE, [path.join(ROOT, 'bench/baseline.ts')], { cwd: ROOT, env: cleanEnv({ ...env, PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
  const child = track('baseline', proc, false);
  let port = 0;
  let buffered = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const line = /^\{.*\}$/m.exec(buffered);
    if (line) port = JSON.parse(line[0]).port;
  });
  await waitUntil('a port', child, proc, async () => port > 0);
  return { ...child, url: `http://127.0.0.1:${port}` };
}

function cleanEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

/** User + system CPU time of a process, in milliseconds (0 when it is gone). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (CLK_TCK = 100)
  } catch {
    return 0;
  }
}

/** Resident memory of a process, in MiB, from /proc/PID/status (VmRSS). */
export function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

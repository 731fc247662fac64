// Runs `leadrun` with an environment that holds only what the test gives it: nothing leaks in from the shell the tests
// run in (PORT, DATABASE_URL, DATA_DIR, …). An admin command runs through the program (src/program.ts) in the test's
// own process, with its own standard streams and exit code: a process of its own would cost about 0.15 s of CPU for
// each of the few hundred commands the tests run. `serve` and `worker`, and a command asked to (`process: true`), run
// as the real `bin/leadrun` in a child process. A command runs in the test process's working folder (workingDir), never
// in the project's.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { runProgram } from '../../src/program.ts';
import { seedDataDir } from '../support/templates.ts';
import { workingDir } from '../support/working-dir.ts';

export { freePort } from '../support/ports.ts';
export { workingDir } from '../support/working-dir.ts';

export const LEADRUN_BIN = path.resolve(import.meta.dirname, '../../bin/leadrun');
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/** Every variable src/config.ts reads, and the test runner's own markers. */
const SCRUBBED = [
  'PORT', 'HOST', 'PUBLIC_URL', 'DATABASE_URL', 'DATA_DIR', 'FREE_PLAN_MONTHLY_RUNS', 'RATE_LIMIT_PER_MINUTE',
  'LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL', 'TRACE_URL_TEMPLATE', 'LOG_LEVEL', 'RESEARCH_ALLOW_PRIVATE_HOSTS',
  'REDIS_URL', 'REDIS_KEY_PREFIX', 'WORKER_CONCURRENCY', 'RUN_LEASE_SECONDS', 'STEP_RETRY_BASE_MS', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT',
  'LLM_TIMEOUT_SECONDS', 'RUN_TOKEN_BUDGET', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'TRUST_PROXY', 'CPU_THREADS', 'CPU_BUDGET_MS',
  'WEBHOOK_RETRY_SECONDS', 'DATABASE_POOL_WAIT_SECONDS', 'APPROVAL_UNDO_SECONDS',
];

export function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete base[name];
  return { ...base, ...env };
}

export interface Completed {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  timeoutMs?: number;
  cwd?: string;
  /** Standard input: not a terminal. */
  input?: string;
  /** As `bin/leadrun` in a child process, even an admin command. */
  process?: boolean;
}

/** Runs one `leadrun` command to its end, with `input` on its standard input; never throws for a non-zero exit. */
export function runLeadrun(args: string[], env: Record<string, string>, options: RunOptions = {}): Promise<Completed> {
  const service = (args[0] === 'serve' || args[0] === 'worker') && !args.includes('--help') && !args.includes('-h');
  return options.process || service ? runLeadrunProcess(args, env, options) : runLeadrunHere(args, env, options);
}

function runLeadrunProcess(args: string[], env: Record<string, string>, options: RunOptions): Promise<Completed> {
  return runCommand(LEADRUN_BIN, args, env, options);
}

/** Runs a program to its end as `runLeadrun` runs `bin/leadrun` in a process: `/bin/sh`, say, that runs it in turn. */
export function runCommand(file: string, args: string[], env: Record<string, string>, options: RunOptions = {}): Promise<Completed> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, {
      env: cleanEnv(env), cwd: options.cwd ?? workingDir(), timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      if (error && typeof (error as { code?: unknown }).code === 'string') return reject(error); // could not start it at all
      const code = error ? ((error as { code?: number | null }).code ?? null) : 0;
      resolve({ code, signal: (error as { signal?: NodeJS.Signals } | null)?.signal ?? null, stdout, stderr });
    });
    child.stdin!.on('error', () => {}); // a command that exits before reading all of it
    child.stdin!.end(options.input ?? '');
  });
}

async function runLeadrunHere(args: string[], env: Record<string, string>, options: RunOptions): Promise<Completed> {
  const output = { stdout: '', stderr: '' };
  const sink = (name: keyof typeof output) => new Writable({
    write(chunk: Buffer | string, _encoding, done) { output[name] += String(chunk); done(); },
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`leadrun ${args.join(' ')} did not end within ${timeoutMs} ms:\n${output.stderr}`)), timeoutMs);
  });
  try {
    const code = await Promise.race([timedOut, runProgram(args, {
      env: cleanEnv(env), cwd: options.cwd ?? workingDir(),
      stdin: Readable.from([Buffer.from(options.input ?? '')]), stdout: sink('stdout'), stderr: sink('stderr'),
    })]);
    return { code, signal: null, ...output };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a command that must succeed with --json output, and returns the parsed output. */
export async function leadrunJson(args: string[], env: Record<string, string>): Promise<any> {
  const result = await runLeadrun(args, env);
  assert.equal(result.code, 0, `leadrun ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  try {
    return JSON.parse(result.stdout);
  } catch {
    assert.fail(`leadrun ${args.join(' ')} printed no JSON: ${result.stdout}`);
  }
}

/** Asserts the shape of a failed command: a non-zero exit, a readable first line on stderr, no stack trace. */
export function assertCleanFailure(result: Completed, pattern: RegExp): string {
  assert.notEqual(result.code, 0, `expected a failure, got exit 0: ${result.stdout}`);
  assert.equal(result.signal, null);
  const [first = ''] = result.stderr.split('\n');
  assert.match(first, /^leadrun: /, `stderr: ${result.stderr}`);
  assert.match(first, pattern);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(result.stderr, /\b(Error|TypeError|AppError):/, 'no error class names');
  assert.equal(result.stdout, '', 'nothing on stdout');
  return first;
}

export interface LeadrunProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr, interleaved as they arrived. */
  output(): string;
  isAlive(): boolean;
  /** Throws (with the process's output) when it has exited. */
  assertAlive(): void;
  /** Sends the signal (unless the process has already exited) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a long-running `leadrun` command (serve, worker) in the background. */
export function spawnLeadrun(args: string[], env: Record<string, string>, options: { cwd?: string } = {}): LeadrunProcess {
  const child = spawn(LEADRUN_BIN, args, { env: cleanEnv(env), cwd: options.cwd ?? workingDir(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let all = '';
  let done = false;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; all += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { err += chunk; all += chunk; });
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => { done = true; resolve(); });
    child.once('error', () => { done = true; resolve(); });
  });
  assert.ok(child.pid, `cannot start ${LEADRUN_BIN}`);
  return {
    child,
    pid: child.pid,
    exited,
    get code() { return child.exitCode; },
    get signal() { return child.signalCode; },
    stdout: () => out,
    stderr: () => err,
    output: () => all,
    isAlive: () => !done && child.exitCode === null && child.signalCode === null,
    assertAlive() {
      if (done || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`leadrun ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}):\n${all.slice(-4000)}`);
      }
    },
    async kill(signal = 'SIGTERM') {
      if (!done && child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * A new temporary folder. `migrated`: a DATA_DIR holding an embedded database migrated already (a copy of the test
 * template), for a test about something other than a first start, which would spend seconds of CPU creating it.
 */
export async function tempDir(prefix = 'leadrun-cli-', options: { migrated?: boolean } = {}): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  if (options.migrated) await seedDataDir(dir);
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Polls `url` until it answers 200, or fails with the server's output. */
export async function waitForReady(server: LeadrunProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    server.assertAlive();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready in ${timeoutMs} ms:\n${server.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves with the first line of the process's standard output that matches, as soon as it is written. */
export function waitForLine(server: LeadrunProcess, pattern: RegExp): Promise<string> {
  const find = () => server.stdout().split('\n').find((line) => pattern.test(line));
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = find();
      if (line !== undefined) {
        server.child.stdout!.off('data', check);
        resolve(line);
      }
    };
    server.child.stdout!.on('data', check);
    void server.exited.then(() => { if (find() === undefined) reject(new Error(`no line matching ${pattern} before the exit:\n${server.output()}`)); });
    check();
  });
}

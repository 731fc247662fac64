// The `leadrun` program: read the command line and the configuration, then run one admin command, or serve and work
// (src/service.ts, loaded only then). It reads and writes only the terminal it is given, and says its exit code rather
// than exiting: src/main.ts runs it on the process's own, and the tests run admin commands through it in theirs.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import type { Logger } from 'pino';
import { commandHelp, parseCommandLine, printable, UsageError, USAGE, type CommandSpec, type Invocation } from './admin/cli.ts';
import type { AdminCommand, AdminDeps } from './admin/commands.ts';
import { claimDataDir, claimOrWait, DataDirError, sendControlCommand } from './admin/control.ts';
import { PasswordInputError, readNewPassword } from './admin/prompt.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import type { Database } from './db/database.ts';
import { AppError } from './domain/errors.ts';
import { loadSecretBox, type SecretBox } from './domain/secret-box.ts';
import { redactSecrets } from './observability/redact.ts';
import { terminalLog } from './observability/terminal-log.ts';

/** An error of the program, said as it is: one line on standard error, with exit code 1. */
class Failure extends Error {}

function fail(message: string): never {
  throw new Failure(message);
}

/**
 * The configured database. Its drivers are loaded here, not above: a command that fails before it needs the database
 * (help, a usage mistake, a DATA_DIR that cannot be used) starts without them.
 */
async function open(config: Config, logger: Logger, migrate: boolean): Promise<Database> {
  return (await import('./db/database.ts')).openConfiguredDatabase(config, logger, migrate);
}

/** What the program reads and writes: a process's own, or a test's. */
export interface Terminal {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Read only by `user password`; a terminal (`isTTY`) is asked. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface ProgramOptions {
  /**
   * The program has the process to itself (bin/leadrun): it may tune V8 for the command, and serve or work. Run inside
   * another program, it runs admin commands only.
   */
  ownProcess?: boolean;
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/**
 * Runs one admin command. The domain and its database drivers are loaded only for a command to run, like the server
 * (src/service.ts): --help, --version, a mistake on the command line and a DATA_DIR that cannot be used answer without.
 */
async function runAdminCommand(deps: AdminDeps, command: AdminCommand): Promise<unknown> {
  return (await import('./admin/commands.ts')).runAdminCommand(deps, command);
}

/** What an admin command works with: the database, and the secrets key, read only when used. */
function adminDeps(database: Database, config: Config): AdminDeps {
  let box: SecretBox | null = null;
  return {
    db: database.db, clock: systemClock, migrate: () => database.migrate(),
    secrets: () => (box ??= loadSecretBox(config.secretsKey, config.dataDir)), allowPrivateHosts: config.allowPrivateHosts,
  };
}

/**
 * Most admin commands hold the embedded database for a second or two, too short for V8's optimizing compiler to pay
 * back what compiling PostgreSQL's hottest WebAssembly functions costs: they run on the baseline compiler's code alone
 * (a function it cannot compile still goes to the optimizing one), which halves a short command's CPU. A lead import
 * keeps the default, as `serve` and `worker` do: over tens of thousands of rows the optimized code wins.
 */
function compileWasmForShortUse(command: AdminCommand): void {
  if (command.command === 'leads.import') return;
  v8.setFlagsFromString('--no-wasm-dynamic-tiering');
  v8.setFlagsFromString('--no-wasm-tier-up');
}

async function runAdmin(terminal: Terminal, config: Config, logger: Logger, command: AdminCommand, { spec, json }: { spec: CommandSpec; json: boolean }): Promise<void> {
  let result: unknown;
  // The migrate command applies the migrations itself, so that it can say which it applied.
  const migrateFirst = command.command !== 'migrate';
  if (config.databaseUrl) {
    const database = await open(config, logger, migrateFirst);
    try {
      result = await runAdminCommand(adminDeps(database, config), command);
    } finally {
      await database.close();
    }
  } else {
    for (;;) {
      const claim = await claimDataDir(config.dataDir, command.command);
      if (!claim) {
        // A running server holds the embedded database: it runs the command for us.
        const answer = await sendControlCommand(config.dataDir, command);
        if (!answer) continue; // it stopped between our two looks; try again
        result = answer.result;
        break;
      }
      try {
        const database = await open(config, logger, migrateFirst);
        try {
          const deps = adminDeps(database, config);
          // Commands sent to us by others are served only once the schema is in place.
          if (!migrateFirst) result = await runAdminCommand(deps, command);
          claim.serve((next) => runAdminCommand(deps, next));
          if (migrateFirst) result = await runAdminCommand(deps, command);
        } finally {
          await database.close();
        }
      } finally {
        await claim.release();
      }
      break;
    }
  }
  // With --json, standard output holds the JSON alone; a notice that goes with it (how to set a password) goes to
  // standard error.
  const notice = spec.notice?.(result, command) ?? null;
  terminal.stdout.write(`${json || !spec.human ? JSON.stringify(result, null, 2) : spec.human(result)}\n`);
  if (notice) (json ? terminal.stderr : terminal.stdout).write(`${notice}\n`);
}

/** Runs `leadrun ARGV`; resolves with its exit code. Every failure is one line on the terminal's standard error. */
export async function runProgram(argv: string[], terminal: Terminal, { ownProcess = false }: ProgramOptions = {}): Promise<number> {
  try {
    return await run(argv, terminal, ownProcess);
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    terminal.stderr.write(`leadrun: ${printable(error.message)}\n`);
    return 1;
  }
}

async function run(argv: string[], terminal: Terminal, ownProcess: boolean): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-v') {
    terminal.stdout.write(`leadrun ${version()}\n`);
    return 0;
  }
  const asksHelp = argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
  const words = argv[0] === 'help' ? argv.slice(1) : argv;
  if (argv.length === 0 || (asksHelp && words.every((word) => word.startsWith('-')))) {
    terminal.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 1 : 0;
  }
  if (asksHelp) {
    const help = commandHelp(words);
    if (!help) fail(`unknown command "${words.filter((word) => !word.startsWith('-')).join(' ')}" (see leadrun --help)`);
    terminal.stdout.write(`${help}\n`);
    return 0;
  }
  let invocation: Invocation;
  try {
    invocation = parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message);
    throw error;
  }
  let config: Config;
  try {
    config = loadConfig(terminal.env, terminal.cwd);
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration: ${error.message}`);
    throw error;
  }
  const isService = invocation.kind === 'service';
  if (isService && !ownProcess) throw new Error('leadrun serve and leadrun worker run in a process of their own');
  const { pino } = await import('pino');
  // A key a client put where it does not belong (a URL, a field) is logged with its prefix only.
  // A service writes JSON lines, or short text lines when a person runs it at a terminal (src/observability/terminal-log.ts),
  // as DESIGN.md §11 says: a service manager, a container or a pipe still gets JSON.
  const destination = !isService ? terminal.stderr
    : process.stdout.isTTY ? terminalLog(process.stdout) : pino.destination(1);
  const logger = pino({
    level: isService ? config.logLevel : 'warn', base: { service: 'leadrun' }, hooks: { streamWrite: redactSecrets },
  }, destination);
  try {
    if (invocation.kind === 'service') {
      // DATA_DIR first, before loading the server: a second serve on it is refused at once.
      const claim = config.databaseUrl ? null : await claimOrWait(config.dataDir, logger, invocation.http ? 'serve' : 'worker');
      await (await import('./service.ts')).runService(config, logger, { http: invocation.http, worker: invocation.worker }, claim);
    } else {
      const command: AdminCommand = invocation.kind === 'password'
        ? {
          command: 'user.password', email: invocation.email, workspace: invocation.workspace,
          password: await readNewPassword(invocation.email, { input: terminal.stdin, output: terminal.stderr }),
        }
        : invocation.command;
      if (ownProcess && !config.databaseUrl) compileWasmForShortUse(command);
      await runAdmin(terminal, config, logger, command, invocation);
    }
    return 0;
  } catch (error) {
    if (error instanceof Failure) throw error;
    if (error instanceof AppError || error instanceof DataDirError || error instanceof PasswordInputError) fail(error.message);
    // A service logs the failure with its stack; an admin command says it in one line, like every other error.
    if (isService) logger.fatal({ err: error }, 'leadrun stopped');
    fail(error instanceof Error ? error.message : String(error));
  }
}


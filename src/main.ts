// The process entry of `leadrun`: read the command line and the configuration, then run one admin command, or
// serve and work (src/service.ts, loaded only then).
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import type { Logger } from 'pino';
import { commandHelp, parseCommandLine, UsageError, USAGE, type CommandSpec, type Invocation } from './admin/cli.ts';
import type { AdminCommand, AdminDeps } from './admin/commands.ts';
import { claimDataDir, DataDirError, sendControlCommand } from './admin/control.ts';
import { PasswordInputError, readNewPassword } from './admin/prompt.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { AppError } from './domain/errors.ts';
import { loadSecretBox, type SecretBox } from './mail/secrets.ts';
import { redactSecrets } from './redact.ts';
import { claimOrWait, fail, open } from './startup.ts';

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

/** What an admin command needs of the installation beyond its database: the secrets key, read only when used. */
function adminSecrets(config: Config) {
  let box: SecretBox | null = null;
  return { secrets: () => (box ??= loadSecretBox(config.secretsKey, config.dataDir)), allowPrivateHosts: config.allowPrivateHosts };
}

/**
 * Most admin commands hold the embedded database for a second or two, too short for V8's optimizing compiler to pay
 * back what compiling PostgreSQL's hottest WebAssembly functions costs: they run on the baseline compiler's code alone
 * (a function it cannot compile still goes to the optimizing one). `leadrun workspace list` on the embedded database:
 * 1.5–1.8 s of CPU → 0.8–1.0 s. A lead import keeps the default, as `serve` and `worker` do: over 50,000 rows the
 * optimized code wins (6.3 s against 9.8 s on the bench's import; docs/PERFORMANCE.md).
 */
function compileWasmForShortUse(command: AdminCommand): void {
  if (command.command === 'leads.import') return;
  v8.setFlagsFromString('--no-wasm-dynamic-tiering');
  v8.setFlagsFromString('--no-wasm-tier-up');
}

async function runAdmin(config: Config, logger: Logger, command: AdminCommand, { spec, json }: { spec: CommandSpec; json: boolean }): Promise<void> {
  let result: unknown;
  // The migrate command applies the migrations itself, so that it can say which it applied.
  const migrateFirst = command.command !== 'migrate';
  if (config.databaseUrl) {
    const database = await open(config, logger, migrateFirst);
    try {
      result = await runAdminCommand({ db: database.db, clock: systemClock, migrate: () => database.migrate(), ...adminSecrets(config) }, command);
    } finally {
      await database.close();
    }
  } else {
    compileWasmForShortUse(command);
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
          const deps = { db: database.db, clock: systemClock, migrate: () => database.migrate(), ...adminSecrets(config) };
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
  process.stdout.write(`${json || !spec.human ? JSON.stringify(result, null, 2) : spec.human(result)}\n`);
  if (notice) (json ? process.stderr : process.stdout).write(`${notice}\n`);
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--version' || argv[0] === '-v') {
    process.stdout.write(`leadrun ${version()}\n`);
    return;
  }
  const asksHelp = argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
  const words = argv[0] === 'help' ? argv.slice(1) : argv;
  if (argv.length === 0 || (asksHelp && words.every((word) => word.startsWith('-')))) {
    process.stdout.write(`${USAGE}\n`);
    if (argv.length === 0) process.exitCode = 1;
    return;
  }
  if (asksHelp) {
    const help = commandHelp(words);
    if (!help) fail(`unknown command "${words.filter((word) => !word.startsWith('-')).join(' ')}" (see leadrun --help)`);
    process.stdout.write(`${help}\n`);
    return;
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
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration: ${error.message}`);
    throw error;
  }
  const isService = invocation.kind === 'service';
  const { pino } = await import('pino');
  // A key a client put where it does not belong (a URL, a field) is logged with its prefix only.
  const logger = pino({ level: isService ? config.logLevel : 'warn', base: { service: 'leadrun' }, hooks: { streamWrite: redactSecrets } }, pino.destination(isService ? 1 : 2));
  try {
    if (invocation.kind === 'service') {
      // DATA_DIR first, before loading the server: a second serve on it is refused at once.
      const claim = config.databaseUrl ? null : await claimOrWait(config, logger, invocation.http ? 'serve' : 'worker');
      await (await import('./service.ts')).runService(config, logger, { http: invocation.http, worker: invocation.worker }, claim);
    } else if (invocation.kind === 'password') {
      const password = await readNewPassword(invocation.email, { input: process.stdin, output: process.stderr });
      await runAdmin(config, logger, { command: 'user.password', email: invocation.email, password }, invocation);
    } else {
      await runAdmin(config, logger, invocation.command, invocation);
    }
  } catch (error) {
    if (error instanceof AppError || error instanceof DataDirError || error instanceof PasswordInputError) fail(error.message);
    // A service logs the failure with its stack; an admin command says it in one line, like every other error.
    if (isService) logger.fatal({ err: error }, 'leadrun stopped');
    fail(error instanceof Error ? error.message : String(error));
  }
}

await main(process.argv.slice(2));

// The process entry of `leadrun`: read the configuration, open the database, then serve, work or run one admin
// command, and shut down cleanly on SIGTERM or SIGINT.
import { readFileSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import { commandHelp, parseCommandLine, printable, UsageError, USAGE, type CommandSpec, type Invocation } from './admin/cli.ts';
import { runAdminCommand, type AdminCommand } from './admin/commands.ts';
import { claimDataDir, dataDirHolder, DataDirError, sendControlCommand, type DataDirClaim } from './admin/control.ts';
import { PasswordInputError, readNewPassword } from './admin/prompt.ts';
import { createOfflineEngine } from './agent/engines/offline.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createCpuPool, defaultThreadCount } from './cpu/pool.ts';
import { openDatabase, type Database } from './db/database.ts';
import { AppError } from './domain/errors.ts';
import { issueSetupToken } from './domain/setup-tokens.ts';
import { setupNeeded } from './domain/users.ts';
import { buildApp, createDeps } from './http/app.ts';
import { isLoopbackAddress } from './http/hosts.ts';
import { redactSecrets } from './http/security.ts';
import { pruneHandler, schedulePruning } from './jobs/prune.ts';
import { loadSecretBox, type SecretBox } from './mail/secrets.ts';
import { releaseMemoryWhenQuiet } from './memory-release.ts';
import { startTelemetry } from './telemetry.ts';

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** Every error of the program: one line on standard error (whatever a message holds), and exit code 1. */
function fail(message: string): never {
  process.stderr.write(`leadrun: ${printable(message)}\n`);
  process.exit(1);
}

async function open(config: Config, logger: Logger, migrate = true): Promise<Database> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onPoolError: (error) => logger.warn({ err: error }, 'a database connection was lost'),
  });
  if (migrate) await database.migrate();
  return database;
}

/**
 * Embedded mode: take DATA_DIR. Another serve or worker holding it is refused at once, naming it; a short-lived
 * admin command that holds it is waited for a little.
 */
async function claimOrWait(config: Config, logger: Logger, role: 'serve' | 'worker'): Promise<DataDirClaim> {
  const deadline = Date.now() + 15_000;
  let told = false;
  for (;;) {
    const claim = await claimDataDir(config.dataDir, role);
    if (claim) return claim;
    const holder = await dataDirHolder(config.dataDir);
    if (holder && (holder.role === 'serve' || holder.role === 'worker')) {
      fail(`DATA_DIR ${config.dataDir} is in use by another leadrun process (leadrun ${holder.role}, pid ${holder.pid}); stop it or set another DATA_DIR`);
    }
    if (Date.now() > deadline) {
      fail(`DATA_DIR ${config.dataDir} is in use by another leadrun process${holder ? ` (pid ${holder.pid})` : ''}; stop it or set another DATA_DIR`);
    }
    if (!told) logger.info({ pid: holder?.pid ?? null }, 'DATA_DIR is held by a leadrun command; waiting for it to finish');
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** What an admin command needs of the installation beyond its database: the secrets key, read only when used. */
function adminSecrets(config: Config) {
  let box: SecretBox | null = null;
  return { secrets: () => (box ??= loadSecretBox(config.secretsKey, config.dataDir)), allowPrivateHosts: config.allowPrivateHosts };
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

/** The line `serve` prints on a terminal once it answers requests. */
function readyLine(publicUrl: string, setupNeeded: boolean, setupToken: string | null): string {
  const setup = setupToken ? ` — open it to set up, with the setup token ${setupToken}` : ' — open it to set up';
  return `leadrun is ready at ${publicUrl}${setupNeeded ? setup : ''}`;
}

/**
 * Runs one worker process works at once. A run on the model engine spends nearly all its time waiting on the model,
 * holding no thread and no database connection, so there are enough for every call the limiter allows to be in
 * flight; the CPU work of the steps stays in the CPU pool, bounded by its threads.
 */
function runSlots(config: Config): number {
  return config.llm ? Math.max(config.workerConcurrency, config.llm.maxConcurrency) : config.workerConcurrency;
}

async function runService(config: Config, logger: Logger, mode: { http: boolean; worker: boolean }): Promise<void> {
  const claim = config.databaseUrl ? null : await claimOrWait(config, logger, mode.http ? 'serve' : 'worker');
  const database = await open(config, logger);
  const telemetry = await startTelemetry(config.otelEndpoint);
  // The CPU pool serves the worker's steps and the API's lead imports; it starts a thread only when a task comes.
  const cpu = createCpuPool({ budgetMs: config.cpuBudgetMs, threads: config.cpuThreads ?? defaultThreadCount(mode.http) });
  // The model engine (the AI SDK) and the worker are loaded only by a process that uses them.
  const engine = !mode.worker ? null : config.llm
    ? (await import('./agent/engines/model.ts')).createModelEngine({
      baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, model: config.llm.model, timeoutMs: config.llm.timeoutMs,
      limiter: (await import('./agent/engines/limiter.ts')).createModelCallLimiter({
        db: database.db, clock: systemClock, baseUrl: config.llm.baseUrl, model: config.llm.model, max: config.llm.maxConcurrency, logger,
      }),
    })
    : createOfflineEngine(cpu);
  const deps = createDeps(config, database, systemClock, (error) => logger.warn({ err: error }, 'could not record a key use'), cpu);
  claim?.serve((command) => runAdminCommand({
    db: database.db, clock: systemClock, migrate: () => database.migrate(), cpu, secrets: deps.secrets, allowPrivateHosts: config.allowPrivateHosts,
  }, command));

  // Runs, e-mail deliveries, reply checks, webhook deliveries and the pruning of finished jobs are kinds of the one
  // job mechanism, worked by one runner wherever the worker runs.
  const runner = engine
    ? new (await import('./jobs/runner.ts')).JobRunner({
      database,
      clock: systemClock,
      config,
      secrets: deps.secrets,
      cpu,
      logger,
      metrics: deps.metrics,
      handlers: [
        (await import('./worker/run-handler.ts')).runHandler({
          engine,
          metrics: deps.metrics,
          concurrency: runSlots(config),
          leaseMs: config.runLeaseMs,
          retryBaseMs: config.stepRetryBaseMs,
          tokenBudget: config.runTokenBudget,
          requestModel: config.llm?.model ?? null,
          allowPrivateHosts: config.allowPrivateHosts,
          ...(config.llm ? { giveUpAfterMs: config.llm.giveUpAfterMs } : {}),
        }),
        (await import('./mail/deliver.ts')).deliveryHandler({ leaseMs: config.runLeaseMs }),
        (await import('./mail/replies.ts')).replyCheckHandler,
        (await import('./domain/webhooks/deliver.ts')).webhookHandler({ leaseMs: config.runLeaseMs, retryDelaysMs: config.webhookRetryDelaysMs ?? undefined }),
        pruneHandler,
      ],
    })
    : null;
  if (runner) {
    await schedulePruning(database.db, systemClock.now());
    await runner.start();
  }

  const app = mode.http ? await buildApp(deps, { logger }) : null;
  if (app) {
    // An empty installation reachable from other machines is set up only with a token printed here, so that the
    // first stranger to open it cannot make themselves its admin (src/domain/setup-tokens.ts).
    const needsSetup = await setupNeeded(database.db);
    const setupToken = needsSetup && !isLoopbackAddress(config.host) ? await issueSetupToken(database.db, systemClock) : null;
    await app.listen({ port: config.port, host: config.host });
    if (process.stdout.isTTY) {
      // A person started it: one line that says where to go, instead of a JSON log line.
      process.stdout.write(`${readyLine(config.publicUrl, needsSetup, setupToken)}\n`);
    } else {
      // A warning, so that it is written at the usual log levels: nobody can set up without it.
      if (setupToken) logger.warn({ url: config.publicUrl, setupToken }, 'leadrun is not set up yet: open it and give this setup token');
      logger.info({ url: config.publicUrl, database: database.kind, worker: Boolean(runner), engine: engine?.name ?? null }, 'leadrun is serving');
    }
  }

  const memoryRelease = releaseMemoryWhenQuiet();
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    memoryRelease.stop();
    // Stop accepting requests and let those in flight finish; then hand runs and jobs back; then close the database.
    await app?.close();
    await runner?.stop();
    await cpu.close();
    await deps.lastUsed.flush();
    await telemetry.shutdown();
    await database.close();
    await claim?.release();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
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
  // A key a client put where it does not belong (a URL, a field) is logged with its prefix only.
  const logger = pino({ level: isService ? config.logLevel : 'warn', base: { service: 'leadrun' }, hooks: { streamWrite: redactSecrets } }, pino.destination(isService ? 1 : 2));
  try {
    if (invocation.kind === 'service') {
      await runService(config, logger, { http: invocation.http, worker: invocation.worker });
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

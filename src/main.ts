// The process entry of `leadrun`: read the configuration, open the database, then serve, work or run one admin
// command, and shut down cleanly on SIGTERM or SIGINT.
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino, type Logger } from 'pino';
import { runAdminCommand, type AdminCommand } from './admin/commands.ts';
import { claimDataDir, dataDirHolder, DataDirError, sendControlCommand, type DataDirClaim } from './admin/control.ts';
import { createOfflineEngine } from './agent/engines/offline.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createCpuPool, defaultThreadCount } from './cpu/pool.ts';
import { openDatabase, type Database } from './db/database.ts';
import { AppError } from './domain/errors.ts';
import { IMPORT_MAX_BYTES } from './domain/lead-import-format.ts';
import type { LeadImportResult } from './domain/lead-import.ts';
import { setupNeeded } from './domain/users.ts';
import { buildApp, createDeps } from './http/app.ts';
import { redactSecrets } from './http/security.ts';
import { startTelemetry } from './telemetry.ts';

const USAGE = `leadrun: leads, calls and agent runs that draft sales e-mails

Usage:
  leadrun serve [--no-worker]        HTTP API with an in-process run worker
  leadrun worker                     only the run worker (start as many as you like on PostgreSQL)
  leadrun migrate                    apply database migrations
  leadrun workspace create --name N [--plan free|pro] [--admin-email E] [--json]
  leadrun key create --workspace ID --name N --scopes a,b [--json]
  leadrun key revoke KEY_ID
  leadrun audit list --workspace ID [--limit N] [--json]
  leadrun leads import FILE --workspace ID [--dedupe email] [--dry-run] [--map FIELD:COLUMN] [--json]
  leadrun user password --email E    set a user's web UI password, read from standard input

Scopes: leads:read, leads:write, runs:read, runs:write.
Configuration comes from the environment; see README.md.
'leadrun COMMAND --help' tells more about a command; 'leadrun --version' prints the version.`;

interface CommandHelp {
  usage: string;
  about: string;
  options: Array<[flag: string, meaning: string]>;
}

const JSON_OPTION: [string, string] = ['--json', 'print the result as JSON'];

/** What `leadrun COMMAND --help` prints, by the command's words. */
const COMMAND_HELP: Record<string, CommandHelp> = {
  serve: {
    usage: 'leadrun serve [--no-worker]',
    about: 'Serves the HTTP API and the web UI, with an in-process run worker.',
    options: [['--no-worker', 'no in-process worker: run `leadrun worker` processes instead (PostgreSQL)']],
  },
  worker: {
    usage: 'leadrun worker',
    about: 'Runs only the run worker; start as many as you like on PostgreSQL.',
    options: [],
  },
  migrate: {
    usage: 'leadrun migrate [--json]',
    about: 'Applies the database migrations not applied yet (serve and worker apply them too).',
    options: [JSON_OPTION],
  },
  'workspace create': {
    usage: 'leadrun workspace create --name N [--plan free|pro] [--admin-email E] [--json]',
    about: 'Creates a workspace and its admin user.',
    options: [
      ['--name N', 'the name of the workspace (required)'],
      ['--plan free|pro', 'its plan (default free)'],
      ['--admin-email E', 'the e-mail of its admin user'],
      JSON_OPTION,
    ],
  },
  'key create': {
    usage: 'leadrun key create --workspace ID --name N --scopes a,b [--json]',
    about: 'Creates an API key and prints it; this is the only time it is shown.',
    options: [
      ['--workspace ID', 'the workspace the key belongs to (required)'],
      ['--name N', 'a name that says who uses the key (required)'],
      ['--scopes a,b', 'comma-separated: leads:read, leads:write, runs:read, runs:write (required)'],
      JSON_OPTION,
    ],
  },
  'key revoke': {
    usage: 'leadrun key revoke KEY_ID [--json]',
    about: 'Revokes an API key at once; revoking it again keeps the first time.',
    options: [JSON_OPTION],
  },
  'audit list': {
    usage: 'leadrun audit list --workspace ID [--limit N] [--json]',
    about: "Lists a workspace's audit entries, newest first.",
    options: [
      ['--workspace ID', 'the workspace (required)'],
      ['--limit N', 'how many entries, 1 to 1000 (default 50)'],
      JSON_OPTION,
    ],
  },
  'leads import': {
    usage: 'leadrun leads import FILE --workspace ID [--dedupe email] [--dry-run] [--map FIELD:COLUMN]... [--json]',
    about: 'Imports a CSV file (a header row, then a row per lead) or a JSON file ({"leads": […]}, named *.json) of leads, '
      + 'as POST /api/v1/leads/import does: valid rows are written in one transaction, invalid rows reported and skipped.',
    options: [
      ['--workspace ID', 'the workspace to import into (required)'],
      ['--dedupe email', 'update the lead with the same e-mail (any case) instead of creating a second'],
      ['--dry-run', 'check the file and count, write nothing'],
      ['--map FIELD:COLUMN', 'read a field from the column with that header, e.g. --map "email:Work E-mail" (repeatable)'],
      JSON_OPTION,
    ],
  },
  'user password': {
    usage: 'leadrun user password --email E [--json]',
    about: "Sets a user's web UI password, read from standard input (never from the command line).",
    options: [['--email E', 'the e-mail of the user (required)'], JSON_OPTION],
  },
};

/** The help of the command the words name (`key` names both key commands); null for no known command. */
function commandHelp(words: string[]): string | null {
  const named = words.filter((word) => !word.startsWith('-')).slice(0, 2);
  const exact = COMMAND_HELP[named.join(' ')] ?? COMMAND_HELP[named[0] ?? ''];
  const matches = exact ? [exact] : Object.entries(COMMAND_HELP).filter(([key]) => key.split(' ')[0] === named[0]).map(([, help]) => help);
  if (matches.length === 0) return null;
  return matches.map(({ usage, about, options }) => {
    const width = Math.max(0, ...options.map(([flag]) => flag.length)) + 2;
    const lines = [`Usage: ${usage}`, '', about];
    if (options.length) lines.push('', 'Options:', ...options.map(([flag, meaning]) => `  ${flag.padEnd(width)}${meaning}`));
    return lines.join('\n');
  }).join('\n\n');
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

class UsageError extends Error {}

function fail(message: string, code = 1): never {
  process.stderr.write(`leadrun: ${message}\n`);
  process.exit(code);
}

function print(value: unknown, json: boolean, human: (value: never) => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human(value as never)}\n`);
}

function requireText(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value;
}

/** Parses the words after `leadrun` into an admin command, or null for serve/worker. */
function parseCommand(argv: string[], stdin: () => string): { command: AdminCommand; json: boolean } | { run: 'serve' | 'worker'; worker: boolean } {
  const [first, second, ...rest] = argv;
  const options = {
    name: { type: 'string' },
    plan: { type: 'string' },
    'admin-email': { type: 'string' },
    workspace: { type: 'string' },
    scopes: { type: 'string' },
    limit: { type: 'string' },
    email: { type: 'string' },
    dedupe: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    map: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
    'no-worker': { type: 'boolean', default: false },
  } as const;
  const words = first === 'serve' || first === 'worker' || first === 'migrate' ? argv.slice(1) : rest;
  let parsed;
  try {
    parsed = parseArgs({ args: words, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const json = values.json;
  const key = `${first ?? ''} ${['serve', 'worker', 'migrate'].includes(first ?? '') ? '' : second ?? ''}`.trim();
  switch (key) {
    case 'serve':
      return { run: 'serve', worker: !values['no-worker'] };
    case 'worker':
      return { run: 'worker', worker: true };
    case 'migrate':
      return { command: { command: 'migrate' }, json };
    case 'workspace create':
      return {
        command: { command: 'workspace.create', name: requireText(values.name, '--name'), plan: values.plan ?? 'free', adminEmail: values['admin-email'] ?? null },
        json,
      };
    case 'key create':
      return {
        command: {
          command: 'key.create',
          workspaceId: requireText(values.workspace, '--workspace'),
          name: requireText(values.name, '--name'),
          scopes: requireText(values.scopes, '--scopes').split(',').map((s) => s.trim()).filter(Boolean),
        },
        json,
      };
    case 'key revoke':
      return { command: { command: 'key.revoke', keyId: requireText(positionals[0], 'KEY_ID') }, json };
    case 'audit list': {
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      return { command: { command: 'audit.list', workspaceId: requireText(values.workspace, '--workspace'), limit }, json };
    }
    case 'leads import': {
      const path = requireText(positionals[0], 'FILE');
      const workspaceId = requireText(values.workspace, '--workspace');
      if (values.dedupe !== undefined && values.dedupe !== 'email') throw new UsageError('--dedupe takes one value: email');
      return {
        command: {
          command: 'leads.import',
          workspaceId,
          format: path.toLowerCase().endsWith('.json') ? 'json' : 'csv',
          content: readImportFile(path).toString('base64'),
          dedupe: values.dedupe ?? null,
          dryRun: values['dry-run'],
          map: values.map ?? [],
        },
        json,
      };
    }
    case 'user password': {
      const email = requireText(values.email, '--email');
      // From standard input, never from the command line, where other users could read it in the process list.
      const password = stdin().replace(/\r?\n$/, '');
      if (!password) throw new UsageError('give the password on standard input, e.g. leadrun user password --email E < file');
      return { command: { command: 'user.password', email, password }, json };
    }
    default:
      throw new UsageError(first ? `unknown command "${argv.join(' ')}"` : 'no command given');
  }
}

/** The file of `leads import`, refused at once when it is not a readable file within the import's size limit. */
function readImportFile(path: string): Buffer {
  try {
    const { size } = statSync(path);
    if (size > IMPORT_MAX_BYTES) {
      throw new AppError('payload_too_large', `${path} is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MiB, the most one import takes; split it into several`);
    }
    return readFileSync(path);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new AppError('invalid_request', `cannot read ${path}: ${why}`);
  }
}

/** An import's answer for a person: the counts, and the first errors by row. */
function humanImport(result: LeadImportResult): string {
  const lines = [`${result.dryRun ? 'Dry run (nothing written): would create' : 'Created'} ${result.created}, `
    + `${result.dryRun ? 'update' : 'updated'} ${result.updated}, skipped ${result.skipped} of ${result.rows} rows.`];
  const ignored = (result.columns ?? []).filter((c) => c.field === null).map((c) => c.header);
  if (ignored.length > 0) lines.push(`Ignored columns: ${ignored.join(', ')}`);
  for (const e of result.errors.slice(0, 20)) lines.push(`  row ${e.row}: ${e.field} ${e.message}`);
  if (result.errorCount > 20) lines.push(`  … and ${result.errorCount - 20} more (--json lists up to ${result.errors.length})`);
  return lines.join('\n');
}

function humanResult(command: AdminCommand, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (command.command) {
    case 'workspace.create':
      return `Created workspace ${r.id} (${r.name}, plan ${r.plan}); admin user ${r.adminUserId}`;
    case 'key.create':
      return `Created key ${r.id} with scopes ${(r.scopes as string[]).join(', ')}.\n\n  ${r.key}\n\nThis is the only time the key is shown: store it now.`;
    case 'key.revoke':
      return `Revoked key ${r.id} at ${r.revokedAt}`;
    case 'audit.list':
      return (result as Record<string, unknown>[]).map((e) =>
        `${e.occurredAt}  ${String(e.source).padEnd(3)}  ${String(e.outcome).padEnd(7)}  ${e.status ?? '-'}  ${e.action}${e.target ? `  ${(e.target as { type: string; id: string }).type}:${(e.target as { id: string }).id}` : ''}`).join('\n') || '(no entries)';
    case 'leads.import':
      return humanImport(result as LeadImportResult);
    case 'user.password':
      return `Set the password of ${r.email}; they can sign in to the web UI now.`;
    case 'migrate': {
      const applied = (r.applied as string[]);
      return applied.length ? `Applied ${applied.join(', ')}` : 'The database is up to date.';
    }
  }
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

async function runAdmin(config: Config, logger: Logger, command: AdminCommand, json: boolean): Promise<void> {
  let result: unknown;
  // The migrate command applies the migrations itself, so that it can say which it applied.
  const migrateFirst = command.command !== 'migrate';
  if (config.databaseUrl) {
    const database = await open(config, logger, migrateFirst);
    try {
      result = await runAdminCommand({ db: database.db, clock: systemClock, migrate: () => database.migrate() }, command);
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
          const deps = { db: database.db, clock: systemClock, migrate: () => database.migrate() };
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
  print(result, json, (value) => humanResult(command, value));
}

/** The line `serve` prints on a terminal once it answers requests. */
function readyLine(publicUrl: string, setupNeeded: boolean): string {
  return `leadrun is ready at ${publicUrl}${setupNeeded ? ' — open it to set up' : ''}`;
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
    })
    : createOfflineEngine(cpu);
  const deps = createDeps(config, database, systemClock, (error) => logger.warn({ err: error }, 'could not record a key use'), cpu);
  claim?.serve((command) => runAdminCommand({ db: database.db, clock: systemClock, migrate: () => database.migrate(), cpu }, command));

  const worker = engine
    ? new (await import('./worker/worker.ts')).Worker({
      database,
      clock: systemClock,
      engine,
      cpu,
      logger,
      metrics: deps.metrics,
      concurrency: config.workerConcurrency,
      leaseMs: config.runLeaseMs,
      retryBaseMs: config.stepRetryBaseMs,
      tokenBudget: config.runTokenBudget,
      requestModel: config.llm?.model ?? null,
      allowPrivateHosts: config.researchAllowPrivateHosts,
    })
    : null;
  await worker?.start();

  const app = mode.http ? await buildApp(deps, { logger }) : null;
  if (app) {
    await app.listen({ port: config.port, host: config.host });
    if (process.stdout.isTTY) {
      // A person started it: one line that says where to go, instead of a JSON log line.
      process.stdout.write(`${readyLine(config.publicUrl, await setupNeeded(database.db))}\n`);
    } else {
      logger.info({ url: config.publicUrl, database: database.kind, worker: Boolean(worker), engine: engine?.name ?? null }, 'leadrun is serving');
    }
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Stop accepting requests and let those in flight finish; then hand runs back; then close the database.
    await app?.close();
    await worker?.stop();
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
    if (argv.length === 0) process.exitCode = 2;
    return;
  }
  if (asksHelp) {
    const help = commandHelp(words);
    if (!help) fail(`unknown command "${words.join(' ')}"\n\n${USAGE}`, 2);
    process.stdout.write(`${help}\n`);
    return;
  }
  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(argv, () => readFileSync(0, 'utf8'));
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message}\n\n${USAGE}`, 2);
    if (error instanceof AppError) fail(error.message);
    throw error;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration: ${error.message}`);
    throw error;
  }
  const isService = 'run' in parsed;
  // A key a client put where it does not belong (a URL, a field) is logged with its prefix only.
  const logger = pino({ level: isService ? config.logLevel : 'warn', base: { service: 'leadrun' }, hooks: { streamWrite: redactSecrets } }, pino.destination(isService ? 1 : 2));
  try {
    if ('run' in parsed) {
      await runService(config, logger, { http: parsed.run === 'serve', worker: parsed.worker });
    } else {
      await runAdmin(config, logger, parsed.command, parsed.json);
    }
  } catch (error) {
    if (error instanceof AppError || error instanceof DataDirError) fail(error.message);
    // A service logs the failure with its stack; an admin command says it in one line, like every other error.
    if (isService) logger.fatal({ err: error }, 'leadrun stopped');
    fail(error instanceof Error ? error.message : String(error));
  }
}

await main(process.argv.slice(2));

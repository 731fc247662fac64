// What every leadrun command does first, whether it serves or runs one admin command: open the database, and
// (embedded mode) take DATA_DIR; and how it fails, with one line to say.
import type { Logger } from 'pino';
import { claimDataDir, dataDirHolder, type DataDirClaim } from './admin/control.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';

/** An error of the program, said as it is: src/program.ts writes it as one line on standard error, with exit code 1. */
export class Failure extends Error {}

export function fail(message: string): never {
  throw new Failure(message);
}

export async function open(config: Config, logger: Logger, migrate = true): Promise<Database> {
  // Loaded here, not above: a command that fails before it needs the database (help, a usage mistake, a DATA_DIR
  // that cannot be used) starts without the database drivers.
  const { openDatabase } = await import('./db/database.ts');
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolWaitMs: config.databasePoolWaitMs,
    onPoolError: (error) => logger.warn({ err: error }, 'a database connection was lost'),
  });
  if (migrate) await database.migrate();
  return database;
}

/**
 * Embedded mode: take DATA_DIR. Another serve or worker holding it is refused at once, naming it; a short-lived
 * admin command that holds it is waited for a little.
 */
export async function claimOrWait(config: Config, logger: Logger, role: 'serve' | 'worker'): Promise<DataDirClaim> {
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

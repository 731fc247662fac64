// `leadrun serve` and `leadrun worker`: the HTTP API and UI, the job runner, or both, in one process until a signal
// stops it. Loaded only by those commands: an admin command starts without Fastify, its routes and the worker.
import type { Logger } from 'pino';
import type { DataDirClaim } from './admin/control.ts';
import { runAdminCommand } from './admin/commands.ts';
import { createOfflineEngine } from './agent/engines/offline.ts';
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import { createCpuPool, defaultThreadCount } from './cpu/pool.ts';
import { openConfiguredDatabase } from './db/database.ts';
import { REFRESH_EVERY_MS, refreshStatisticsEvery } from './db/statistics.ts';
import { issueSetupToken } from './domain/members/setup-tokens.ts';
import { setupNeeded } from './domain/members/users.ts';
import { buildApp, createDeps } from './http/app.ts';
import { isLoopbackAddress } from './http/hosts.ts';
import { schedulePruning } from './jobs/handlers/prune.ts';
import { releaseMemoryWhenQuiet } from './observability/memory-release.ts';
import { startTelemetry } from './observability/telemetry.ts';

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

/** `claim`: DATA_DIR, taken by the caller before it loaded this module (embedded mode), or null on PostgreSQL. */
export async function runService(config: Config, logger: Logger, mode: { http: boolean; worker: boolean }, claim: DataDirClaim | null): Promise<void> {
  const database = await openConfiguredDatabase(config, logger);
  const telemetry = await startTelemetry(config.otelEndpoint);
  // The CPU pool serves the worker's steps and the API's lead imports; it starts a thread only when a task comes.
  const cpu = createCpuPool({ budgetMs: config.cpuBudgetMs, threads: config.cpuThreads ?? defaultThreadCount(mode.http) });
  // The model engine (the AI SDK) and the worker are loaded only by a process that uses them.
  const model = mode.worker && config.llm ? {
    baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, model: config.llm.model, timeoutMs: config.llm.timeoutMs,
    limiter: (await import('./agent/engines/limiter.ts')).createModelCallLimiter({
      db: database.db, clock: systemClock, baseUrl: config.llm.baseUrl, model: config.llm.model, max: config.llm.maxConcurrency, logger,
    }),
  } : null;
  const engine = !mode.worker ? null : model
    ? (await import('./agent/engines/model.ts')).createModelEngine(model)
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
      handlers: (await import('./jobs/kinds.ts')).jobKinds({ config, engine, model, metrics: deps.metrics, runSlots: runSlots(config) }),
    })
    : null;
  if (runner) {
    await schedulePruning(database.db, systemClock.now());
    await (await import('./jobs/handlers/touch-tick.ts')).scheduleSequenceTicks(database.db, systemClock.now());
    await runner.start();
  }

  const app = mode.http ? await buildApp(deps, { logger }) : null;
  if (app) {
    // An empty installation reachable from other machines is set up only with a token printed here, so that the
    // first stranger to open it cannot make themselves its admin (src/domain/members/setup-tokens.ts).
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

  // The embedded database has no autovacuum to keep the planner's statistics (src/db/statistics.ts): this process,
  // the only one that opens it, does.
  const statistics = database.kind === 'pglite'
    ? refreshStatisticsEvery(() => database.refreshStatistics(), REFRESH_EVERY_MS, (error) => logger.warn({ err: error }, 'could not analyze the database'))
    : null;
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
    await statistics?.stop();
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

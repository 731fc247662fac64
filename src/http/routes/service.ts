// Service endpoints that need no key: liveness, readiness and metrics.
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { AppInstance } from '../app.ts';
import { AppError } from '../../domain/errors.ts';
import { problem } from '../schemas.ts';
import { jobStats } from '../../jobs/queue.ts';

const READY_TIMEOUT_MS = 2_000;

export default async function serviceRoutes(app: AppInstance): Promise<void> {
  const { db, metrics, database, clock } = app.deps;

  app.get('/healthz', {
    schema: { operationId: 'getHealth', summary: 'Liveness: the process answers', tags: ['Service'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: {
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers',
      tags: ['Service'],
      response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.Enum(['postgres', 'pglite']) }), 503: problem('The database does not answer.') },
    },
  }, async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AppError('unavailable', 'The database did not answer in time.')), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([sql`SELECT 1`.execute(db), timeout]);
    } catch (error) {
      throw error instanceof AppError ? error : new AppError('unavailable', 'The database cannot be reached.');
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ok' as const, database: database.kind };
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    // The queue's depth is the database's to tell; a database that does not answer leaves the last values out.
    metrics.observeJobs(await jobStats(db, clock.now()).catch(() => []));
    return metrics.registry.metrics();
  });
}

// Service endpoints that need no key: liveness, readiness and metrics.
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { AppInstance } from '../app-instance.ts';
import { AppError } from '../../domain/errors.ts';
import { answer, problem } from '../../schemas/index.ts';
import { jobsTable } from '../../jobs/queue.ts';
import { runStats } from '../../jobs/sql/run/runStats.ts';

const READY_TIMEOUT_MS = 2_000;
/** Even a route that reads nothing refuses a query string the database could not store (src/http/security.ts). */
const INVALID_QUERY = problem('The query string holds a NUL character.');

export default async function serviceRoutes(app: AppInstance): Promise<void> {
  const { db, metrics, database, clock } = app.deps;

  app.get('/healthz', {
    schema: {
      operationId: 'getHealth',
      summary: 'Liveness: the process answers',
      description: 'Answers as long as the process can answer HTTP, whatever the database does; for a liveness probe. No key needed, never rate limited.',
      tags: ['Service'],
      response: {
        200: answer('The process answers.', Type.Object({ status: Type.Literal('ok') })),
        400: INVALID_QUERY,
      },
    },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: {
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers',
      description: `Answers 200 when the database answers within ${READY_TIMEOUT_MS / 1000} s, and 503 when it does not; for a readiness probe `
        + 'or a load balancer. No key needed, never rate limited.',
      tags: ['Service'],
      response: {
        200: answer('The database answers.', Type.Object({
          status: Type.Literal('ok'),
          database: Type.Enum(['postgres', 'pglite'], { description: 'Which database this server uses.' }),
        })),
        400: INVALID_QUERY,
        503: problem('The database does not answer.'),
      },
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
    // The queue's depth is the database's to tell, for every kind of every source; a database that does not answer
    // leaves the last values out.
    const now = clock.now();
    metrics.observeJobs(await Promise.all([jobsTable.stats(db, now), runStats(db, now)]).then((kinds) => kinds.flat(), () => []));
    return metrics.registry.metrics();
  });
}

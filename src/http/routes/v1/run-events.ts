// GET /api/v1/runs/{id}/events: what a run did, step by step. As Server-Sent Events (Accept: text/event-stream)
// the stream follows the run live and ends when the run rests; otherwise the events so far, as JSON.
import { Type } from 'typebox';
import type { AppInstance } from '../../app.ts';
import { principalOf } from '../../auth.ts';
import { authProblems, IdParam } from '../../schemas.ts';
import { invalid, notFound } from '../../../domain/errors.ts';
import { listRunEvents } from '../../../domain/run-events.ts';
import { isUuid } from '../../../domain/validation.ts';

const AT_REST = new Set(['AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED']);
const HEARTBEAT_MS = 15_000;
/** Event ids, given back as `after` or `Last-Event-ID`, are whole numbers no larger than this. */
const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER;

/** The `Last-Event-ID` header as an event id: a non-negative integer in decimal digits, at most MAX_EVENT_ID. */
function lastEventIdOf(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const id = typeof header === 'string' && /^[0-9]+$/.test(header) ? Number(header) : Number.NaN;
  if (!(id <= MAX_EVENT_ID)) throw invalid('Last-Event-ID', `must be an event id: an integer from 0 to ${MAX_EVENT_ID}`);
  return id;
}

export const RunEvent = Type.Object({
  id: Type.Integer({ description: 'Increases through the log; give the last one seen as Last-Event-ID (or ?after=) to resume.' }),
  type: Type.Enum([
    'run.queued', 'step.started', 'step.retrying', 'step.completed', 'step.failed', 'run.awaiting_approval',
    'run.failed', 'run.cancelled', 'run.approved', 'run.rejected', 'run.regenerating',
  ]),
  node: Type.Union([Type.String(), Type.Null()]),
  attempt: Type.Union([Type.Integer(), Type.Null()]),
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  engine: Type.Union([Type.String(), Type.Null()]),
  model: Type.Union([Type.String(), Type.Null()]),
  usage: Type.Union([Type.Object({ inputTokens: Type.Integer(), outputTokens: Type.Integer() }), Type.Null()]),
  error: Type.Union([Type.String({ description: 'The error of a failed attempt, or the feedback of a rejection.' }), Type.Null()]),
  at: Type.String({ format: 'date-time' }),
}, { $id: 'RunEvent' });

export default async function runEventRoutes(app: AppInstance): Promise<void> {
  const { db, runEvents } = app.deps;

  app.get('/api/v1/runs/:id/events', {
    config: { scope: 'runs:read' },
    schema: {
      summary: "A run's events, or a live stream of them",
      description: 'With `Accept: text/event-stream`, Server-Sent Events: every event so far, then each new one as it happens '
        + '(`id`, `event` = the type, `data` = the event as JSON), ending with an `end` event once the run rests '
        + '(AWAITING_APPROVAL, COMPLETED, REJECTED, FAILED or CANCELLED). Resume with `Last-Event-ID`. '
        + 'Otherwise `{"data": [events]}`, oldest first.',
      tags: ['Runs'],
      params: IdParam,
      querystring: Type.Object({ after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_EVENT_ID, description: 'Only events after this id.' })) }),
      response: {
        200: {
          description: 'The events.',
          content: {
            'application/json': { schema: Type.Object({ data: Type.Array(RunEvent) }) },
            'text/event-stream': { schema: RunEvent },
          },
        },
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const runId = request.params.id;
    const statusOf = async () => isUuid(runId)
      ? (await db.selectFrom('runs').select('status').where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst())?.status
      : undefined;
    let after = request.query.after ?? lastEventIdOf(request.headers['last-event-id']) ?? 0;
    if (!(await statusOf())) throw notFound('Run');

    if (!request.headers.accept?.includes('text/event-stream')) {
      reply.type('application/json; charset=utf-8');
      return { data: await listRunEvents(db, workspaceId, runId, after, 1000) };
    }

    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    let closed = false;
    const watch = runEvents.watch(runId);
    request.raw.once('close', () => { closed = true; watch.stop(); });
    try {
      while (!closed && !runEvents.closed) {
        watch.reset();
        // The status first, then the events: an event is written with the change it records, so every event up
        // to that status is visible by the time it is read.
        const status = await statusOf();
        const events = await listRunEvents(db, workspaceId, runId, after, 500);
        for (const event of events) {
          raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
          after = event.id;
        }
        if (events.length === 500) continue;
        if (!status || AT_REST.has(status)) {
          raw.write(`event: end\ndata: ${JSON.stringify({ status: status ?? null })}\n\n`);
          break;
        }
        if (!watch.changed()) {
          await watch.next(HEARTBEAT_MS);
          if (!watch.changed() && !closed) raw.write(': still running\n\n');
        }
      }
    } catch (error) {
      request.log.warn({ err: error }, 'run event stream stopped');
    } finally {
      watch.stop();
      raw.end();
    }
  });
}

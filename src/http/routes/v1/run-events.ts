// GET /api/v1/runs/{id}/events: what a run did, step by step. As Server-Sent Events (Accept: text/event-stream)
// the stream follows the run live and ends when the run rests; otherwise the events so far, as JSON.
// A stream is one request for the rate limit, holds one of its key's (or user's) few stream slots while open, and
// ends when that key is revoked or that session ends (RunEventHub).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf, SESSION_COOKIE } from '../../auth.ts';
import {
  authProblems, IdParam, Int32, Int64, MESSAGE_MAX, MODEL_NAME_MAX, RunStatus, StepNode, Timestamp,
} from '../../../schemas/index.ts';
import { rateLimitKey } from '../../security.ts';
import { STREAM_RETRY_AFTER_SECONDS, StreamSlots } from '../../stream-slots.ts';
import { sessionCredential, type Credential } from '../../../domain/keys/credentials.ts';
import { AppError, invalid, notFound } from '../../../domain/errors.ts';
import { readRunProgress } from '../../../domain/runs/events.ts';

const HEARTBEAT_MS = 15_000;
const JSON_PAGE = 1000;
/** Event ids, given back as `after` or `Last-Event-ID`, are whole numbers no larger than this. */
const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER;

/** The `Last-Event-ID` header as an event id: a non-negative integer in decimal digits, at most MAX_EVENT_ID. */
function lastEventIdOf(header: string | string[] | undefined): number | null {
  if (header === undefined) return null;
  const id = typeof header === 'string' && /^[0-9]+$/.test(header) ? Number(header) : Number.NaN;
  if (!(id <= MAX_EVENT_ID)) throw invalid('Last-Event-ID', `must be an event id: an integer from 0 to ${MAX_EVENT_ID}`);
  return id;
}

/** What opened the stream: its end follows that key's revocation or that session's end. */
function credentialOf(request: FastifyRequest): Credential {
  const principal = principalOf(request);
  if (principal.source === 'api' && principal.keyId) return { kind: 'key', id: principal.keyId };
  return sessionCredential(request.cookies[SESSION_COOKIE] ?? '');
}

export const RunEvent = Type.Object({
  id: Int64({ minimum: 1, description: "The event's number within its run: 1, 2, 3… Give the last one seen as Last-Event-ID (or ?after=) to resume." }),
  type: Type.Enum([
    'run.queued', 'step.started', 'step.retrying', 'step.completed', 'step.failed', 'run.awaiting_approval',
    'run.failed', 'run.cancelled', 'run.approved', 'run.approval_undone', 'run.rejected', 'run.regenerating',
    'draft.edited', 'draft.delivery_queued', 'draft.delivery_retrying', 'draft.sent', 'draft.saved_to_mailbox',
    'draft.delivery_failed', 'draft.replied', 'draft.delivery_scheduled', 'draft.delivery_cancelled', 'draft.suppressed', 'draft.bounced',
    'sequence.enrolled', 'sequence.stopped', 'sequence.paused', 'sequence.resumed', 'sequence.finished',
    'touch.drafted', 'touch.awaiting_approval', 'touch.approved', 'touch.sent', 'touch.skipped',
    'reply.classified', 'reply.sequence_stopped', 'reply.sequence_paused',
    'reply.sequence_resumed', 'reply.address_suppressed', 'reply.lead_qualified', 'reply.response_requested', 'reply.next_action_set',
  ], { description: 'A follow-up\'s `touch.*` event names its touch number in `attempt`, and a stop or skip its reason in `error`.' }),
  node: Type.Union([StepNode, Type.Null()]),
  attempt: Type.Union([Int32(), Type.Null()]),
  durationMs: Type.Union([Int64(), Type.Null()]),
  engine: Type.Union([Type.String({ maxLength: 20 }), Type.Null()]),
  model: Type.Union([Type.String({ maxLength: MODEL_NAME_MAX }), Type.Null()]),
  usage: Type.Union([Type.Object({ inputTokens: Int64(), outputTokens: Int64() }), Type.Null()]),
  error: Type.Union([Type.String({ maxLength: MESSAGE_MAX, description: 'The error of a failed attempt, or the feedback of a rejection.' }), Type.Null()]),
  deferred: Type.Boolean({ description: 'On step.retrying: true when the model provider asked to wait and the step was put off without using an attempt; false when an attempt failed.' }),
  at: Timestamp('When it happened.'),
}, {
  $id: 'RunEvent',
  description: 'One event of a run: an item of the JSON list, and the `data` of an event of the stream.',
});

/** The event types a stream sends, each named after the RunEvent it carries, and then `end`. */
const EVENT_TYPES = RunEvent.properties.type.enum as string[];

/**
 * The body of the stream. A stream is text, however it is split into events, so its schema is a string: a tool that
 * checks answers against the document (Prism) or a generated client (openapi-fetch) reads it as text rather than
 * parse it as one JSON value, which it never is. What each event holds is said beside it, as OAS 3.2's `itemSchema`
 * says it, under `x-itemSchema` (an OpenAPI 3.1 media type has no such field): an event as an object of its SSE
 * fields, whose `data` is JSON of the named component RunEvent (or, for `end`, of the run's status).
 */
const RUN_EVENT_STREAM = {
  schema: Type.String({
    description: 'Server-Sent Events (text/event-stream), UTF-8. Each event is `id: N`, `event: TYPE` and `data: JSON` '
      + 'lines and a blank line, its `data` a RunEvent; a comment line (`: still running`) is sent every 15 s while '
      + 'nothing happens. The last event is `event: end` with `data: {"status": STATUS}`, the run\'s status at rest. '
      + 'No length: the stream lasts as long as the run.',
  }),
  'x-itemSchema': {
    oneOf: [
      {
        type: 'object',
        required: ['id', 'event', 'data'],
        properties: {
          id: {
            type: 'string', pattern: '^[0-9]+$', maxLength: 16,
            description: "The RunEvent's `id`: give it as Last-Event-ID to resume.",
          },
          event: { type: 'string', enum: EVENT_TYPES, description: "The RunEvent's `type`." },
          data: {
            type: 'string',
            contentMediaType: 'application/json',
            contentSchema: { $ref: '#/components/schemas/RunEvent' },
          },
        },
      },
      {
        type: 'object',
        required: ['event', 'data'],
        properties: {
          event: { type: 'string', enum: ['end'], description: 'The run is at rest; the stream ends.' },
          data: {
            type: 'string',
            contentMediaType: 'application/json',
            contentSchema: {
              type: 'object', required: ['status'], properties: { status: { anyOf: [RunStatus, { type: 'null' }] } },
            },
          },
        },
      },
    ],
  },
};

export default async function runEventRoutes(app: AppInstance): Promise<void> {
  const { db, runEvents, config } = app.deps;
  const slots = new StreamSlots({
    redis: app.redis,
    prefix: config.redisKeyPrefix,
    onError: (error) => app.log.warn({ err: error }, 'stream slots are counted per process: Redis failed'),
  });
  app.addHook('onClose', async () => slots.close());

  app.get('/api/v1/runs/:id/events', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'streamRunEvents',
      summary: "A run's events, or a live stream of them",
      description: 'With `Accept: text/event-stream`, Server-Sent Events: every event so far, then each new one as it happens '
        + '(`id`, `event` = the type, `data` = the event as JSON), ending with an `end` event once the run rests '
        + '(AWAITING_APPROVAL, COMPLETED, REJECTED, FAILED or CANCELLED) with no delivery of its draft QUEUED or DELIVERING. Resume with `Last-Event-ID`. '
        + `A key holds at most ${slots.limit} open streams (429 beyond); a stream ends when its key is revoked. `
        + 'Otherwise `{"data": [events]}`, oldest first.',
      tags: ['Runs'],
      params: IdParam,
      querystring: Type.Object({ after: Type.Optional(Int64({ minimum: 0, maximum: MAX_EVENT_ID, description: 'Only events after this number.' })) }),
      response: {
        200: {
          description: 'The events: a JSON list of those so far, or a live stream of them (by `Accept`).',
          content: {
            // Each item is the named component RunEvent, as each event of the stream is.
            'application/json': {
              schema: Type.Object({ data: Type.Array(Type.Ref('RunEvent'), { maxItems: JSON_PAGE }) }),
            },
            'text/event-stream': RUN_EVENT_STREAM,
          },
        },
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const runId = request.params.id;
    const after = request.query.after ?? lastEventIdOf(request.headers['last-event-id']) ?? 0;

    if (!request.headers.accept?.includes('text/event-stream')) {
      const progress = await readRunProgress(db, workspaceId, runId, after, JSON_PAGE);
      if (!progress) throw notFound('Run');
      reply.type('application/json; charset=utf-8');
      return { data: progress.events };
    }

    if (!(await readRunProgress(db, workspaceId, runId, after, 0))) throw notFound('Run');
    const slot = await slots.acquire(rateLimitKey(request));
    if (!slot) {
      reply.header('retry-after', String(STREAM_RETRY_AFTER_SECONDS));
      const who = request.principal?.source === 'api' ? 'API key' : 'user';
      throw new AppError('rate_limited', `This ${who} already holds ${slots.limit} open event streams, the most it may; close one, or retry in ${STREAM_RETRY_AFTER_SECONDS} s.`);
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
    const heartbeat = setInterval(() => raw.write(': still running\n\n'), HEARTBEAT_MS);
    let stopFollowing = () => {};
    const finish = () => {
      clearInterval(heartbeat);
      stopFollowing();
      // The place is free before the response ends: a client that sees its stream end may open the next at once.
      void slot.release().finally(() => { if (!raw.writableEnded) raw.end(); });
    };
    raw.once('close', finish);
    stopFollowing = runEvents.follow({ workspaceId, runId, after, credential: credentialOf(request) }, {
      send: (events) => {
        if (raw.destroyed) return;
        for (const event of events) raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      },
      end: (how) => {
        if (how.reason === 'rest') raw.write(`event: end\ndata: ${JSON.stringify({ status: how.status })}\n\n`);
        if (how.reason === 'failed') request.log.warn({ err: how.error }, 'run event stream stopped');
        finish();
      },
    });
  });
}

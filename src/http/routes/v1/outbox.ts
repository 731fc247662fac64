// /api/v1/outbox: the workspace's deliveries waiting for a send window, a per-sender limit or their `sendAt`
// (DESIGN §14), the soonest first; send one now, or cancel it.
import { Type } from 'typebox';
import { cancelWaiting, listOutbox, sendNow } from '../../../domain/sending/outbox.ts';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { answer, authProblems, Cursor, IdParam, Limit, listOf, OutboxEntry, problem, writeProblems } from '../../../schemas/index.ts';

const NOT_WAITING = problem('`invalid_state`: the delivery no longer waits in the outbox (`deliveryStatus` says what it is); nothing changed.');

export default async function outboxRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;

  app.get('/api/v1/outbox', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listOutbox',
      summary: 'List the outbox',
      description: 'Deliveries waiting SCHEDULED, the soonest first: for the send window (in the lead\'s time zone, else the '
        + 'workspace\'s), a sender\'s daily limit or least gap, or the time their approval asked for (`sendAt`). The next page is '
        + 'linked by a `Link: <…>; rel="next"` header.',
      tags: ['Outbox'],
      querystring: Type.Object({ limit: Limit(50, 100), cursor: Type.Optional(Cursor) }),
      response: {
        200: answer('A page of waiting deliveries, the soonest first; `Link` names the next page.', listOf(OutboxEntry, 100)),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const page = await listOutbox(db, principalOf(request).workspaceId, { limit: request.query.limit, cursor: cursorParam(request.query.cursor) });
    linkNextPage(reply, '/api/v1/outbox', page.next, request.query);
    return { data: page.items };
  });

  app.post('/api/v1/outbox/:id/send-now', {
    config: { scope: 'runs:write', auditAction: 'draft.delivery_sent_now' },
    schema: {
      operationId: 'sendOutboxNow',
      summary: 'Send a waiting e-mail now',
      description: 'The delivery leaves at once, past the send window, but still within its sender\'s daily limit and least gap: '
        + 'if either is reached it waits again (`waitingFor` `daily_limit` or `gap`). The run\'s draft shows its course.',
      tags: ['Outbox'],
      params: IdParam,
      body: Type.Optional(Type.Object({}, { additionalProperties: false, description: 'No body is needed; `{}` is accepted.' })),
      response: {
        204: Type.Null({ description: 'Queued to be sent now.' }),
        ...writeProblems,
        ...authProblems,
        409: NOT_WAITING,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { runId } = await sendNow(trx, principalOf(request).workspaceId, request.params.id, clock);
    return { status: 204, body: null, target: { type: 'run', id: runId } };
  }));

  app.delete('/api/v1/outbox/:id', {
    config: { scope: 'runs:write', auditAction: 'draft.delivery_cancelled' },
    schema: {
      operationId: 'cancelOutboxDelivery',
      summary: 'Cancel a waiting e-mail',
      description: 'The delivery becomes CANCELLED and is never sent; the run\'s draft stays APPROVED.',
      tags: ['Outbox'],
      params: IdParam,
      response: {
        204: Type.Null({ description: 'Cancelled.' }),
        ...authProblems,
        409: NOT_WAITING,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { runId } = await cancelWaiting(trx, principalOf(request).workspaceId, request.params.id, clock);
    return { status: 204, body: null, target: { type: 'run', id: runId } };
  }));
}

// /api/v1/replies: the replies found to the workspace's e-mails, and what each says (DESIGN §16).
import { Type } from 'typebox';
import { REPLY_CLASSES } from '../../../agent/replies/types.ts';
import { listReplies } from '../../../domain/replies.ts';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { markReply } from '../../../domain/replies/mark.ts';
import { ANSWERABLE, requestResponse } from '../../../domain/replies/response.ts';
import { listTouches } from '../../../domain/sequences/enrolments.ts';
import { mutate } from '../../mutation.ts';
import { answer, authProblems, Cursor, dataOf, IdParam, Limit, listOf, problem, Reply, ReplyClassify, Touch, writeProblems } from '../../../schemas/index.ts';

export default async function replyRoutes(app: AppInstance): Promise<void> {
  const { db } = app.deps;

  app.get('/api/v1/replies', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listReplies',
      summary: 'List replies',
      description: 'Newest first, each with what it says. The next page is linked by a `Link: <…>; rel="next"` header.',
      tags: ['Replies'],
      querystring: Type.Object({
        classification: Type.Optional(Type.Enum(REPLY_CLASSES, { description: 'Only replies of this class.' })),
        toAnswer: Type.Optional(Type.Enum(['true'], { description: '`true`: only replies to answer (interested, referral, other, not_now) with no e-mail queued to the lead since.' })),
        since: Type.Optional(Type.String({ maxLength: 40, description: 'Only replies received at or after this date (`2026-03-01`, from its start in UTC) or RFC 3339 date-time.' })),
        limit: Limit(50, 100),
        cursor: Type.Optional(Cursor),
      }),
      response: {
        200: answer('A page of replies, newest first; `Link` names the next page.', listOf(Reply, 100)),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { classification, since, toAnswer, limit } = request.query;
    const page = await listReplies(db, principalOf(request).workspaceId, { classification, since, toAnswer: toAnswer === 'true', limit, cursor: cursorParam(request.query.cursor) });
    linkNextPage(reply, '/api/v1/replies', page.next, request.query);
    return { data: page.items };
  });

  app.post('/api/v1/replies/:id/classification', {
    config: { scope: 'runs:write', auditAction: 'reply.classified' },
    schema: {
      operationId: 'classifyReply',
      summary: 'Mark a reply as…',
      description: 'A person\'s correction of what a reply says: stored with `classifiedBy: person`, and its effects applied '
        + '(DESIGN §16): any class but out_of_office, auto_reply and bounce stops the lead\'s sequence; out_of_office pauses it '
        + 'until one business day after `returnsOn` (7 days without one); unsubscribe suppresses the address; interested moves a '
        + 'CONTACTED lead to QUALIFIED (the workspace\'s setting); not_now with `followUpAfter` sets the lead\'s `nextActionAt`. '
        + 'What the old class did is undone where that makes sense: a pause is lifted, a `nextActionAt` it set is cleared. '
        + 'A stop, a suppression and a qualification are not undone: lift a suppression on the suppression list. '
        + 'Marking a reply as what a person already marked it changes nothing. The run records `reply.classified` and '
        + 'integrators hear `draft.replied` with the new class. Answers the reply to a key with `runs:read`; 204 otherwise.',
      tags: ['Replies'],
      params: IdParam,
      body: ReplyClassify,
      response: {
        200: answer('The reply, as the person classified it.', dataOf(Reply)),
        204: Type.Null({ description: 'Done, for a key without `runs:read`: the reply is not shown.' }),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const marked = await markReply(trx, principal.workspaceId, request.params.id, request.body, {
      at: app.deps.clock.now(), source: principal.source, keyId: principal.keyId, userId: principal.userId,
    });
    const target = { type: 'reply', id: marked.reply.id };
    return principal.scopes.includes('runs:read') ? { status: 200, body: { data: marked.reply }, target } : { status: 204, body: null, target };
  }));

  app.post('/api/v1/replies/:id/response', {
    config: { scope: 'runs:write', auditAction: 'reply.response_requested' },
    schema: {
      operationId: 'draftReplyResponse',
      summary: 'Draft a response',
      description: 'WRITER writes the answer to the reply (DESIGN §12\'s rules, from what was said on the call and found in research) as '
        + 'the next touch of its run\'s thread, kind `response`: SCHEDULED while it is written, moments later, then '
        + 'AWAITING_APPROVAL. It is edited, regenerated, skipped or approved as a follow-up is '
        + '(`/api/v1/runs/{id}/touches/{number}/…`), whatever the state of the sequence the reply stopped, and is sent in the same '
        + `thread, In-Reply-To the reply. Replies of the classes ${ANSWERABLE.join(', ')} are answered; an interested reply has its `
        + 'response asked for when it is read. Asking again while a response to the reply is there (not skipped) answers that '
        + 'one with 200; a new one is 202. The touch is answered to a key with `runs:read`; 204 otherwise.',
      tags: ['Replies'],
      params: IdParam,
      body: Type.Optional(Type.Object({}, { additionalProperties: false, description: 'No body is needed; `{}` is accepted.' })),
      response: {
        200: answer('A response to the reply was there already: that touch.', dataOf(Touch)),
        202: answer('The response is asked for: its touch, SCHEDULED until WRITER has written it.', dataOf(Touch)),
        204: Type.Null({ description: 'Done, for a key without `runs:read`.' }),
        ...writeProblems,
        ...authProblems,
        409: problem('`invalid_state`: the reply is of a class that is not answered (an auto-reply, an absence, a bounce, a request to '
          + 'stop), or the thread holds the most touches it can; or `idempotency_conflict`.'),
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const asked = await requestResponse(trx, principal.workspaceId, request.params.id, app.deps.clock.now());
    const target = { type: 'reply', id: request.params.id };
    const status = asked.created ? 202 : 200;
    if (!principal.scopes.includes('runs:read')) return { status: 204, body: null, target };
    const touch = (await listTouches(trx, principal.workspaceId, asked.runId))?.find((t) => t.number === asked.number);
    return { status, body: { data: touch }, target };
  }));
}

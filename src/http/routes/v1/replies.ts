// /api/v1/replies: the replies found to the workspace's e-mails, and what each says (DESIGN §16).
import { Type } from 'typebox';
import { REPLY_CLASSES } from '../../../agent/replies/types.ts';
import { listReplies } from '../../../domain/replies.ts';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { answer, authProblems, Cursor, Limit, listOf, Reply } from '../../../schemas/index.ts';

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
    const { classification, since, limit } = request.query;
    const page = await listReplies(db, principalOf(request).workspaceId, { classification, since, limit, cursor: cursorParam(request.query.cursor) });
    linkNextPage(reply, '/api/v1/replies', page.next, request.query);
    return { data: page.items };
  });
}

// /api/v1/leads/{leadId}/calls: the calls held with a lead.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import {
  answer, authProblems, problem, writeProblems, Call, CallCreate, Cursor, Limit, listOf,
} from '../../../schemas/index.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { createCall, listCalls } from '../../../domain/calls/calls.ts';
import { deleteCall } from '../../../domain/leads/erasure.ts';
import { notFound } from '../../../domain/errors.ts';

const LeadParam = Type.Object({ leadId: Type.String({ maxLength: 100, description: 'Identifier (UUID) of the lead.' }) });
const CallParams = Type.Object({ leadId: LeadParam.properties.leadId, id: Type.String({ maxLength: 100, description: 'Identifier (UUID) of the call.' }) });

export default async function callRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;

  app.post('/api/v1/leads/:leadId/calls', {
    config: { scope: 'leads:write', auditAction: 'call.created' },
    schema: {
      operationId: 'createCall',
      summary: 'Add a call to a lead',
      tags: ['Calls'],
      params: LeadParam,
      body: CallCreate,
      response: {
        201: answer('The call, added to the lead; `Location` is its address.', Call),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const call = await createCall(trx, principalOf(request).workspaceId, request.params.leadId, request.body, clock);
    return { status: 201, body: call, location: `/api/v1/leads/${call.leadId}/calls`, target: { type: 'call', id: call.id } };
  }));

  app.get('/api/v1/leads/:leadId/calls', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'listCalls',
      summary: "List a lead's calls",
      description: 'Newest first. The next page is linked by a `Link: <…>; rel="next"` header.',
      tags: ['Calls'],
      params: LeadParam,
      querystring: Type.Object({ limit: Limit(50, 100), cursor: Type.Optional(Cursor) }),
      response: {
        200: answer("A page of the lead's calls, newest first; `Link` names the next page.", listOf(Call, 100)),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { leadId } = request.params;
    const page = await listCalls(db, principalOf(request).workspaceId, leadId, { limit: request.query.limit, cursor: cursorParam(request.query.cursor) });
    if (!page) throw notFound('Lead');
    linkNextPage(reply, `/api/v1/leads/${leadId}/calls`, page.next, request.query);
    return { data: page.items };
  });

  app.delete('/api/v1/leads/:leadId/calls/:id', {
    config: { scope: 'leads:write', auditAction: 'call.deleted' },
    schema: {
      operationId: 'deleteCall',
      summary: 'Delete a call',
      description: 'Removes the call with its runs and their steps, drafts and events. Refused (409 `invalid_state`, nothing '
        + 'removed) while a run of the call is QUEUED or RUNNING: cancel it or let it finish first.',
      tags: ['Calls'],
      params: CallParams,
      response: {
        204: Type.Null({ description: 'Deleted.' }),
        ...authProblems,
        409: problem('`invalid_state`: a run of the call is QUEUED or RUNNING (`runStatus`); nothing was removed.'),
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const call = await deleteCall(trx, principalOf(request).workspaceId, request.params.leadId, request.params.id);
    return { status: 204, body: null, target: { type: 'call', id: call.id } };
  }));
}

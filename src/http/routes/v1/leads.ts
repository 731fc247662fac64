// /api/v1/leads: list, create, read and update the workspace's leads.
import { Type } from 'typebox';
import type { AppInstance } from '../../app.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, writeProblems, Cursor, dataOf, IdParam, Lead, LeadCreate, LeadStatus, LeadUpdate, Limit, listOf } from '../../schemas.ts';
import { createLead, getLead, listLeadsJson, updateLead } from '../../../domain/leads.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { notFound } from '../../../domain/errors.ts';

export default async function leadRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;
  const oneRowPages = app.deps.database.kind === 'pglite';

  app.get('/api/v1/leads', {
    config: { scope: 'leads:read' },
    schema: {
      summary: 'List leads',
      description: 'Newest first (createdAt, then id, descending). The next page is linked by a `Link: <…>; rel="next"` header.',
      tags: ['Leads'],
      querystring: Type.Object({ limit: Limit(50, 100), cursor: Type.Optional(Cursor), status: Type.Optional(LeadStatus) }),
      response: { 200: listOf(Lead), ...authProblems },
    },
  }, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const { limit, cursor, status } = request.query;
    const page = await listLeadsJson(db, workspaceId, { limit, cursor: cursorParam(cursor), status: status ?? null, oneRow: oneRowPages });
    linkNextPage(reply, '/api/v1/leads', page.next, request.query);
    // PostgreSQL wrote the JSON in the shape of the 200 schema above; a JSON string is sent as it is.
    return reply.type('application/json; charset=utf-8').send(`{"data":${page.json}}` as never);
  });

  app.post('/api/v1/leads', {
    config: { scope: 'leads:write', auditAction: 'lead.created' },
    schema: {
      summary: 'Create a lead',
      tags: ['Leads'],
      body: LeadCreate,
      response: { 201: Lead, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const lead = await createLead(trx, principalOf(request).workspaceId, request.body, clock);
    return { status: 201, body: lead, location: `/api/v1/leads/${lead.id}`, target: { type: 'lead', id: lead.id } };
  }));

  app.get('/api/v1/leads/:id', {
    config: { scope: 'leads:read' },
    schema: { summary: 'Get a lead', tags: ['Leads'], params: IdParam, response: { 200: dataOf(Lead), ...authProblems } },
  }, async (request) => {
    const lead = await getLead(db, principalOf(request).workspaceId, request.params.id);
    if (!lead) throw notFound('Lead');
    return { data: lead };
  });

  app.patch('/api/v1/leads/:id', {
    config: { scope: 'leads:write', auditAction: 'lead.updated' },
    schema: {
      summary: 'Update a lead',
      description: 'Changes only the fields sent; `null` clears an optional field. Answers the lead to a key that may read '
        + 'leads (`leads:read`); a key with `leads:write` alone gets 204, since writing does not grant reading.',
      tags: ['Leads'],
      params: IdParam,
      body: LeadUpdate,
      response: {
        200: dataOf(Lead),
        204: Type.Null({ description: 'Updated, for a key without `leads:read`: the lead is not shown.' }),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId, scopes } = principalOf(request);
    const lead = await updateLead(trx, workspaceId, request.params.id, request.body, clock);
    const target = { type: 'lead', id: lead.id };
    return scopes.includes('leads:read') ? { status: 200, body: { data: lead }, target } : { status: 204, body: null, target };
  }));
}

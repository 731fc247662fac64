// /api/v1/leads: list, search, count, export, create, read, update and erase the workspace's leads.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import {
  answer, authProblems, writeProblems, Cursor, dataOf, IdParam, Lead, LeadCount, LeadCreate, LeadFilters, LeadUpdate,
  Limit, listOf,
} from '../../../schemas/index.ts';
import { countLeads, createLead, getLead, listLeadsJson, updateLead } from '../../../domain/leads/leads.ts';
import { deleteLead } from '../../../domain/leads/erasure.ts';
import { exportLeadsCsv } from '../../../domain/leads/export.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { notFound } from '../../../domain/errors.ts';

export default async function leadRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;
  const oneRowPages = app.deps.database.kind === 'pglite';

  app.get('/api/v1/leads', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'listLeads',
      summary: 'List leads',
      description: 'Newest first (createdAt, then id, descending), narrowed by every filter given. The next page is linked by a '
        + '`Link: <…>; rel="next"` header, which keeps the filters.',
      tags: ['Leads'],
      querystring: Type.Object({ limit: Limit(50, 100), cursor: Type.Optional(Cursor), ...LeadFilters }),
      response: {
        200: answer('A page of leads, newest first; `Link` names the next page.', listOf(Lead, 100)),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const { limit, cursor, ...filter } = request.query;
    const page = await listLeadsJson(db, workspaceId, { limit, cursor: cursorParam(cursor), ...filter, oneRow: oneRowPages });
    linkNextPage(reply, '/api/v1/leads', page.next, request.query);
    // PostgreSQL wrote the JSON in the shape of the 200 schema above; a JSON string is sent as it is.
    return reply.type('application/json; charset=utf-8').send(`{"data":${page.json}}` as never);
  });

  app.get('/api/v1/leads/count', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'countLeads',
      summary: 'Count leads',
      description: 'How many leads GET /api/v1/leads would list, over all its pages, with the same filters.',
      tags: ['Leads'],
      querystring: Type.Object(LeadFilters),
      response: { 200: answer('How many leads the filters find.', LeadCount), ...authProblems },
    },
  }, async (request) => ({ count: await countLeads(db, principalOf(request).workspaceId, request.query) }));

  app.get('/api/v1/leads/export', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'exportLeads',
      summary: 'Export leads as CSV',
      description: 'Every lead the filters find, newest first, as a CSV file (UTF-8 with a byte order mark) with the header '
        + '`name,email,companyName,companyWebsite,status,assignedToUserId,createdAt,updatedAt`, which the import reads back. '
        + 'A cell that a spreadsheet would take for a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) '
        + "is written with a `'` before it.",
      tags: ['Leads'],
      querystring: Type.Object(LeadFilters),
      response: {
        200: {
          description: 'The CSV file, sent as it is read (`Content-Disposition: attachment; filename="leads-YYYY-MM-DD.csv"`).',
          // Text, as every text/csv body of the document is, so that a generated client hands it over as a string
          // rather than typing it `unknown`. No length: the file is as long as the workspace's leads make it.
          content: { 'text/csv': { schema: Type.String({ description: 'A header row, then a row per lead.' }) } },
        },
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    // Checked before the first byte is sent: a refused filter is a 400, not a broken file.
    const csv = exportLeadsCsv(db, principalOf(request).workspaceId, request.query);
    const day = clock.now().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="leads-${day}.csv"`)
      .send(Readable.from(csv, { objectMode: false }));
  });

  app.post('/api/v1/leads', {
    config: { scope: 'leads:write', auditAction: 'lead.created' },
    schema: {
      operationId: 'createLead',
      summary: 'Create a lead',
      tags: ['Leads'],
      body: LeadCreate,
      response: {
        201: answer('The lead, created; `Location` is its address.', Lead),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const lead = await createLead(trx, principalOf(request).workspaceId, request.body, clock);
    return { status: 201, body: lead, location: `/api/v1/leads/${lead.id}`, target: { type: 'lead', id: lead.id } };
  }));

  app.get('/api/v1/leads/:id', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'getLead',
      summary: 'Get a lead',
      tags: ['Leads'],
      params: IdParam,
      response: { 200: answer('The lead.', dataOf(Lead)), ...authProblems },
    },
  }, async (request) => {
    const lead = await getLead(db, principalOf(request).workspaceId, request.params.id);
    if (!lead) throw notFound('Lead');
    return { data: lead };
  });

  app.patch('/api/v1/leads/:id', {
    config: { scope: 'leads:write', auditAction: 'lead.updated' },
    schema: {
      operationId: 'updateLead',
      summary: 'Update a lead',
      description: 'Changes only the fields sent; `null` clears an optional field. Answers the lead to a key that may read '
        + 'leads (`leads:read`); a key with `leads:write` alone gets 204, since writing does not grant reading.',
      tags: ['Leads'],
      params: IdParam,
      body: LeadUpdate,
      response: {
        200: answer('The lead as updated.', dataOf(Lead)),
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

  app.delete('/api/v1/leads/:id', {
    config: { scope: 'leads:write', auditAction: 'lead.deleted' },
    schema: {
      operationId: 'deleteLead',
      summary: 'Erase a lead',
      description: 'Removes the lead with its calls, its runs (a run in progress included) and their steps, drafts and events, '
        + "at once. The audit log keeps the lead's id, never its data.",
      tags: ['Leads'],
      params: IdParam,
      response: { 204: Type.Null({ description: 'Erased.' }), ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const lead = await deleteLead(trx, principalOf(request).workspaceId, request.params.id, clock.now());
    return { status: 204, body: null, target: { type: 'lead', id: lead.id } };
  }));
}

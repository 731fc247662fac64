// /api/v1/sequences: a workspace's follow-up sequences (DESIGN §13). Keys need sequences:read or sequences:write; in
// the web UI, only admins change them (every member reads them, to pick one when approving).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import {
  answer, authProblems, dataOf, IdParam, listOf, problem, Sequence, SequenceCreate, SEQUENCES_MAX, SequenceUpdate, writeProblems,
} from '../../../schemas/index.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import { createSequence, deleteSequence, getSequence, listSequences, updateSequence } from '../../../domain/sequences/sequences.ts';

const tags = ['Sequences'];

/** A person in the web UI changes sequences only as an admin; a key needs its scope alone. */
function adminsOnly(request: FastifyRequest): void {
  const principal = principalOf(request);
  if (principal.source === 'ui' && principal.role !== 'ADMIN') throw new AppError('forbidden', 'Only workspace admins can change sequences.');
}

export default async function sequenceRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;
  const preHandler = async (request: FastifyRequest) => adminsOnly(request);
  const stateProblem = { 409: problem('`invalid_state`: the workspace has as many sequences as it may, or the default cannot be deleted while others exist.') };

  app.get('/api/v1/sequences', {
    config: { scope: 'sequences:read' },
    schema: {
      operationId: 'listSequences',
      summary: 'List follow-up sequences',
      description: 'Oldest first; `isDefault` marks the one an approval enrols in when it names none.',
      tags,
      response: { 200: answer('The sequences, oldest first.', listOf(Sequence, SEQUENCES_MAX)), ...authProblems },
    },
  }, async (request) => ({ data: await listSequences(db, principalOf(request).workspaceId) }));

  app.post('/api/v1/sequences', {
    config: { scope: 'sequences:write', auditAction: 'sequence.created' },
    preHandler,
    schema: {
      operationId: 'createSequence',
      summary: 'Make a follow-up sequence',
      description: 'A name and 1–10 steps, each `waitDays` (1–30 business days after the previous e-mail of the thread), '
        + '`instruction` (up to 500 characters) and `review` (`required` or `auto`). `isDefault: true` makes it the default.',
      tags,
      body: SequenceCreate,
      response: { 201: answer('The sequence; `Location` is its address.', dataOf(Sequence)), ...stateProblem, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const sequence = await createSequence(trx, principalOf(request).workspaceId, request.body, clock);
    return { status: 201, body: { data: sequence }, location: `/api/v1/sequences/${sequence.id}`, target: { type: 'sequence', id: sequence.id } };
  }));

  app.get('/api/v1/sequences/:id', {
    config: { scope: 'sequences:read' },
    schema: {
      operationId: 'getSequence', summary: 'Get a follow-up sequence', tags, params: IdParam,
      response: { 200: answer('The sequence.', dataOf(Sequence)), ...authProblems },
    },
  }, async (request) => {
    const sequence = await getSequence(db, principalOf(request).workspaceId, request.params.id);
    if (!sequence) throw notFound('Sequence');
    return { data: sequence };
  });

  app.patch('/api/v1/sequences/:id', {
    config: { scope: 'sequences:write', auditAction: 'sequence.updated' },
    preHandler,
    schema: {
      operationId: 'updateSequence',
      summary: 'Change a follow-up sequence',
      description: 'Changes only the fields sent; `steps` replaces every step. Enrolments made before keep the steps they were made with.',
      tags, params: IdParam, body: SequenceUpdate,
      response: { 200: answer('The sequence as changed.', dataOf(Sequence)), ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const sequence = await updateSequence(trx, principalOf(request).workspaceId, request.params.id, request.body, clock);
    return { status: 200, body: { data: sequence }, target: { type: 'sequence', id: sequence.id } };
  }));

  app.delete('/api/v1/sequences/:id', {
    config: { scope: 'sequences:write', auditAction: 'sequence.deleted' },
    preHandler,
    schema: {
      operationId: 'deleteSequence',
      summary: 'Delete a follow-up sequence',
      description: 'Enrolments made from it go on with their own copy of its steps. The default cannot be deleted while others exist (409).',
      tags, params: IdParam,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...stateProblem, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await deleteSequence(trx, principalOf(request).workspaceId, request.params.id);
    return { status: 204, body: null, target: { type: 'sequence', id: request.params.id } };
  }));
}

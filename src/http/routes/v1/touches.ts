// A run's follow-ups (DESIGN §13): the touches of its thread, a follow-up's review (approve, reject or regenerate,
// edit), and the sequence's stop, pause and resume. Keys need runs:read or runs:write, as for the run itself.
import { Type, type TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { renderRun } from '../../run-render.ts';
import {
  answer, authProblems, dataOf, IdParam, listOf, problem, Run, SequencePause, Touch, TouchDraftEdit, TouchForReview, TouchParams, TouchReject, TOUCH_NUMBER_MAX,
  writeProblems,
} from '../../../schemas/index.ts';
import { notFound } from '../../../domain/errors.ts';
import { getRun } from '../../../domain/runs/runs.ts';
import {
  listTouches, listTouchesForReview, pauseRunSequence, REVIEW_QUEUE_MAX, resumeRunSequence, stopRunSequence,
} from '../../../domain/sequences/enrolments.ts';
import { approveTouch, editTouchDraft, rejectTouch } from '../../../domain/sequences/touches.ts';

const tags = ['Sequences'];
const NoBody = Type.Object({}, { additionalProperties: false, description: 'No body is needed; `{}` is accepted.' });
const stateProblem = problem('`invalid_state`: the follow-up or the sequence is not in a state this can be done from, and nothing changed; '
  + 'or `idempotency_conflict`: a request with this Idempotency-Key is in flight.');

export default async function touchRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const decider = (request: FastifyRequest) => ({ keyId: principalOf(request).keyId, userId: principalOf(request).userId });
  const listOfTouches = listOf(Touch, TOUCH_NUMBER_MAX);

  /** The touches after a change, to a key that may read runs; 204 to one that may only write. */
  const changed = async (request: FastifyRequest, trx: Parameters<typeof listTouches>[0], runId: string) => {
    const target = { type: 'run', id: runId };
    if (!principalOf(request).scopes.includes('runs:read')) return { status: 204, body: null, target };
    return { status: 200, body: { data: (await listTouches(trx, principalOf(request).workspaceId, runId)) ?? [] }, target };
  };
  const touchAction = <B extends TSchema>(operationId: string, summary: string, description: string, body: B) => ({
    operationId, summary, tags, params: TouchParams, body,
    description: `${description} Answers the run's touches to a key with \`runs:read\`; a key with \`runs:write\` alone gets 204.`,
    response: {
      200: answer('The touches of the run\'s thread, as the change left them.', listOfTouches),
      204: Type.Null({ description: 'Done, for a key without `runs:read`.' }),
      ...writeProblems, ...authProblems, 409: stateProblem,
    },
  });

  app.get('/api/v1/touches', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listTouchesForReview',
      summary: 'List the follow-ups waiting for review',
      description: `The workspace's follow-ups whose step says review \`required\`, written and waiting for a person (AWAITING_APPROVAL), `
        + `the oldest due first, at most ${REVIEW_QUEUE_MAX}: "Follow-up 2 of 3" in the review queue.`,
      tags,
      response: { 200: answer('The follow-ups waiting for review, the oldest due first.', listOf(TouchForReview, REVIEW_QUEUE_MAX)), ...authProblems },
    },
  }, async (request) => ({ data: await listTouchesForReview(db, principalOf(request).workspaceId) }));

  app.get('/api/v1/runs/:id/touches', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listTouches',
      summary: 'List the touches of a run\'s thread',
      description: 'Touch 1 is the approved e-mail; touch n+1 the sequence\'s step n: each with its status, due time, draft and delivery. '
        + 'Empty for a run whose approval enrolled its lead in no sequence.',
      tags, params: IdParam,
      response: { 200: answer('The touches, in order.', listOfTouches), ...authProblems },
    },
  }, async (request) => {
    const touches = await listTouches(db, principalOf(request).workspaceId, request.params.id);
    if (!touches) throw notFound('Run');
    return { data: touches };
  });

  app.post('/api/v1/runs/:id/touches/:number/approve', {
    config: { scope: 'runs:write', auditAction: 'touch.approved' },
    schema: touchAction('approveTouch', 'Approve a follow-up', 'From AWAITING_APPROVAL, while the sequence is ACTIVE: the follow-up is APPROVED '
      + 'and its delivery made, to go at its due time, or at once when that has passed.', NoBody),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await approveTouch(trx, principalOf(request).workspaceId, request.params.id, request.params.number, decider(request), clock);
    return changed(request, trx, request.params.id);
  }));

  app.post('/api/v1/runs/:id/touches/:number/reject', {
    config: { scope: 'runs:write', auditAction: 'touch.rejected' },
    schema: touchAction('rejectTouch', 'Reject a follow-up', 'From AWAITING_APPROVAL. With `regenerate`, WRITER writes it again with the feedback; '
      + 'without, it is SKIPPED and the next follow-up counts its wait from now.', TouchReject),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await rejectTouch(trx, principalOf(request).workspaceId, request.params.id, request.params.number, request.body ?? {}, decider(request), clock);
    return changed(request, trx, request.params.id);
  }));

  app.patch('/api/v1/runs/:id/touches/:number/draft', {
    config: { scope: 'runs:write', auditAction: 'touch.draft_edited' },
    schema: touchAction('editTouchDraft', 'Edit a follow-up\'s draft', 'From AWAITING_APPROVAL: the next version of the follow-up\'s draft, '
      + '`edited`, with the fields sent.', TouchDraftEdit),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await editTouchDraft(trx, principalOf(request).workspaceId, request.params.id, request.params.number, request.body, decider(request), clock);
    return changed(request, trx, request.params.id);
  }));

  // The sequence's stop, pause and resume answer the Run, whose `sequence` shows the change.
  const sequenceAction = <B extends TSchema>(operationId: string, summary: string, description: string, body: B) => ({
    operationId, summary, tags, params: IdParam, body,
    description: `${description} Answers the run to a key with \`runs:read\`; a key with \`runs:write\` alone gets 204.`,
    response: {
      200: answer('The run; its `sequence` as the change left it.', dataOf(Run)),
      204: Type.Null({ description: 'Done, for a key without `runs:read`.' }),
      ...writeProblems, ...authProblems, 409: stateProblem,
    },
  });
  const runAnswer = async (request: FastifyRequest, trx: Parameters<typeof getRun>[0], runId: string) => {
    const target = { type: 'run', id: runId };
    if (!principalOf(request).scopes.includes('runs:read')) return { status: 204, body: null, target };
    const run = await getRun(trx, principalOf(request).workspaceId, runId);
    if (!run) throw notFound('Run');
    return { status: 200, body: { data: renderRun(config, run) }, target };
  };

  app.post('/api/v1/runs/:id/sequence/stop', {
    config: { scope: 'runs:write', auditAction: 'sequence.stopped' },
    schema: sequenceAction('stopSequence', 'Stop a run\'s follow-ups', 'From ACTIVE or PAUSED: the sequence is STOPPED (`manual`); '
      + 'every follow-up not yet with the mail server is SKIPPED.', NoBody),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await stopRunSequence(trx, principalOf(request).workspaceId, request.params.id, clock);
    return runAnswer(request, trx, request.params.id);
  }));

  app.post('/api/v1/runs/:id/sequence/pause', {
    config: { scope: 'runs:write', auditAction: 'sequence.paused' },
    schema: sequenceAction('pauseSequence', 'Pause a run\'s follow-ups', 'From ACTIVE: the sequence is PAUSED (`manual`), until `until` '
      + 'or until resumed; the next follow-up is due no earlier than the resumption.', SequencePause),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const until = request.body?.until ? new Date(request.body.until) : null;
    await pauseRunSequence(trx, principalOf(request).workspaceId, request.params.id, until, clock);
    return runAnswer(request, trx, request.params.id);
  }));

  app.post('/api/v1/runs/:id/sequence/resume', {
    config: { scope: 'runs:write', auditAction: 'sequence.resumed' },
    schema: sequenceAction('resumeSequence', 'Resume a run\'s follow-ups', 'From PAUSED: the sequence is ACTIVE again.', NoBody),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    await resumeRunSequence(trx, principalOf(request).workspaceId, request.params.id, clock);
    return runAnswer(request, trx, request.params.id);
  }));
}

// /api/v1/runs: start agent runs and follow them.
import { Type, type TSchema } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import {
  answer, authProblems, problem, writeProblems, Cursor, dataOf, IdParam, Limit, listOf, Run, RunApprove,
  RunBatchCreate, RunCreate, RunReject, RunStatus,
} from '../../../schemas/index.ts';
import { getRun, getRunJson, listRuns, type Run as RunRecord } from '../../../domain/runs/runs.ts';
import { startRun } from '../../../domain/runs/start.ts';
import { retryDelivery } from '../../../domain/runs/deliveries.ts';
import { newMessageId } from '../../../mail/message.ts';
import { loadMailTransport } from '../../../domain/mail-settings/settings.ts';
import { startRunBatch } from '../../../domain/runs/batches.ts';
import { approveRun, cancelRun, rejectRun } from '../../../domain/runs/decisions.ts';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { compactJson } from '../../compact-json.ts';
import { renderRun, traceUrlOf } from '../../run-render.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { notFound } from '../../../domain/errors.ts';
import { sendAtOf } from '../../../domain/sending/schedule.ts';

export default async function runRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;

  const render = (run: RunRecord) => renderRun(config, run);
  const starter = (request: FastifyRequest) => {
    const principal = principalOf(request);
    return {
      workspaceId: principal.workspaceId,
      // A person starting a run in the UI is its author; a key's runs are attributed to the workspace's admin.
      userId: principal.userId ?? principal.adminUserId,
      keyId: principal.keyId,
      freePlanMonthlyRuns: config.freePlanMonthlyRuns,
      clock,
    };
  };

  app.post('/api/v1/runs', {
    config: { scope: 'runs:write', auditAction: 'run.created' },
    schema: {
      operationId: 'createRun',
      summary: 'Start an agent run',
      description: 'Answers 202 with the run (status QUEUED, four PENDING steps) and a Location header; poll GET /api/v1/runs/{id}. '
        + 'A Free-plan workspace that has used its monthly runs gets 402.',
      tags: ['Runs'],
      body: RunCreate,
      response: {
        202: answer('The run, accepted: QUEUED, its four steps PENDING; `Location` is its address.', Run),
        402: problem('A Free workspace has used its runs this month; adds `limit`, `used`, `resetsAt`.'),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => {
    const answer = (run: RunRecord) => ({ status: 202, body: render(run), location: `/api/v1/runs/${run.id}`, target: { type: 'run', id: run.id } });
    return mutate(app.deps, request, reply, async (trx) => answer(await startRun(trx, starter(request), request.body)),
      async (db, audit) => answer(await startRun(db, starter(request), request.body, (runId) => audit({ type: 'run', id: runId }, 202))));
  });

  app.post('/api/v1/runs/batch', {
    config: { scope: 'runs:write', auditAction: 'run.batch_created' },
    schema: {
      operationId: 'startRunBatch',
      summary: 'Start up to 100 runs at once',
      description: 'Answers 202 with the runs, in the order of `runs`, and a Location header listing the batch '
        + '(`GET /api/v1/runs?batchId=…`). All or nothing: an invalid item is a 400 and an unknown lead or call a 404, each '
        + 'naming the item (`runs[3].callId`); a Free-plan workspace whose month cannot hold every run gets 402. One audit '
        + 'entry, `run.batch_created`, whose target is the batch.',
      tags: ['Runs'],
      body: RunBatchCreate,
      response: {
        202: answer('The runs, QUEUED, in the order of `runs`; `Location` lists the batch.', listOf(Run, 100)),
        402: problem("A Free workspace's remaining runs this month cannot hold the whole batch; adds `limit`, `used`, `resetsAt`."),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { batchId, runs } = await startRunBatch(trx, starter(request), request.body.runs);
    return { status: 202, body: { data: runs.map(render) }, location: `/api/v1/runs?batchId=${batchId}`, target: { type: 'batch', id: batchId } };
  }));

  // A decision answers the run only to a key that may read runs: `runs:write` alone does not grant reading.
  const decision = <B extends TSchema>(operationId: string, summary: string, description: string, body: B) => ({
    operationId,
    summary,
    description: `${description} Answers the run to a key with \`runs:read\`; a key with \`runs:write\` alone gets 204.`,
    tags: ['Runs'],
    params: IdParam,
    body,
    response: {
      200: answer('The run, as the decision left it.', dataOf(Run)),
      204: Type.Null({ description: 'Done, for a key without `runs:read`: the run is not shown.' }),
      ...writeProblems,
      ...authProblems,
      409: problem('`invalid_state`: the run is not in a state this decision can be made from, and nothing changed; '
        + '`mail_not_configured`: the delivery asked for needs mail settings the workspace does not have; '
        + 'or `idempotency_conflict`: a request with this Idempotency-Key is in flight.'),
    },
  });
  // A body that fails validation is audited as what it seems to ask for; only `regenerate: true` asks for a new draft.
  const asksToRegenerate = (body: unknown) => typeof body === 'object' && body !== null && (body as { regenerate?: unknown }).regenerate === true;
  const NoBody = Type.Object({}, { additionalProperties: false, description: 'No body is needed; `{}` is accepted.' });
  const decider = (request: FastifyRequest) => ({ keyId: principalOf(request).keyId, userId: principalOf(request).userId });
  const decided = (request: FastifyRequest, run: RunRecord) => {
    const target = { type: 'run', id: run.id };
    return principalOf(request).scopes.includes('runs:read') ? { status: 200, body: { data: render(run) }, target } : { status: 204, body: null, target };
  };

  app.post('/api/v1/runs/:id/approve', {
    config: { scope: 'runs:write', auditAction: 'run.approved' },
    schema: decision('approveRun', 'Approve the draft', 'From AWAITING_APPROVAL: the draft becomes APPROVED and the run COMPLETED. '
      + '`deliver` says what happens to the e-mail: `send` sends it over SMTP, `mailbox` saves it to the sender\'s Drafts folder '
      + 'over IMAP, `none` only approves; without it the workspace\'s default applies (`none` when no mail transport is set up). '
      + 'A delivery is a job: the draft\'s `delivery` shows its course (QUEUED, DELIVERING, DELIVERED or FAILED). '
      + 'A delivery the workspace cannot make (no SMTP or IMAP set up, no sender address) is 409 `mail_not_configured`, '
      + 'and a draft without a recipient 409 `invalid_state` naming `to`. A recipient on the suppression list is 409 '
      + '`recipient_suppressed` (`reason` says why), and a workspace whose sender identity (sender name and address, '
      + 'company name, postal address while the footer is on) is incomplete 409 `sender_incomplete` (`missing` names '
      + 'what). Either way nothing is approved.', RunApprove),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const delivery = {
      ...(request.body?.deliver ? { deliver: request.body.deliver } : {}),
      ...(request.body?.sendAt ? { sendAt: sendAtOf(request.body.sendAt) } : {}),
      ...(request.body?.sequenceId !== undefined ? { sequenceId: request.body.sequenceId } : {}),
      senderUserId: principal.userId ?? principal.adminUserId,
      transport: (trx: Kysely<DB>) => loadMailTransport(trx, principal.workspaceId, app.deps.secrets(), config),
      newMessageId,
      postalAddress: config.mailPostalAddress,
    };
    return decided(request, await approveRun(trx, principal.workspaceId, request.params.id, decider(request), clock, delivery));
  }));

  app.post('/api/v1/runs/:id/deliver', {
    config: { scope: 'runs:write', auditAction: 'draft.delivery_retried' },
    schema: decision('retryDelivery', 'Retry a failed delivery', 'Only when the draft\'s delivery is FAILED: it is queued again (QUEUED) with the '
      + 'same Message-ID; any other state is 409 `invalid_state`.', NoBody),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId } = principalOf(request);
    await retryDelivery(trx, workspaceId, request.params.id, clock);
    const run = await getRun(trx, workspaceId, request.params.id);
    if (!run) throw notFound('Run');
    return decided(request, run);
  }));

  app.post('/api/v1/runs/:id/reject', {
    config: { scope: 'runs:write', auditAction: (request) => (asksToRegenerate(request.body) ? 'run.regenerated' : 'run.rejected') },
    schema: decision('rejectRun', 'Reject the draft', 'From AWAITING_APPROVAL: the draft becomes REJECTED. With `regenerate: true` the run is '
      + 'queued again and WRITER writes the next version of the draft, taking `feedback` into account; otherwise the run ends REJECTED. '
      + 'Audited as `run.regenerated` or `run.rejected`.', RunReject),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    return decided(request, await rejectRun(trx, principalOf(request).workspaceId, request.params.id, request.body, decider(request), clock));
  }));

  app.post('/api/v1/runs/:id/cancel', {
    config: { scope: 'runs:write', auditAction: 'run.cancelled' },
    schema: decision('cancelRun', 'Cancel a run', 'From QUEUED or RUNNING: the run becomes CANCELLED and its unfinished steps SKIPPED.', NoBody),
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    return decided(request, await cancelRun(trx, principalOf(request).workspaceId, request.params.id, clock));
  }));

  app.get('/api/v1/runs/:id', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'getRun',
      summary: 'Get a run with its steps and draft',
      tags: ['Runs'],
      params: IdParam,
      response: { 200: answer('The run, with its steps and draft.', dataOf(Run)), ...authProblems },
    },
  }, async (request, reply) => {
    const run = await getRunJson(db, principalOf(request).workspaceId, request.params.id);
    if (!run) throw notFound('Run');
    // PostgreSQL wrote the run in the shape of the 200 schema above, all but its traceUrl; a JSON string is sent as it
    // is, without the spaces PostgreSQL puts in.
    const json = `{"data":${compactJson(run.json).slice(0, -1)},"traceUrl":${JSON.stringify(traceUrlOf(config, run.id, run.traceId))}}}`;
    return reply.type('application/json; charset=utf-8').send(json as never);
  });

  app.get('/api/v1/runs', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listRuns',
      summary: 'List runs',
      description: 'Newest first (`order=oldest`: oldest first); filter by leadId, status and batchId (the runs one '
        + 'POST /api/v1/runs/batch started). The next page is linked by a `Link: <…>; rel="next"` header.',
      tags: ['Runs'],
      querystring: Type.Object({
        limit: Limit(20, 100),
        cursor: Type.Optional(Cursor),
        leadId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
        status: Type.Optional(RunStatus),
        batchId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'The runs of one batch: the `batchId` of its runs.' })),
        order: Type.Optional(Type.Enum(['newest', 'oldest'], { default: 'newest', description: 'By `startedAt`, then id.' })),
      }),
      response: {
        200: answer('A page of runs, in the order asked for; `Link` names the next page.', listOf(Run, 100)),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const { limit, cursor, leadId, status, batchId, order } = request.query;
    const page = await listRuns(db, principalOf(request).workspaceId, {
      limit, cursor: cursorParam(cursor), leadId: leadId ?? null, status: status ?? null, batchId: batchId ?? null, order: order ?? 'newest',
    });
    linkNextPage(reply, '/api/v1/runs', page.next, request.query);
    return { data: page.items.map(render) };
  });
}

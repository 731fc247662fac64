// Approving in the web UI, with a way back. A person who presses Approve (or the key A in the review queue) may
// have pressed it by mistake, and an e-mail cannot be unsent: an approval made here that delivers holds its
// delivery's job for APPROVAL_UNDO_SECONDS (10 s), and /undo-approval takes the approval back while no runner has
// taken the job. The hold is on the server, not a timer in the page, so that closing the tab neither loses the
// approval nor sends it early, and two tabs see the same state. Keys approve through /api/v1/runs/{id}/approve,
// which sends at once: a program that approves has decided.
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { renderRun } from '../../run-render.ts';
import { authProblems, dataOf, IdParam, Nullable, problem, Run, RunApprove, writeProblems } from '../../../schemas/index.ts';
import type { DB } from '../../../db/schema.ts';
import { approveRun, undoApproval } from '../../../domain/runs/decisions.ts';
import { newMessageId } from '../../../mail/message.ts';
import { loadMailTransport } from '../../../domain/mail-settings/settings.ts';
import { sendAtOf } from '../../../domain/sending/schedule.ts';

const tags = ['Web UI'];

const Approved = Type.Object({
  data: Run,
  undoMs: Nullable(Type.Integer({
    minimum: 0,
    description: 'For how many milliseconds from now the approval can be undone (its delivery waits that long); '
      + 'null when it delivers nothing or the installation has no wait (APPROVAL_UNDO_SECONDS=0). A duration, not '
      + 'a time, so that a browser whose clock is off still counts it right.',
  })),
});

export default async function approvalRoutes(app: AppInstance): Promise<void> {
  const { clock, config } = app.deps;

  app.post('/ui/api/runs/:id/approve', {
    config: { access: 'signed-in', auditAction: 'run.approved' },
    schema: {
      summary: 'Approve the draft, its delivery held a few seconds so that it can be undone',
      tags,
      params: IdParam,
      body: RunApprove,
      response: {
        200: Approved,
        ...writeProblems,
        ...authProblems,
        409: problem('`invalid_state` or `mail_not_configured`, as for POST /api/v1/runs/{id}/approve; '
          + 'nothing was approved.'),
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const by = { keyId: null, userId: principal.userId };
    const run = await approveRun(trx, principal.workspaceId, request.params.id, by, clock, {
      ...(request.body?.deliver ? { deliver: request.body.deliver } : {}),
      ...(request.body?.sendAt ? { sendAt: sendAtOf(request.body.sendAt) } : {}),
      ...(request.body?.sequenceId !== undefined ? { sequenceId: request.body.sequenceId } : {}),
      senderUserId: principal.userId,
      transport: (db: Kysely<DB>) => loadMailTransport(db, principal.workspaceId, app.deps.secrets(), config),
      newMessageId,
      postalAddress: config.mailPostalAddress,
      holdMs: config.approvalUndoMs,
    });
    const held = run.emailDraft?.delivery?.status === 'QUEUED' && config.approvalUndoMs > 0;
    const undoMs = held ? config.approvalUndoMs : null;
    return { status: 200, body: { data: renderRun(config, run), undoMs }, target: { type: 'run', id: run.id } };
  }));

  app.post('/ui/api/runs/:id/undo-approval', {
    config: { access: 'signed-in', auditAction: 'run.approval_undone' },
    schema: {
      summary: 'Take back an approval whose e-mail has not started to go',
      tags,
      params: IdParam,
      body: Type.Object({}, { additionalProperties: false }),
      response: {
        200: dataOf(Run),
        ...writeProblems,
        ...authProblems,
        409: problem('`invalid_state`: the run is not approved, or its delivery has begun (or there is none); '
          + 'nothing changed.'),
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId } = principalOf(request);
    const run = await undoApproval(trx, workspaceId, request.params.id, clock);
    return { status: 200, body: { data: renderRun(config, run) }, target: { type: 'run', id: run.id } };
  }));
}

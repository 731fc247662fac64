// /api/v1/runs/{id}/draft and …/drafts: edit a run's draft in place, and read every version of it (DESIGN §7).
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { renderRun } from '../../run-render.ts';
import {
  answer, authProblems, dataOf, DraftEdit, DraftVersion, IdParam, INT32_MAX, listOf, problem, Run, writeProblems,
} from '../../../schemas/index.ts';
import { detached } from '../../../agent/engine.ts';
import { CpuBudgetExceeded } from '../../../cpu/pool.ts';
import { checkEditAhead, editDraft, listDraftVersions, rememberingCheck, type DraftGroundingCheck } from '../../../domain/runs/drafts.ts';
import { notFound } from '../../../domain/errors.ts';

/** As many versions as a run has: they are numbered by 32-bit integers. */
const DRAFT_VERSIONS_MAX = INT32_MAX;

export default async function draftRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config, cpu } = app.deps;

  // The grounding check of edited text runs in the CPU pool, like WRITER's (DESIGN §10). Its verdict is shown and
  // never blocks the edit: text that takes longer than the CPU budget to check is saved unchecked.
  const checkInPool: DraftGroundingCheck = async (draft, ctx) => {
    try {
      return await cpu.run('checkGrounding', { draft: { subject: draft.subject, body: draft.body }, ctx: detached(ctx) });
    } catch (error) {
      if (error instanceof CpuBudgetExceeded) return null;
      throw error;
    }
  };

  app.patch('/api/v1/runs/:id/draft', {
    config: { scope: 'runs:write', auditAction: 'draft.edited' },
    schema: {
      operationId: 'editDraft',
      summary: 'Edit the draft',
      description: 'While the run is AWAITING_APPROVAL: changes the fields sent (`subject`, `body`, `to`) and keeps the others. '
        + 'The edit is the next version of the draft (`origin: edited`, status DRAFT); the version it replaces becomes SUPERSEDED '
        + 'and stays readable in GET /api/v1/runs/{id}/drafts. The grounding check runs again on the edited text and its verdict '
        + 'is on the draft (`grounding`); it never refuses the edit. An edit that changes nothing makes no version. Approve and '
        + 'reject act on the latest version. Answers the run to a key with `runs:read`; a key with `runs:write` alone gets 204. '
        + 'Audited as `draft.edited` with the version and the fields changed.',
      tags: ['Runs'],
      params: IdParam,
      body: DraftEdit,
      response: {
        200: answer('The run, its draft the edited version.', dataOf(Run)),
        204: Type.Null({ description: 'Edited, for a key without `runs:read`: the run is not shown.' }),
        ...writeProblems,
        ...authProblems,
        409: problem('`invalid_state`: the run is not AWAITING_APPROVAL, and nothing changed.'),
      },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const by = { keyId: principal.keyId, userId: principal.userId };
    // Checked before the transaction, so that no database connection waits on the CPU pool; checked again under the
    // run's lock only when a concurrent edit changed the text in between.
    const check = rememberingCheck(checkInPool);
    await checkEditAhead(db, principal.workspaceId, request.params.id, request.body, by.userId, check);
    return mutate(app.deps, request, reply, async (trx) => {
      const edited = await editDraft(trx, principal.workspaceId, request.params.id, request.body, by, clock, check);
      const target = { type: 'run', id: edited.run.id };
      const details = { version: edited.version, changed: edited.changed.join(',') || 'nothing' };
      return principal.scopes.includes('runs:read')
        ? { status: 200, body: { data: renderRun(config, edited.run) }, target, details }
        : { status: 204, body: null, target, details };
    });
  });

  app.get('/api/v1/runs/:id/drafts', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'listDrafts',
      summary: "List every version of a run's draft",
      description: 'Oldest first: the `generated` version WRITER wrote first, each `regenerated` one written after a rejection '
        + 'with feedback (the feedback is on the version it rejected), and each `edited` one with who edited it and when. '
        + 'A run without a draft yet has none.',
      tags: ['Runs'],
      params: IdParam,
      response: {
        200: answer('Every version of the draft, oldest first.', listOf(DraftVersion, DRAFT_VERSIONS_MAX)),
        ...authProblems,
      },
    },
  }, async (request) => {
    const versions = await listDraftVersions(db, principalOf(request).workspaceId, request.params.id);
    if (!versions) throw notFound('Run');
    return { data: versions };
  });
}

// /ui/api/batches/{id}: a batch of runs as the web UI's batch view shows it, read every 2 s while runs are in the
// pipeline. One query gives each run's state with its lead's name and its draft's subject, without the steps'
// outputs that GET /api/v1/runs?batchId=… carries (API clients follow a batch there).
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { authProblems, IdParam, Nullable, RunStatus, Timestamp } from '../../../schemas/index.ts';
import { batchProgress } from '../../../domain/runs/batches.ts';
import { notFound } from '../../../domain/errors.ts';

const BatchRun = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: RunStatus,
  leadId: Type.String({ format: 'uuid' }),
  leadName: Type.String(),
  companyName: Nullable(Type.String()),
  subject: Nullable(Type.String({ description: "The subject of the run's current draft, once WRITER has written one." })),
  error: Nullable(Type.String()),
  startedAt: Timestamp(),
  completedAt: Nullable(Timestamp()),
}, { $id: 'UiBatchRun' });

export default async function batchRoutes(app: AppInstance): Promise<void> {
  const { db } = app.deps;

  app.get('/ui/api/batches/:id', {
    config: { access: 'signed-in' },
    schema: {
      summary: "A batch's runs: status, lead and draft subject, by lead name",
      tags: ['Web UI'],
      params: IdParam,
      response: { 200: Type.Object({ data: Type.Array(BatchRun) }), ...authProblems },
    },
  }, async (request) => {
    const runs = await batchProgress(db, principalOf(request).workspaceId, request.params.id);
    if (!runs) throw notFound('Batch');
    return { data: runs };
  });
}

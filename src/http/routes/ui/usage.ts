// /ui/api/usage: the workspace's plan and what it has used this month, for Settings / Plan and usage.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { authProblems, Nullable, Timestamp as TimestampOf } from '../../../schemas/index.ts';
import { workspaceUsage } from '../../../domain/workspaces/usage.ts';

const Timestamp = TimestampOf();

const Usage = Type.Object({
  plan: Type.Enum(['FREE', 'PRO']),
  limit: Nullable(Type.Integer({ description: 'Runs a month; null when the plan is unlimited.' })),
  used: Type.Integer(),
  resetsAt: Timestamp,
  days: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), runs: Type.Integer() })),
}, { $id: 'UiUsage' });

export default async function usageRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/usage', {
    config: { access: 'signed-in' },
    schema: { summary: "The workspace's plan and this month's runs", tags, response: { 200: Usage, ...authProblems } },
  }, async (request) => workspaceUsage(db, principalOf(request).workspaceId, config.freePlanMonthlyRuns, clock));
}

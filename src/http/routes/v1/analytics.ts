// /api/v1/analytics: what the workspace's e-mails led to (DESIGN §16), counted from recorded deliveries and replies.
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { outreach, workspaceTimeZone } from '../../../domain/analytics/outreach.ts';
import { answer, authProblems, OutreachQuery, OutreachReport } from '../../../schemas/index.ts';

export default async function analyticsRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;

  app.get('/api/v1/analytics/outreach', {
    config: { scope: 'runs:read' },
    schema: {
      operationId: 'getOutreachAnalytics',
      summary: 'Outreach outcomes',
      description: 'Per group: e-mails sent over SMTP in the range (by the day each was sent, in the workspace\'s time zone), '
        + 'how many were delivered, bounced, replied to by a person, read as interested, answered with an unsubscribe, and whose '
        + 'lead is WON; the reply rate (replied over delivered) and the median hours to the first reply. Counted from the '
        + 'recorded deliveries and replies. Opens and clicks are not tracked. A range over 3 years is 400.',
      tags: ['Analytics'],
      querystring: OutreachQuery,
      response: {
        200: answer('The figures per group.', OutreachReport),
        ...authProblems,
      },
    },
  }, async (request) => {
    const { workspaceId } = principalOf(request);
    const timeZone = await workspaceTimeZone(db, workspaceId);
    const { from, to, groupBy = 'week' } = request.query;
    const report = await outreach(db, workspaceId, { from, to, groupBy, timeZone }, clock.now());
    return { ...report, timeZone };
  });
}

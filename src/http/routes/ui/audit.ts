// /ui/api/audit: the workspace's audit log, newest first, for its admins.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { authProblems, Nullable, Timestamp as TimestampOf } from '../../../schemas/index.ts';
import { listAudit } from '../../../domain/audit/audit.ts';

const Timestamp = TimestampOf();

const AuditEntry = Type.Object({
  id: Type.String(),
  source: Type.Enum(['api', 'ui', 'cli', 'system']),
  keyId: Nullable(Type.String()),
  key: Nullable(Type.Object({ name: Type.String(), prefix: Type.String() })),
  userId: Nullable(Type.String()),
  user: Nullable(Type.Object({ name: Nullable(Type.String()), email: Nullable(Type.String()), removed: Type.Boolean({ description: 'No longer a member.' }) })),
  action: Type.String(),
  target: Nullable(Type.Object({ type: Type.String(), id: Type.String() })),
  outcome: Type.Enum(['success', 'failure', 'denied', 'replayed']),
  status: Nullable(Type.Integer()),
  requestId: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  occurredAt: Timestamp,
  details: Nullable(Type.Record(Type.String(), Nullable(Type.Union([Type.Number(), Type.Boolean(), Type.String()])), {
    description: 'What the action did, in counts: a lead import gives its created, updated and skipped rows. Never personal data.',
  })),
}, { $id: 'UiAuditEntry' });

export default async function auditRoutes(app: AppInstance): Promise<void> {
  const { db } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/audit', {
    config: { access: 'admin' },
    schema: {
      summary: 'The audit log, newest first',
      description: 'Filter by `source`, `actor` (a key id or user id), `action` and `outcome`; more pages are linked by a `Link` header.',
      tags,
      querystring: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
        cursor: Type.Optional(Type.String({ maxLength: 512 })),
        source: Type.Optional(Type.Enum(['api', 'ui', 'cli', 'system'])),
        actor: Type.Optional(Type.String({ maxLength: 64 })),
        action: Type.Optional(Type.String({ maxLength: 64 })),
        outcome: Type.Optional(Type.Enum(['success', 'failure', 'denied', 'replayed'])),
      }),
      response: { 200: Type.Object({ data: Type.Array(AuditEntry) }), ...authProblems },
    },
  }, async (request, reply) => {
    const { limit, cursor, source, actor, action, outcome } = request.query;
    const page = await listAudit(db, principalOf(request).workspaceId, {
      limit, cursor: cursorParam(cursor), source: source ?? null, actor: actor ?? null, action: action ?? null, outcome: outcome ?? null,
    });
    linkNextPage(reply, '/ui/api/audit', page.next, request.query);
    return { data: page.items };
  });
}

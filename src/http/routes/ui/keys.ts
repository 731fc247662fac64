// /ui/api/keys: the workspace's API keys, for its admins: listed, made (the plaintext shown once) and revoked at once.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, Nullable, Timestamp as TimestampOf, writeProblems } from '../../../schemas/index.ts';
import { notFound } from '../../../domain/errors.ts';
import { createKey, listKeys, revokeKey, SCOPES } from '../../../domain/keys/keys.ts';
import { isUuid } from '../../../domain/validation.ts';

const Timestamp = TimestampOf();
const Scope = Type.Enum(SCOPES);

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
  scopes: Type.Array(Scope),
  createdBy: Nullable(Type.Object({
    id: Type.String(), name: Nullable(Type.String()), email: Nullable(Type.String()),
    removed: Type.Boolean({ description: 'The person is no longer a member; the key stays valid until revoked.' }),
  })),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
  state: Type.Enum(['active', 'revoked']),
}, { $id: 'UiApiKey' });

const CreatedApiKey = Type.Intersect([ApiKey, Type.Object({ key: Type.String({ description: 'The plaintext key: shown this once, never again.' }) })]);

export default async function keyRoutes(app: AppInstance): Promise<void> {
  const { db, clock, keys } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/keys', {
    config: { access: 'admin' },
    schema: { summary: "The workspace's API keys", tags, response: { 200: Type.Object({ data: Type.Array(ApiKey) }), ...authProblems } },
  }, async (request) => ({ data: await listKeys(db, principalOf(request).workspaceId) }));

  app.post('/ui/api/keys', {
    config: { access: 'admin', auditAction: 'key.created' },
    schema: {
      summary: 'Create an API key',
      description: 'The answer holds the plaintext key: it is shown this once and only its digest is kept.',
      tags,
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), scopes: Type.Array(Scope, { minItems: 1, uniqueItems: true }) }, { additionalProperties: false }),
      response: { 201: CreatedApiKey, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const created = await createKey(trx, principal.workspaceId, { ...request.body, createdByUserId: principal.userId }, clock);
    const [view] = await listKeys(trx, principal.workspaceId, created.id);
    return { status: 201, body: { ...view!, key: created.key }, target: { type: 'key', id: created.id } };
  }));

  app.post('/ui/api/keys/:id/revoke', {
    config: { access: 'admin', auditAction: 'key.revoked' },
    schema: {
      summary: 'Revoke an API key, at once',
      tags,
      params: Type.Object({ id: Type.String() }),
      body: Type.Object({}, { additionalProperties: false }),
      response: { 200: ApiKey, ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => {
    const { workspaceId } = principalOf(request);
    const { id } = request.params;
    let digest: string | null = null;
    const sent = await mutate(app.deps, request, reply, async (trx) => {
      const revoked = isUuid(id) ? await revokeKey(trx, id, clock, workspaceId) : null;
      if (!revoked) throw notFound('Key');
      digest = revoked.digest;
      const [view] = await listKeys(trx, workspaceId, id);
      return { status: 200, body: view!, target: { type: 'key', id } };
    });
    // This process forgets the key now; the others when the revocation's notice reaches them.
    if (digest) keys.forget(digest);
    return sent;
  });
}

// /ui/api: what the web UI needs beyond /api/v1 — first-run setup, signing in and out, API keys, members, the
// audit log and plan usage. Each route states who may use it (`access`); changes are audited with source "ui".
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import type { AppInstance } from '../../app-instance.ts';
import { assertSameOrigin, principalOf, SESSION_COOKIE } from '../../auth.ts';
import { isLoopbackAddress } from '../../hosts.ts';
import { auditContext, mutate } from '../../mutation.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import { authProblems, Nullable, problem, Timestamp as TimestampOf, writeProblems } from '../../../schemas/index.ts';
import { listAudit, writeAudit } from '../../../domain/audit/audit.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import { createKey, listKeys, revokeKey, SCOPES } from '../../../domain/keys/keys.ts';
import { createSession, endSession, findSession, signIn, type SessionView } from '../../../domain/members/sessions.ts';
import { workspaceUsage } from '../../../domain/workspaces/usage.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../domain/members/passwords.ts';
import { checkSetupToken, clearSetupTokens } from '../../../domain/members/setup-tokens.ts';
import { addMember, listMembers, setUpInstallation, setupNeeded } from '../../../domain/members/users.ts';
import { isUuid } from '../../../domain/validation.ts';

const Timestamp = TimestampOf();
export const Role = Type.Enum(['ADMIN', 'MEMBER']);
const Scope = Type.Enum(SCOPES);

export const Session = Type.Object({
  user: Type.Object({ id: Type.String(), name: Nullable(Type.String()), email: Nullable(Type.String()), role: Role }),
  workspace: Type.Object({ id: Type.String(), name: Type.String(), plan: Type.Enum(['FREE', 'PRO']) }),
  csrfToken: Type.String({ description: 'Send it back in X-CSRF-Token with every change.' }),
}, { $id: 'UiSession' });

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

export const Member = Type.Object({ id: Type.String(), name: Nullable(Type.String()), email: Nullable(Type.String()), role: Role, createdAt: Timestamp }, { $id: 'UiMember' });

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

const Usage = Type.Object({
  plan: Type.Enum(['FREE', 'PRO']),
  limit: Nullable(Type.Integer({ description: 'Runs a month; null when the plan is unlimited.' })),
  used: Type.Integer(),
  resetsAt: Timestamp,
  days: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), runs: Type.Integer() })),
}, { $id: 'UiUsage' });

export const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
const Email = Type.String({ format: 'email', maxLength: 254 });
export const Name = Type.String({ minLength: 1, maxLength: 200 });

export const sessionView = (session: SessionView) => ({
  user: session.user,
  workspace: { id: session.workspace.id, name: session.workspace.name, plan: session.workspace.plan },
  csrfToken: session.csrfToken,
});

export default async function uiRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config, keys } = app.deps;
  const secure = config.publicUrl.startsWith('https:');
  const tags = ['Web UI'];

  const client = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? null });
  const setCookie = (reply: FastifyReply, token: string, expires: Date) =>
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires });
  const auditUi = (request: FastifyRequest, entry: { workspaceId: string; userId: string; action: string; target: { type: string; id: string } | null; status: number }) =>
    writeAudit(db, {
      ...entry, source: 'ui', outcome: 'success', occurredAt: clock.now(), ...auditContext(request),
    });

  // On a non-loopback address anyone on the network could reach an empty installation first: setup then needs
  // the one-time token `serve` printed (src/domain/members/setup-tokens.ts).
  const setupTokenRequired = !isLoopbackAddress(config.host);

  app.get('/ui/api/setup', {
    schema: {
      summary: 'Whether this installation still needs its first workspace',
      tags,
      response: {
        200: Type.Object({
          needed: Type.Boolean(),
          tokenRequired: Type.Boolean({ description: 'Setup needs `setupToken`, the one-time token `leadrun serve` printed at start.' }),
        }),
      },
    },
  }, async () => {
    const needed = await setupNeeded(db);
    return { needed, tokenRequired: needed && setupTokenRequired };
  });

  app.post('/ui/api/setup', {
    schema: {
      summary: 'Set up an empty installation: its first workspace and admin',
      description: 'Only while no workspace exists; signs the new admin in. When leadrun listens on a non-loopback address, '
        + '`setupToken` must be the one-time token `leadrun serve` printed at start.',
      tags,
      body: Type.Object({
        workspaceName: Name, name: Name, email: Email, password: Password, setupToken: Type.Optional(Type.String({ maxLength: 200 })),
      }, { additionalProperties: false }),
      response: {
        201: Session,
        400: authProblems[400],
        403: problem('The request came from another site, or the setup token is missing or not right.'),
        409: problem('The installation is already set up.'),
        413: writeProblems[413],
        415: writeProblems[415],
      },
    },
  }, async (request, reply) => {
    assertSameOrigin(request, config);
    const { setupToken, ...input } = request.body;
    const created = await db.transaction().execute(async (trx) => {
      // Once set up, the answer is 409 whatever the token: the tokens are gone by then.
      if (setupTokenRequired && await setupNeeded(trx)) await checkSetupToken(trx, setupToken);
      const done = await setUpInstallation(trx, input, clock);
      await clearSetupTokens(trx);
      return done;
    });
    const { token, session } = await createSession(db, created.userId, clock, client(request));
    await auditUi(request, { workspaceId: created.workspaceId, userId: created.userId, action: 'workspace.created', target: { type: 'workspace', id: created.workspaceId }, status: 201 });
    setCookie(reply, token, session.expiresAt);
    return reply.code(201).send(sessionView(session));
  });

  app.post('/ui/api/session', {
    schema: {
      summary: 'Sign in',
      tags,
      body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }) }, { additionalProperties: false }),
      response: {
        200: Session,
        400: authProblems[400],
        401: problem('The e-mail or password is not right.'),
        403: problem('The request came from another site.'),
        429: problem('Too many failed sign-ins; see Retry-After.'),
      },
    },
  }, async (request, reply) => {
    assertSameOrigin(request, config);
    const { token, session } = await signIn(db, request.body, clock, { ...client(request), network: normalizeIP(request.ip) });
    await auditUi(request, { workspaceId: session.workspace.id, userId: session.user.id, action: 'session.created', target: null, status: 200 });
    setCookie(reply, token, session.expiresAt);
    return sessionView(session);
  });

  app.get('/ui/api/session', {
    config: { access: 'signed-in' },
    schema: { summary: 'The signed-in person, their workspace and CSRF token', tags, response: { 200: Session, 401: authProblems[401] } },
  }, async (request) => {
    const session = await findSession(db, request.cookies[SESSION_COOKIE] ?? '', clock);
    if (!session) throw new AppError('unauthorized', 'Sign in to continue.');
    return sessionView(session);
  });

  // Opening the UI asks who is signed in. Nobody is an answer, not an error: a browser logs every 401 it gets.
  app.get('/ui/api/start', {
    schema: {
      summary: 'What the web UI opens with: the session, if any, and whether first-run setup is needed',
      description: 'Always 200: `session` is null when the request carries no live session.',
      tags,
      response: {
        200: Type.Object({
          session: Nullable(Session),
          setupNeeded: Type.Boolean(),
          setupTokenRequired: Type.Boolean({ description: 'Setup needs `setupToken`, the one-time token `leadrun serve` printed at start.' }),
        }),
      },
    },
  }, async (request) => {
    const token = request.cookies[SESSION_COOKIE];
    const session = token ? await findSession(db, token, clock) : null;
    const needed = session ? false : await setupNeeded(db);
    return { session: session ? sessionView(session) : null, setupNeeded: needed, setupTokenRequired: needed && setupTokenRequired };
  });

  app.delete('/ui/api/session', {
    config: { access: 'signed-in' },
    schema: { summary: 'Sign out', tags, response: { 204: Type.Null(), 401: authProblems[401], 403: problem('Missing CSRF token, or another site.') } },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await endSession(db, request.cookies[SESSION_COOKIE] ?? '', clock);
    await auditUi(request, { workspaceId: principal.workspaceId, userId: principal.userId!, action: 'session.ended', target: null, status: 204 });
    request.audited = true;
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send(null);
  });

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

  app.get('/ui/api/members', {
    config: { access: 'signed-in' },
    schema: { summary: "The workspace's people", tags, response: { 200: Type.Object({ data: Type.Array(Member) }), ...authProblems } },
  }, async (request) => ({ data: await listMembers(db, principalOf(request).workspaceId) }));

  app.post('/ui/api/members', {
    config: { access: 'admin', auditAction: 'member.added' },
    schema: {
      summary: 'Add a person to the workspace',
      tags,
      body: Type.Object({ name: Name, email: Email, role: Role, password: Password }, { additionalProperties: false }),
      response: { 201: Member, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const member = await addMember(trx, principalOf(request).workspaceId, request.body, clock);
    return { status: 201, body: member, target: { type: 'user', id: member.id } };
  }));

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

  app.get('/ui/api/usage', {
    config: { access: 'signed-in' },
    schema: { summary: "The workspace's plan and this month's runs", tags, response: { 200: Usage, ...authProblems } },
  }, async (request) => workspaceUsage(db, principalOf(request).workspaceId, config.freePlanMonthlyRuns, clock));
}

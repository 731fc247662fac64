// /ui/api: first-run setup, signing in and out, and what the web UI opens with; and the shapes of a session and of a
// person's form fields, which the members' routes use too. Changes are audited with source "ui".
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import type { AppInstance } from '../../app-instance.ts';
import { assertSameOrigin, principalOf, SESSION_COOKIE } from '../../auth.ts';
import { isLoopbackAddress } from '../../hosts.ts';
import { auditContext } from '../../mutation.ts';
import { authProblems, Nullable, problem, writeProblems } from '../../../schemas/index.ts';
import { writeAudit, type AuditDetails } from '../../../domain/audit/audit.ts';
import { AppError } from '../../../domain/errors.ts';
import { createSession, endSession, findSession, signIn, type SessionView } from '../../../domain/members/sessions.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../domain/members/passwords.ts';
import { checkSetupToken, clearSetupTokens } from '../../../domain/members/setup-tokens.ts';
import { setUpInstallation, setupNeeded } from '../../../domain/members/users.ts';
import { changeMailSettings } from '../../../domain/mail-settings/change.ts';
import { SenderIdentityChange } from './mail-settings.ts';

export const Role = Type.Enum(['ADMIN', 'MEMBER']);

export const Session = Type.Object({
  user: Type.Object({ id: Type.String(), name: Nullable(Type.String()), email: Nullable(Type.String()), role: Role }),
  workspace: Type.Object({ id: Type.String(), name: Type.String(), plan: Type.Enum(['FREE', 'PRO']) }),
  csrfToken: Type.String({ description: 'Send it back in X-CSRF-Token with every change.' }),
}, { $id: 'UiSession' });

export const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Name = Type.String({ minLength: 1, maxLength: 200 });

/** Where a new session was opened from, as the sessions list shows it. */
export const sessionClient = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? null });

export const sessionView = (session: SessionView) => ({
  user: session.user,
  workspace: { id: session.workspace.id, name: session.workspace.name, plan: session.workspace.plan },
  csrfToken: session.csrfToken,
});

export default async function sessionRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const secure = config.publicUrl.startsWith('https:');
  const tags = ['Web UI'];

  const setCookie = (reply: FastifyReply, token: string, expires: Date) =>
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires });
  const auditUi = (request: FastifyRequest, entry: {
    workspaceId: string; userId: string; action: string; target: { type: string; id: string } | null; status: number; details?: AuditDetails;
  }) =>
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
        + '`setupToken` must be the one-time token `leadrun serve` printed at start. The sender\'s identity (`fromName`, '
        + '`fromAddress`, `companyName`, `postalAddress`) may be given here or later in Settings / E-mail; until it is '
        + 'complete, approvals with delivery answer 409 `sender_incomplete`.',
      tags,
      body: Type.Object({
        workspaceName: Name, name: Name, email: Email, password: Password, setupToken: Type.Optional(Type.String({ maxLength: 200 })),
        ...SenderIdentityChange,
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
    const { setupToken, fromName, fromAddress, companyName, postalAddress, ...input } = request.body;
    const identity = { fromName, fromAddress, companyName, postalAddress };
    const given = Object.values(identity).some((value) => value?.trim());
    const { created, identityChange } = await db.transaction().execute(async (trx) => {
      // Once set up, the answer is 409 whatever the token: the tokens are gone by then.
      if (setupTokenRequired && await setupNeeded(trx)) await checkSetupToken(trx, setupToken);
      const done = await setUpInstallation(trx, input, clock);
      await clearSetupTokens(trx);
      // The same rules as Settings / E-mail: a field it refuses refuses the setup, with the field named.
      const change = given ? await changeMailSettings(trx, done.workspaceId, identity, { secrets: app.deps.secrets, clock, config }, done.userId) : null;
      return { created: done, identityChange: change };
    });
    const { token, session } = await createSession(db, created.userId, clock, sessionClient(request));
    const target = { type: 'workspace', id: created.workspaceId };
    await auditUi(request, { workspaceId: created.workspaceId, userId: created.userId, action: 'workspace.created', target, status: 201 });
    if (identityChange) {
      await auditUi(request, {
        workspaceId: created.workspaceId, userId: created.userId, action: 'mail_settings.updated', target, status: 201, details: identityChange.details,
      });
    }
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
    const { token, session } = await signIn(db, request.body, clock, { ...sessionClient(request), network: normalizeIP(request.ip) });
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


}

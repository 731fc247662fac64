// /ui/api for people, beyond adding them (src/http/routes/ui/session.ts): admins change a member's role, remove them and
// make password reset links; everyone renames themselves and changes their password; and the two public routes
// that take a reset link's token. Changes are audited with source "ui"; no token or password is ever recorded.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import type { AppInstance } from '../../app-instance.ts';
import { assertSameOrigin, principalOf, SESSION_COOKIE, setSessionCookie } from '../../auth.ts';
import { auditContext, mutate } from '../../mutation.ts';
import { authProblems, Nullable, problem, Timestamp as TimestampOf, writeProblems } from '../../../schemas/index.ts';
import { writeAudit } from '../../../domain/audit/audit.ts';
import { AppError } from '../../../domain/errors.ts';
import { changeRole, removeMember } from '../../../domain/members/members.ts';
import { createResetLink, describeResetLink, resetLinkUrl, resetPassword } from '../../../domain/members/password-resets.ts';
import { PASSWORD_MAX } from '../../../domain/members/passwords.ts';
import { changeOwnPassword, getProfile, SENDER_NAME_MAX, SIGNATURE_MAX, SIGNATURE_MAX_LINES, updateProfile } from '../../../domain/members/profile.ts';
import { createSession, findSession } from '../../../domain/members/sessions.ts';
import { addMember, listMembers } from '../../../domain/members/users.ts';
import { emailResetLink } from '../../../mail/notices.ts';
import { Email, Name, Password, Role, Session, sessionView } from './session.ts';

const Timestamp = TimestampOf();

export const Member = Type.Object({ id: Type.String(), name: Nullable(Type.String()), email: Nullable(Type.String()), role: Role, createdAt: Timestamp }, { $id: 'UiMember' });

const RemovedMember = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  email: Nullable(Type.String({ description: 'The address they had; it is free for a new member now.' })),
  removedAt: Timestamp,
  endedSessions: Type.Integer({ description: 'Sessions that were signed out.' }),
  unassignedLeads: Type.Integer({ description: 'Leads that were assigned to them and are now unassigned.' }),
  revokedKeys: Type.Integer({ description: 'API keys they had created that were revoked (with `revokeKeys`).' }),
}, { $id: 'UiRemovedMember' });

const ResetLink = Type.Object({
  url: Type.String({ description: 'The one-time link: give it to the member privately. Its token is in the fragment.' }),
  expiresAt: Timestamp,
  emailed: Type.Boolean({ description: 'Whether leadrun e-mailed the link to the member too (when the workspace can send e-mail).' }),
  emailError: Nullable(Type.String({ description: 'Why the link could not be e-mailed, when sending was tried and failed.' })),
}, { $id: 'UiPasswordResetLink' });

const Profile = Type.Object({
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  senderName: Nullable(Type.String({ description: 'The name on e-mails sent in your name; null: the workspace\'s sender name.' })),
  signature: Nullable(Type.String({ description: 'Plain text under the e-mails sent in your name.' })),
}, { $id: 'UiProfile' });

const ProfileChanged = Type.Object({ ...Session.properties, profile: Profile }, {
  $id: 'UiProfileChanged', description: 'The session, with your name as it now is, and your profile.',
});

const ResetToken = Type.String({ minLength: 1, maxLength: 100, description: 'The token from the link\'s fragment.' });

const lastAdminProblem = problem('The workspace\'s only admin cannot be made a member or removed.');

// Attempts allowed in the window, then 429: reset tokens per client address (an IPv6 client by its /64), and
// current-password checks per person. Tokens are 256 random bits, so this is not what keeps them safe; it keeps
// a client from trying in bulk, and a stolen session from guessing its owner's password.
const ATTEMPT_WINDOW_MS = 15 * 60 * 1000;
const RESET_ATTEMPTS_PER_ADDRESS = 10;
const PASSWORD_CHANGES_PER_USER = 10;

/** A counter of attempts (in memory, or in Redis shared by every process), refusing past `max` in the window. */
function attemptLimit(app: AppInstance, name: string, max: number, keyOf: (request: FastifyRequest) => string) {
  const limit = app.createRateLimit({ max, timeWindow: ATTEMPT_WINDOW_MS, keyGenerator: (request) => `${name}:${keyOf(request)}` });
  return async (request: FastifyRequest): Promise<void> => {
    let state: Awaited<ReturnType<typeof limit>>;
    try {
      state = await limit(request);
    } catch (error) {
      // The store is away: answer rather than refuse, as the request limit does (src/http/security.ts).
      request.log.warn({ err: error }, `${name} attempts not limited: the store failed`);
      return;
    }
    if (!state.isAllowed && state.isExceeded) {
      const seconds = Math.max(1, state.ttlInSeconds);
      throw new AppError('rate_limited', `Too many attempts; try again in ${Math.ceil(seconds / 60)} minutes.`, { extra: { retryAfterSeconds: seconds } });
    }
  };
}

export default async function memberRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config, keys } = app.deps;
  const tags = ['Web UI'];
  const client = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? null });
  const resetAttempt = attemptLimit(app, 'password-reset', RESET_ATTEMPTS_PER_ADDRESS, (request) => normalizeIP(request.ip));
  const passwordAttempt = attemptLimit(app, 'password-change', PASSWORD_CHANGES_PER_USER, (request) => principalOf(request).userId ?? '');

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

  app.patch('/ui/api/members/:id', {
    config: { access: 'admin', auditAction: 'member.role_changed' },
    schema: {
      summary: "Change a member's role",
      description: 'ADMIN or MEMBER. The workspace\'s only admin cannot be made a member (409).',
      tags,
      params: Type.Object({ id: Type.String() }),
      body: Type.Object({ role: Role }, { additionalProperties: false }),
      response: { 200: Member, ...writeProblems, ...authProblems, 409: lastAdminProblem },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const member = await changeRole(trx, principalOf(request).workspaceId, { userId: request.params.id, role: request.body.role });
    return { status: 200, body: member, target: { type: 'user', id: member.id } };
  }));

  app.post('/ui/api/members/:id/remove', {
    config: { access: 'admin', auditAction: 'member.removed' },
    schema: {
      summary: 'Remove a person from the workspace, at once',
      description: 'They are signed out everywhere and can no longer sign in; their leads become unassigned; their '
        + 'address is free again. With `revokeKeys`, the API keys they created are revoked too; otherwise those keys '
        + 'stay valid and are listed as created by a removed member. The only admin cannot be removed (409).',
      tags,
      params: Type.Object({ id: Type.String() }),
      body: Type.Object({
        revokeKeys: Type.Boolean({ description: 'Also revoke the API keys this person created.' }),
      }, { additionalProperties: false }),
      response: { 200: RemovedMember, ...writeProblems, ...authProblems, 409: lastAdminProblem },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const removed = await removeMember(trx, principal.workspaceId, { userId: request.params.id, revokeKeys: request.body.revokeKeys }, clock);
    // Each revoked key has its own entry too, so that the log of a key tells how it ended.
    for (const key of removed.revokedKeys) {
      await writeAudit(trx, {
        workspaceId: principal.workspaceId, source: 'ui', userId: principal.userId, action: 'key.revoked', target: { type: 'key', id: key.id },
        outcome: 'success', status: 200, occurredAt: clock.now(), ...auditContext(request),
      });
    }
    const { revokedKeys, ...view } = removed;
    return {
      status: 200,
      body: { ...view, revokedKeys: revokedKeys.length },
      target: { type: 'user', id: removed.id },
      afterCommit: (r) => {
        // This process forgets the keys now; the others when the revocations' notices reach them.
        for (const key of revokedKeys) keys.forget(key.digest);
        // An admin who removed themselves is signed out with the rest of their sessions.
        if (removed.id === principal.userId) r.clearCookie(SESSION_COOKIE, { path: '/' });
      },
    };
  }));

  app.post('/ui/api/members/:id/password-reset', {
    config: { access: 'admin', auditAction: 'member.password_reset_link_created' },
    schema: {
      summary: 'Make a one-time link for a member to set a new password',
      description: 'The link works once, for 24 hours, and ends when a newer one is made, the password changes or the '
        + 'member is removed. Only its digest is kept: the answer is the one time it is shown.',
      tags,
      params: Type.Object({ id: Type.String() }),
      body: Type.Object({}, { additionalProperties: false }),
      response: { 201: ResetLink, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const principal = principalOf(request);
    const link = await createResetLink(trx, principal.workspaceId, { userId: request.params.id, createdByUserId: principal.userId }, clock);
    const url = resetLinkUrl(config.publicUrl, link.token);
    const body: { url: string; expiresAt: Date; emailed: boolean; emailError: string | null } = { url, expiresAt: link.expiresAt, emailed: false, emailError: null };
    const names = await trx.selectFrom('workspaces').leftJoin('users', (join) => join.on('users.id', '=', principal.userId))
      .select(['workspaces.name as workspace', 'users.name as admin']).where('workspaces.id', '=', principal.workspaceId).executeTakeFirstOrThrow();
    return {
      status: 201,
      body,
      target: { type: 'user', id: link.user.id },
      // Shown to the admin always; e-mailed to the member as well when the workspace can send, once the link exists.
      afterCommit: async () => {
        if (!link.user.email) return;
        const sent = await emailResetLink(db, principal.workspaceId, {
          to: link.user.email, memberName: link.user.name, adminName: names.admin, workspaceName: names.workspace, url, expiresAt: link.expiresAt,
        }, { secrets: app.deps.secrets, config, clock });
        body.emailed = sent.emailed;
        body.emailError = sent.emailed ? null : sent.error;
        if (!sent.emailed && sent.error) request.log.warn({ userId: link.user.id, error: sent.error }, 'a password-reset link could not be e-mailed');
      },
    };
  }));

  app.get('/ui/api/profile', {
    config: { access: 'signed-in' },
    schema: { summary: 'Your own profile', tags, response: { 200: Profile, ...authProblems } },
  }, async (request) => {
    const { workspaceId, userId } = principalOf(request);
    return getProfile(db, workspaceId, userId!);
  });

  app.patch('/ui/api/profile', {
    config: { access: 'signed-in', auditAction: 'user.updated' },
    schema: {
      summary: 'Change your own name, sender name or signature',
      description: 'Fields left out stay as they are; null or blank clears the sender name or the signature.',
      tags,
      body: Type.Object({
        name: Type.Optional(Name),
        senderName: Type.Optional(Nullable(Type.String({ maxLength: SENDER_NAME_MAX, description: 'One line.' }))),
        signature: Type.Optional(Nullable(Type.String({
          // Room for line ends written as \r\n; the signature as kept is at most SIGNATURE_MAX characters.
          maxLength: SIGNATURE_MAX + SIGNATURE_MAX_LINES,
          description: `Plain text of at most ${SIGNATURE_MAX} characters and ${SIGNATURE_MAX_LINES} lines.`,
        }))),
      }, { additionalProperties: false }),
      response: { 200: ProfileChanged, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId, userId } = principalOf(request);
    const profile = await updateProfile(trx, workspaceId, userId!, request.body);
    const session = await findSession(trx, request.cookies[SESSION_COOKIE] ?? '', clock);
    if (!session) throw new AppError('unauthorized', 'Sign in to continue.');
    return {
      status: 200,
      body: { ...sessionView(session), profile },
      target: { type: 'user', id: userId! },
      details: { changed: Object.keys(request.body).sort().join(',') },
    };
  }));

  app.post('/ui/api/profile/password', {
    config: { access: 'signed-in', auditAction: 'user.password_changed' },
    schema: {
      summary: 'Change your own password',
      description: 'Needs the current password. Every session of yours ends, this one included; this browser is given '
        + 'a new session (and CSRF token) in the answer, so it stays signed in.',
      tags,
      body: Type.Object({
        currentPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
        newPassword: Password,
      }, { additionalProperties: false }),
      response: { 200: Session, ...writeProblems, ...authProblems, 429: problem('Too many attempts; see Retry-After.') },
    },
  }, async (request, reply) => {
    await passwordAttempt(request);
    return mutate(app.deps, request, reply, async (trx) => {
      const { workspaceId, userId } = principalOf(request);
      await changeOwnPassword(trx, workspaceId, userId!, request.body, clock);
      const { token, session } = await createSession(trx, userId!, clock, client(request));
      return {
        status: 200,
        body: sessionView(session),
        target: { type: 'user', id: userId! },
        afterCommit: (r) => setSessionCookie(r, config, token, session.expiresAt),
      };
    });
  });

  app.post('/ui/api/password-reset/check', {
    schema: {
      summary: 'Whose password a reset link sets, while it can be used',
      description: 'Public: the token is what proves the right to use it. Attempts are limited per client address.',
      tags,
      body: Type.Object({ token: ResetToken }, { additionalProperties: false }),
      response: {
        200: Type.Object({ name: Nullable(Type.String()), email: Nullable(Type.String()), expiresAt: Timestamp }),
        400: problem('The link is not valid, was used, was replaced or has expired; `errors` names `token` and says which.'),
        403: problem('The request came from another site.'),
        429: problem('Too many attempts from this address; see Retry-After.'),
      },
    },
  }, async (request) => {
    assertSameOrigin(request, config);
    await resetAttempt(request);
    return describeResetLink(db, request.body.token, clock);
  });

  app.post('/ui/api/password-reset', {
    schema: {
      summary: 'Set a new password with a reset link, and sign in',
      description: 'Public: the token is what proves the right to use it. Uses the link up, ends every session of the '
        + 'person, and signs this browser in. Attempts are limited per client address.',
      tags,
      body: Type.Object({ token: ResetToken, password: Password }, { additionalProperties: false }),
      response: {
        200: Session,
        400: problem('The password breaks a rule, or the link cannot be used; `errors` names the field.'),
        403: problem('The request came from another site.'),
        413: writeProblems[413],
        415: writeProblems[415],
        429: problem('Too many attempts from this address; see Retry-After.'),
      },
    },
  }, async (request, reply) => {
    assertSameOrigin(request, config);
    await resetAttempt(request);
    const { token, session } = await db.transaction().execute(async (trx) => {
      const reset = await resetPassword(trx, request.body, clock);
      const signedIn = await createSession(trx, reset.userId, clock, client(request));
      await writeAudit(trx, {
        workspaceId: reset.workspaceId, source: 'ui', userId: reset.userId, action: 'user.password_reset',
        target: { type: 'user', id: reset.userId }, outcome: 'success', status: 200, occurredAt: clock.now(), ...auditContext(request),
      });
      return signedIn;
    });
    setSessionCookie(reply, config, token, session.expiresAt);
    return sessionView(session);
  });
}

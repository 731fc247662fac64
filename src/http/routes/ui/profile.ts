// /ui/api/profile: what every person changes about themselves — their name, the sender name and signature of the
// e-mails sent in their name, and their password.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { attemptLimit, PASSWORD_CHANGES_PER_USER } from '../../attempt-limit.ts';
import { principalOf, SESSION_COOKIE, setSessionCookie } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, Nullable, problem, writeProblems } from '../../../schemas/index.ts';
import { AppError } from '../../../domain/errors.ts';
import { PASSWORD_MAX } from '../../../domain/members/passwords.ts';
import { changeOwnPassword, getProfile, SENDER_NAME_MAX, SIGNATURE_MAX, SIGNATURE_MAX_LINES, updateProfile } from '../../../domain/members/profile.ts';
import { createSession, findSession } from '../../../domain/members/sessions.ts';
import { Name, Password, Session, sessionClient, sessionView } from './session.ts';

const Profile = Type.Object({
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  senderName: Nullable(Type.String({ description: 'The name on e-mails sent in your name; null: the workspace\'s sender name.' })),
  signature: Nullable(Type.String({ description: 'Plain text under the e-mails sent in your name.' })),
}, { $id: 'UiProfile' });

const ProfileChanged = Type.Object({ ...Session.properties, profile: Profile }, {
  $id: 'UiProfileChanged', description: 'The session, with your name as it now is, and your profile.',
});

export default async function profileRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const tags = ['Web UI'];
  const passwordAttempt = attemptLimit(app, 'password-change', PASSWORD_CHANGES_PER_USER, (request) => principalOf(request).userId ?? '');

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
      const { token, session } = await createSession(trx, userId!, clock, sessionClient(request));
      return {
        status: 200,
        body: sessionView(session),
        target: { type: 'user', id: userId! },
        afterCommit: (r) => setSessionCookie(r, config, token, session.expiresAt),
      };
    });
  });
}

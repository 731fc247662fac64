// /ui/api/password-reset: a member sets a new password with the one-time link an admin made (POST
// /ui/api/members/{id}/password-reset), and is signed in. Public: the token is what proves the right to use it.
import { Type } from 'typebox';
import { normalizeIP } from '@fastify/rate-limit';
import type { AppInstance } from '../../app-instance.ts';
import { attemptLimit, RESET_ATTEMPTS_PER_ADDRESS } from '../../attempt-limit.ts';
import { assertSameOrigin, setSessionCookie } from '../../auth.ts';
import { auditContext } from '../../mutation.ts';
import { Nullable, problem, Timestamp as TimestampOf, writeProblems } from '../../../schemas/index.ts';
import { writeAudit } from '../../../domain/audit/audit.ts';
import { describeResetLink, resetPassword } from '../../../domain/members/password-resets.ts';
import { createSession } from '../../../domain/members/sessions.ts';
import { Password, Session, sessionClient, sessionView } from './session.ts';

const Timestamp = TimestampOf();
const ResetToken = Type.String({ minLength: 1, maxLength: 100, description: 'The token from the link\'s fragment.' });

export default async function passwordResetRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const tags = ['Web UI'];
  const resetAttempt = attemptLimit(app, 'password-reset', RESET_ATTEMPTS_PER_ADDRESS, (request) => normalizeIP(request.ip));

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
      const signedIn = await createSession(trx, reset.userId, clock, sessionClient(request));
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

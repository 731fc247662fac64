// /ui/api/members: the workspace's people — listed for everyone; added, given another role, removed and sent a
// password reset link by its admins. Changes are audited with source "ui"; no token or password is ever recorded.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf, SESSION_COOKIE } from '../../auth.ts';
import { auditContext, mutate } from '../../mutation.ts';
import { authProblems, Nullable, problem, Timestamp as TimestampOf, writeProblems } from '../../../schemas/index.ts';
import { writeAudit } from '../../../domain/audit/audit.ts';
import { changeRole, removeMember } from '../../../domain/members/members.ts';
import { createResetLink, resetLinkUrl } from '../../../domain/members/password-resets.ts';
import { addMember, listMembers } from '../../../domain/members/users.ts';
import { emailResetLink } from '../../../mail/notices.ts';
import { Email, Name, Password, Role } from './session.ts';

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

const lastAdminProblem = problem('The workspace\'s only admin cannot be made a member or removed.');

export default async function memberRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config, keys } = app.deps;
  const tags = ['Web UI'];

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


}

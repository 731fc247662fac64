// /ui/api/reply-settings: what replies do in the workspace (DESIGN §16), set by an admin in Settings / E-mail.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, writeProblems } from '../../../schemas/index.ts';
import { getReplySettings, updateReplySettings } from '../../../domain/replies/settings.ts';

const ReplySettings = Type.Object({
  qualifyOnInterest: Type.Boolean({ description: 'An interested reply moves a CONTACTED lead to QUALIFIED.' }),
}, { $id: 'UiReplySettings' });

export default async function replySettingsRoutes(app: AppInstance): Promise<void> {
  const { db } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/reply-settings', {
    config: { access: 'admin' },
    schema: { summary: 'What replies do', tags, response: { 200: ReplySettings, ...authProblems } },
  }, async (request) => getReplySettings(db, principalOf(request).workspaceId));

  app.patch('/ui/api/reply-settings', {
    config: { access: 'admin', auditAction: 'reply_settings.updated' },
    schema: {
      summary: 'Change what replies do',
      tags,
      body: Type.Object({ qualifyOnInterest: Type.Optional(ReplySettings.properties.qualifyOnInterest) }, { additionalProperties: false }),
      response: { 200: ReplySettings, ...writeProblems, ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId } = principalOf(request);
    return { status: 200, body: await updateReplySettings(trx, workspaceId, request.body), target: { type: 'workspace', id: workspaceId } };
  }));
}

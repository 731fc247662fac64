// /ui/api/settings/sending: the workspace's send window, time zone and per-sender limits (DESIGN §14), beside the
// mail transport in Settings / E-mail, for its admins; with each sending address's count today.
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, writeProblems } from '../../../schemas/index.ts';
import { SendingSettings, SendingSettingsChange } from '../../../schemas/outbox.ts';
import { changeSendingSettings, getSendingSettingsView } from '../../../domain/sending/settings.ts';

export default async function sendingSettingsRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/settings/sending', {
    config: { access: 'admin' },
    schema: {
      summary: 'The workspace\'s send window and per-sender limits',
      tags,
      response: { 200: SendingSettings, ...authProblems },
    },
  }, async (request) => getSendingSettingsView(db, principalOf(request).workspaceId, clock));

  app.put('/ui/api/settings/sending', {
    config: { access: 'admin', auditAction: 'sending_settings.updated' },
    schema: {
      summary: 'Change the workspace\'s send window and per-sender limits',
      description: 'Fields left out stay as they are. Deliveries already waiting keep their time and are checked again when it comes.',
      tags,
      body: SendingSettingsChange,
      response: { 200: SendingSettings, ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { workspaceId, userId } = principalOf(request);
    const { view, details } = await changeSendingSettings(trx, workspaceId, request.body, userId, clock);
    return { status: 200, body: view, target: { type: 'workspace', id: workspaceId }, details };
  }));
}

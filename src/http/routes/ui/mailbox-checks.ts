// /ui/api for Settings / E-mail's "Check connection" of IMAP (DESIGN §7): admins try settings before saving them,
// or the saved ones. The answer is 200 either way, saying whether the server signed in and has a Drafts folder, or
// why not in words for the admin; the attempt is audited (never with the password).
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, writeProblems } from '../../../schemas/index.ts';
import { invalid } from '../../../domain/errors.ts';
import { verifyImap } from '../../../mail/imap.ts';
import { DEFAULT_DRAFTS_FOLDER, loadMailTransport, passwordAppliesTo, type ImapSettings } from '../../../domain/mail-settings/settings.ts';

export const ImapCheck = Type.Object({
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 253, pattern: '^[^\\s/@]+$', description: 'A host name or address.' })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  security: Type.Optional(Type.Enum(['tls', 'starttls', 'none'], { description: 'TLS from the first byte, STARTTLS required, or plain.' })),
  user: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  password: Type.Optional(Type.String({
    minLength: 1, maxLength: 1000,
    description: 'Left out: the saved password, when host, port, user and security are those it was saved with; '
      + 'else 400.',
  })),
  draftsFolder: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}, {
  additionalProperties: false,
  description: 'Settings to try before saving them. Left out altogether: the saved settings are tried.',
});

export const MailboxCheckResult = Type.Union([
  Type.Object({ ok: Type.Literal(true) }),
  Type.Object({ ok: Type.Literal(false), error: Type.String({ description: 'What went wrong, for the admin.' }) }),
], { $id: 'UiMailboxCheckResult' });

export default async function mailboxCheckRoutes(app: AppInstance): Promise<void> {
  const { db, config } = app.deps;

  app.post('/ui/api/settings/email/check-imap', {
    config: { access: 'admin', auditAction: 'mail_settings.imap_checked' },
    schema: {
      summary: 'Check an IMAP connection',
      description: 'Signs in to the IMAP server and looks for the Drafts folder (by name, or the folder marked \\Drafts). '
        + 'Answers 200 with `ok`, or with `error` saying why not; 400 naming `password` when none is given and no '
        + 'saved one applies (it is sent only to the host, port, user and security it was saved with). Mail servers '
        + 'on private networks are refused unless ALLOW_PRIVATE_HOSTS=true.',
      tags: ['Web UI'],
      body: ImapCheck,
      response: { 200: MailboxCheckResult, ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => {
    const workspaceId = principalOf(request).workspaceId;
    const body = request.body;
    const saved = (await loadMailTransport(db, workspaceId, app.deps.secrets(), config)).imap;
    let settings: ImapSettings | null;
    if (body.host === undefined) {
      settings = saved;
    } else {
      for (const field of ['port', 'security', 'user'] as const) {
        if (body[field] === undefined) throw invalid(field, 'is needed with host');
      }
      const tried = { host: body.host, port: body.port!, security: body.security!, user: body.user! };
      // A password left out is the saved one, but only for the host, port, user and security it was saved with: it is
      // never sent elsewhere, nor in clear text when it was saved for TLS. IMAP always signs in, so without it there is
      // nothing to try: the field to fill is named, as saving these values would name it.
      const password = body.password ?? (saved && passwordAppliesTo(saved, tried) ? saved.password : null);
      if (password === null) {
        throw invalid('password', saved
          ? 'is required: the saved password is sent only to the host, port, user and security it was saved with'
          : 'is required: no password is saved for this workspace');
      }
      const draftsFolder = body.draftsFolder ?? saved?.draftsFolder ?? DEFAULT_DRAFTS_FOLDER;
      settings = { ...tried, password, draftsFolder };
    }
    const result = settings
      ? await verifyImap(settings, { allowPrivateHosts: config.allowPrivateHosts })
      : { ok: false as const, error: 'No IMAP server is saved for this workspace.' };
    // The check talks to the server outside any transaction; its audit entry is written once it has answered.
    return mutate(app.deps, request, reply, async () => ({
      status: 200, body: result, target: { type: 'workspace', id: workspaceId }, details: { ok: result.ok },
    }));
  });
}

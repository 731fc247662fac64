// /ui/api/settings/email: the workspace's mail transport (DESIGN §7), for its admins. The answer shows whether a
// password is stored, never the password; a change is audited as `mail_settings.updated` with the parts it changed.
import { Type } from 'typebox';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, Nullable, Timestamp, writeProblems } from '../../../schemas/index.ts';
import {
  changeMailSettings, DRAFTS_FOLDER_MAX, FROM_NAME_MAX, HOST_MAX, MAIL_PASSWORD_MAX, MAIL_USER_MAX, refusePrivateMailHosts,
} from '../../../domain/mail-settings/change.ts';
import { scheduleReplyChecks } from '../../../mail/replies.ts';
import { getMailSettingsView } from '../../../domain/mail-settings/settings.ts';

const Security = Type.Enum(['tls', 'starttls', 'none'], {
  description: '`tls`: TLS from the first byte (SMTP 465, IMAP 993); `starttls`: plain, then STARTTLS, required (SMTP 587, IMAP 143); `none`: no TLS.',
});
const DefaultDeliver = Type.Enum(['send', 'mailbox', 'none'], {
  description: 'What an approval without `deliver` does: send over SMTP, save to the sender\'s mailbox over IMAP, or only approve.',
});
const Host = Type.String({ minLength: 1, maxLength: HOST_MAX, description: 'The server\'s host name or IP address, without a scheme or port.' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const User = Type.String({ maxLength: MAIL_USER_MAX });
const PasswordInput = Nullable(Type.String({
  maxLength: MAIL_PASSWORD_MAX,
  description: 'Left out: the stored password stays while host, port, user and security stay as it was saved with, '
    + 'and is dropped when any of them changes (IMAP then needs it again). null or empty: no password. Stored '
    + 'encrypted; never shown again.',
}));
const PasswordSet = Type.Boolean({
  description: 'Whether a password is stored. It is sent only to this host and port, as this user, with this security; '
    + 'a change of any of them drops it. The password itself is never in an answer.',
});
const Address = Type.Object({ name: Nullable(Type.String()), address: Type.String() });

const MailSettings = Type.Object({
  fromName: Nullable(Type.String()),
  fromAddress: Nullable(Type.String()),
  defaultDeliver: Nullable(DefaultDeliver),
  smtp: Nullable(Type.Object({
    host: Type.String(), port: Type.Integer(), security: Security, user: Nullable(Type.String()),
    passwordSet: PasswordSet,
  })),
  imap: Nullable(Type.Object({
    host: Type.String(), port: Type.Integer(), security: Security, user: Nullable(Type.String()),
    passwordSet: PasswordSet,
    draftsFolder: Type.String(),
  })),
  identity: Type.Object({
    companyName: Nullable(Type.String({ description: 'The footer\'s company name; null: the workspace\'s name.' })),
    postalAddress: Nullable(Type.String({ description: 'The footer\'s postal address; null: MAIL_POSTAL_ADDRESS.' })),
    footerEnabled: Type.Boolean(),
    unsubscribeAddress: Nullable(Type.String({ description: 'Takes unsubscribe requests by mail (a mailto: in List-Unsubscribe).' })),
  }, { description: 'The sender\'s identity every e-mail carries (DESIGN §15).' }),
  installation: Type.Object({
    smtp: Nullable(Type.Object({ host: Type.String(), port: Type.Integer() }, { description: 'SMTP_URL\'s server, without its credentials.' })),
    from: Nullable(Address),
    postalAddress: Nullable(Type.String({ description: 'MAIL_POSTAL_ADDRESS.' })),
  }, { description: 'What applies where the workspace sets nothing: SMTP_URL, MAIL_FROM and MAIL_POSTAL_ADDRESS.' }),
  updatedAt: Nullable(Timestamp()),
}, { $id: 'UiMailSettings' });

/** The sender's identity (DESIGN §15) as a change gives it: here, and on the setup page (./session.ts). */
export const SenderIdentityChange = {
  fromName: Type.Optional(Nullable(Type.String({ maxLength: FROM_NAME_MAX, description: 'The name on the workspace\'s e-mails.' }))),
  fromAddress: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254, description: 'The address e-mails are sent from.' }))),
  companyName: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'The footer\'s company name; null: the workspace\'s name.' }))),
  postalAddress: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'The footer\'s postal address, on one or more lines.' }))),
};

const MailSettingsChange = Type.Object({
  ...SenderIdentityChange,
  defaultDeliver: Type.Optional(Nullable(DefaultDeliver)),
  footerEnabled: Type.Optional(Type.Boolean({ description: 'Whether e-mails carry the footer (on unless turned off).' })),
  unsubscribeAddress: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254, description: 'An address taking unsubscribe requests by mail.' }))),
  smtp: Type.Optional(Nullable(Type.Object({
    host: Host, port: Port, security: Security,
    user: Type.Optional(Nullable(User)),
    password: Type.Optional(PasswordInput),
  }, { additionalProperties: false, description: 'null removes SMTP: the installation\'s SMTP_URL then applies, if set.' }))),
  imap: Type.Optional(Nullable(Type.Object({
    host: Host, port: Port, security: Security,
    user: Type.Optional(Nullable(User)),
    password: Type.Optional(PasswordInput),
    draftsFolder: Type.Optional(Nullable(Type.String({ maxLength: DRAFTS_FOLDER_MAX, description: 'Where `mailbox` saves drafts; Drafts when left empty.' }))),
  }, { additionalProperties: false, description: 'null removes IMAP.' }))),
}, { additionalProperties: false, $id: 'UiMailSettingsChange' });

export default async function mailSettingsRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const tags = ['Web UI'];

  app.get('/ui/api/settings/email', {
    config: { access: 'admin' },
    schema: {
      summary: 'The workspace\'s mail settings',
      description: 'Passwords are never shown: `passwordSet` says whether one is stored.',
      tags,
      response: { 200: MailSettings, ...authProblems },
    },
  }, async (request) => getMailSettingsView(db, principalOf(request).workspaceId, config));

  app.put('/ui/api/settings/email', {
    config: { access: 'admin', auditAction: 'mail_settings.updated' },
    schema: {
      summary: 'Change the workspace\'s mail settings',
      description: 'Fields left out stay as they are; a password left out keeps the stored one unless the change of '
        + 'server alters its host, port, user or security, which drops it. Saving schedules the next reply check at '
        + 'once. Servers on private or loopback addresses are refused unless ALLOW_PRIVATE_HOSTS is set.',
      tags,
      body: MailSettingsChange,
      response: { 200: MailSettings, ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => {
    // Names are resolved before the transaction: a slow DNS answer must not hold the row locked.
    await refusePrivateMailHosts(request.body, config.allowPrivateHosts);
    return mutate(app.deps, request, reply, async (trx) => {
      const { workspaceId, userId } = principalOf(request);
      const { view, details } = await changeMailSettings(trx, workspaceId, request.body, { secrets: app.deps.secrets, clock, config }, userId);
      // With IMAP set up, the inbox is checked for replies from now on (one live check per workspace), the next one at
      // once: settings that mend a failing check must not wait out its backoff.
      await scheduleReplyChecks(trx, workspaceId, clock.now());
      return { status: 200, body: view, target: { type: 'workspace', id: workspaceId }, details };
    });
  });
}

// /ui/api for the mail transport's buttons and what the approve buttons may offer: "Check connection" tries SMTP
// settings (the saved ones, or ones not saved yet) without sending anything, "Send test e-mail" sends a short
// message with the saved settings, and the capabilities say whether send and mailbox can be offered. The checks talk
// to the server outside any database transaction (a slow server must not hold a connection), then audit the outcome.
import { Type, type Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { authProblems, writeProblems } from '../../../schemas/index.ts';
import { invalid } from '../../../domain/errors.ts';
import { composeMessage, newMessageId } from '../../../mail/message.ts';
import { loadMailTransport, passwordAppliesTo, type MailTransport, type SmtpSettings } from '../../../domain/mail-settings/settings.ts';
import { sendRaw, verifySmtp } from '../../../mail/smtp.ts';
import type { AppInstance } from '../../app-instance.ts';

const CheckResult = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.String({ description: 'What went wrong, in words for a person: the server\'s own where it gave some.' })),
});

// All or none of host, port and security: without them, the saved settings are checked.
const SmtpCandidate = Type.Object({
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  security: Type.Optional(Type.Enum(['tls', 'starttls', 'none'])),
  user: Type.Optional(Type.Union([Type.String({ maxLength: 320 }), Type.Null()])),
  password: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
}, { additionalProperties: false });

const Capabilities = Type.Object({
  send: Type.Boolean({ description: 'An SMTP server (the workspace\'s or SMTP_URL) and a sender address are set up.' }),
  mailbox: Type.Boolean({ description: 'An IMAP mailbox is set up.' }),
  defaultDeliver: Type.Enum(['send', 'mailbox', 'none']),
});

function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export default async function mailCheckRoutes(app: AppInstance): Promise<void> {
  const { db, config } = app.deps;
  const tags = ['Web UI'];
  const transportOf = (workspaceId: string): Promise<MailTransport> => loadMailTransport(db, workspaceId, app.deps.secrets(), config);
  const options = { allowPrivateHosts: config.allowPrivateHosts };

  app.get('/ui/api/settings/email/capabilities', {
    config: { access: 'signed-in' },
    schema: { summary: 'What approving can do with the e-mail', tags, response: { 200: Capabilities, ...authProblems } },
  }, async (request) => {
    const transport = await transportOf(principalOf(request).workspaceId);
    const send = Boolean(transport.smtp && transport.from);
    const mailbox = Boolean(transport.imap && transport.from);
    const asked = transport.defaultDeliver;
    // A default the workspace cannot honour any more (its SMTP was removed) is not offered as one.
    const defaultDeliver = (asked === 'send' && !send) || (asked === 'mailbox' && !mailbox) ? 'none' : asked;
    return { send, mailbox, defaultDeliver };
  });

  /**
   * The settings a check tries: those given, with the stored password when none is given and host, port, user and
   * security are those it was saved with.
   */
  async function candidate(request: FastifyRequest, given: Static<typeof SmtpCandidate> | undefined): Promise<SmtpSettings | null> {
    const saved = (await transportOf(principalOf(request).workspaceId)).smtp;
    if (!given || (given.host === undefined && given.port === undefined && given.security === undefined)) return saved;
    if (given.host === undefined) throw invalid('host', 'is required with port and security');
    if (given.port === undefined) throw invalid('port', 'is required with host and security');
    if (given.security === undefined) throw invalid('security', 'is required with host and port');
    const tried = { host: given.host, port: given.port, security: given.security, user: given.user || null };
    if (given.password !== undefined) return { ...tried, password: given.password || null };
    if (saved?.password && passwordAppliesTo(saved, tried)) return { ...tried, password: saved.password };
    // The stored password is never sent elsewhere. A check that signs in without it would only answer that the server
    // refused the user name or password, which reads as if the saved password were wrong; the admin is asked for it
    // instead, by the field to fill, as saving these values would (it drops the saved password).
    if (saved?.password && tried.user) {
      throw invalid('password',
        'is required: the saved password is sent only to the host, port, user and security it was saved with');
    }
    return { ...tried, password: null };
  }

  app.post('/ui/api/settings/email/check-smtp', {
    config: { access: 'admin', auditAction: 'mail_settings.smtp_checked' },
    schema: {
      summary: 'Check an SMTP connection without sending',
      description: 'Connects, secures and authenticates with the settings given (not saved yet) or, without a body, the saved '
        + 'ones. A password left out is the stored one only when host, port, user and security are those it was '
        + 'saved with; otherwise, with a user, the answer is 400 naming `password`. Answers 200 either way: `ok`, or '
        + '`error`.',
      tags,
      body: Type.Optional(SmtpCandidate),
      response: { 200: CheckResult, ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => {
    const smtp = await candidate(request, request.body);
    let result: { ok: boolean; error?: string };
    if (!smtp) result = { ok: false, error: 'No SMTP server is set up.' };
    else {
      try {
        await verifySmtp(smtp, options);
        result = { ok: true };
      } catch (error) {
        result = { ok: false, error: failureText(error) };
      }
    }
    return mutate(app.deps, request, reply, async () => ({ status: 200, body: result, target: null, details: { ok: result.ok } }));
  });

  app.post('/ui/api/settings/email/send-test', {
    config: { access: 'admin', auditAction: 'mail_settings.test_sent' },
    schema: {
      summary: 'Send a test e-mail with the saved settings',
      description: 'To `to`, or to the admin\'s own address. Answers 200 either way: `ok` with the `messageId`, or `error`.',
      tags,
      body: Type.Optional(Type.Object({
        to: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
      }, { additionalProperties: false })),
      response: {
        200: Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()), messageId: Type.Optional(Type.String()) }),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const transport = await transportOf(principal.workspaceId);
    const me = principal.userId
      ? await db.selectFrom('users').select(['email', 'name', 'sender_name']).where('id', '=', principal.userId).executeTakeFirst()
      : undefined;
    const to = request.body?.to ?? me?.email ?? null;
    let result: { ok: boolean; error?: string; messageId?: string };
    if (!transport.smtp) result = { ok: false, error: 'No SMTP server is set up.' };
    else if (!transport.from) result = { ok: false, error: 'No sender address is set up.' };
    else if (!to) result = { ok: false, error: 'Give an address to send the test to.' };
    else {
      const messageId = newMessageId(transport.from.address);
      try {
        const raw = await composeMessage({
          from: { name: me?.sender_name || me?.name || transport.from.name, address: transport.from.address },
          to, replyTo: null, subject: 'leadrun test e-mail',
          body: 'This is a test e-mail from leadrun: the SMTP settings of your workspace work.', signature: null,
          messageId, date: app.deps.clock.now(),
        });
        await sendRaw(transport.smtp, { from: transport.from.address, to: [to] }, raw, options);
        result = { ok: true, messageId };
      } catch (error) {
        result = { ok: false, error: failureText(error) };
      }
    }
    return mutate(app.deps, request, reply, async () => ({ status: 200, body: result, target: null, details: { ok: result.ok } }));
  });
}

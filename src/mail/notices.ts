// E-mails leadrun sends on its own account rather than a rep's: today, a password-reset link to a member. Sent at
// once, while the admin waits (about a second; at most NOTICE_TIMEOUT_MS), and never queued: a queued job would have
// to keep the link's token, and only its digest is ever stored. The admin sees the link either way.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { composeMessage, newMessageId } from './message.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { loadMailTransport } from '../domain/mail-settings/settings.ts';
import { isAttemptFailure } from '../jobs/errors.ts';
import { sendRaw } from './smtp.ts';

export const NOTICE_TIMEOUT_MS = 20_000;

/** Whether the e-mail went out; `error` says why not when a transport was there to try. */
export type NoticeResult = { emailed: true } | { emailed: false; error: string | null };

export interface ResetLinkNotice {
  to: string;
  memberName: string | null;
  adminName: string | null;
  workspaceName: string;
  url: string;
  expiresAt: Date;
}

export async function emailResetLink(
  db: Kysely<DB>, workspaceId: string, notice: ResetLinkNotice,
  deps: { secrets: () => SecretBox; config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'allowPrivateHosts'>; clock: Clock; extraCa?: string | null },
): Promise<NoticeResult> {
  let transport;
  try {
    transport = await loadMailTransport(db, workspaceId, deps.secrets(), deps.config);
  } catch (error) {
    return { emailed: false, error: (error as Error).message };
  }
  if (!transport.smtp || !transport.from) return { emailed: false, error: null };
  const greeting = notice.memberName ? `Hello ${notice.memberName},` : 'Hello,';
  const body = [
    greeting,
    '',
    `${notice.adminName ?? 'An admin'} made a link for you to set a new password for ${notice.workspaceName} on leadrun:`,
    '',
    notice.url,
    '',
    `It works once, until ${notice.expiresAt.toUTCString()}. If you did not expect it, tell ${notice.adminName ?? 'your admin'}.`,
  ].join('\n');
  try {
    const raw = await composeMessage({
      from: transport.from, to: notice.to, replyTo: null, subject: `Set a new password for ${notice.workspaceName}`, body, signature: null,
      messageId: newMessageId(transport.from.address), date: deps.clock.now(),
    });
    await sendRaw(transport.smtp, { from: transport.from.address, to: [notice.to] }, raw, {
      allowPrivateHosts: deps.config.allowPrivateHosts, extraCa: deps.extraCa ?? null, signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
    });
    return { emailed: true };
  } catch (error) {
    return { emailed: false, error: isAttemptFailure(error) ? error.message : `The e-mail could not be sent: ${(error as Error).message}` };
  }
}

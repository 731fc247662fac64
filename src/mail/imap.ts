// Placeholder: the IMAP client is written elsewhere; this file is replaced when the branches meet.
import type { ImapSettings } from './settings.ts';

export async function appendDraft(
  _imap: ImapSettings, _raw: Buffer, _messageId: string, _options: { allowPrivateHosts: boolean; signal?: AbortSignal },
): Promise<{ response: string }> {
  throw new Error('IMAP is not available yet');
}

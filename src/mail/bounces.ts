// Bounces found by the reply check (DESIGN §15): a delivery status notification (RFC 3464) in the inbox that names a
// delivered e-mail's Message-ID with a permanent failure (`Action: failed`, a 5.x.x status) makes that delivery
// BOUNCED and suppresses its address (src/domain/suppressions/bounces.ts). Each candidate is read in a CPU pool thread
// (src/mail/dsn.ts); only a message whose headers say it is a report is read at all.
import { sql, type Kysely } from 'kysely';
import type { CpuPool } from '../cpu/pool.ts';
import type { DB } from '../db/schema.ts';
import { recordBounce } from '../domain/suppressions/bounces.ts';
import { isPermanentFailure, type Dsn } from './dsn.ts';
import type { ReplyMessage } from './reply-reading.ts';

/** How far into a message its Content-Type is looked for. */
const HEADER_WINDOW = 16 * 1024;

/** Whether a message's headers declare a delivery status report: a cheap look before it is parsed. */
export function looksLikeReport(source: Uint8Array): boolean {
  const head = Buffer.from(source.buffer, source.byteOffset, Math.min(source.byteLength, HEADER_WINDOW)).toString('latin1').toLowerCase();
  const end = head.search(/\r?\n\r?\n/);
  const headers = end < 0 ? head : head.slice(0, end);
  return headers.includes('multipart/report') && headers.includes('delivery-status');
}

/** The permanent failures among the messages, read in the pool; a message that cannot be read there is passed over. */
export async function readBounces(cpu: CpuPool, messages: ReplyMessage[], signal?: AbortSignal): Promise<Dsn[]> {
  const reports = messages.filter((message) => looksLikeReport(message.source));
  const read = await Promise.all(reports.map(async (message) => {
    try {
      return await cpu.run('readDsn', message.source, { signal });
    } catch {
      signal?.throwIfAborted();
      return null;
    }
  }));
  return read.filter((dsn): dsn is Dsn => dsn !== null && dsn.messageIds.length > 0 && dsn.recipients.some(isPermanentFailure));
}

/** Records each bounce against the workspace's delivered e-mail it names; answers how many deliveries bounced. */
export async function recordBounces(trx: Kysely<DB>, workspaceId: string, dsns: Dsn[], now: Date): Promise<number> {
  let bounced = 0;
  for (const dsn of dsns) {
    const ids = [...dsn.messageIds, ...dsn.messageIds.map((id) => `<${id}>`)];
    const deliveries = (await sql<{ id: string; run_id: string; to_address: string | null }>`
      SELECT e.id, e.run_id, d.to_address FROM email_deliveries e JOIN email_drafts d ON d.id = e.draft_id
      WHERE e.workspace_id = ${workspaceId} AND e.status = 'DELIVERED' AND e.method = 'send' AND e.message_id = ANY(${ids}::text[])`.execute(trx)).rows;
    const failure = dsn.recipients.find(isPermanentFailure)!;
    for (const delivery of deliveries) {
      const error = `Bounced: ${failure.status}${failure.diagnostic ? ` (${failure.diagnostic})` : ''}`;
      const email = delivery.to_address ?? failure.address;
      if (await recordBounce(trx, { workspaceId, runId: delivery.run_id, deliveryId: delivery.id, email, error, source: 'dsn', at: now })) bounced += 1;
    }
  }
  return bounced;
}

// Replies found in the senders' inboxes (src/mail/replies.ts), and what each says (DESIGN §16): listed newest first.
import { sql, type Kysely } from 'kysely';
import type { ReplyClass, ReplyClassification } from '../agent/replies/types.ts';
import type { DB, ReplyClass as StoredReplyClass, TouchStatus } from '../db/schema.ts';
import { invalid } from './errors.ts';
import { readPage, type Cursor } from './pagination.ts';
import { isStorableInstant, isUuid } from './validation.ts';

// The classes the database stores are the classes the API names: neither list gains one without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_CLASSES: Same<ReplyClass, StoredReplyClass> = true;
void SAME_CLASSES;

export type Reply = ReplyClassification & {
  id: string;
  runId: string;
  leadId: string;
  receivedAt: Date;
  from: string | null;
  subject: string | null;
  snippet: string;
  classifiedBy: 'engine' | 'person';
  /** The response drafted to it (replies/response.ts), unless skipped. */
  response: { number: number; status: TouchStatus } | null;
};

export interface ReplyFilter {
  classification?: ReplyClass | undefined;
  /** RFC 3339: an instant, or a day (from its start in UTC). */
  since?: string | undefined;
  /** Only replies a person should answer (TO_ANSWER classes), with no e-mail queued to the lead since. */
  toAnswer?: boolean | undefined;
  limit: number;
  cursor?: Cursor | null;
}

/** The classes the review queue's "Replies to answer" holds: a person wrote, and something is to be said back. */
export const TO_ANSWER: readonly ReplyClass[] = ['interested', 'referral', 'other', 'not_now'];

/** The instant a `since` names: an RFC 3339 date-time, or a date from its start in UTC. */
function sinceOf(text: string): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const date = new Date(day ? `${text}T00:00:00Z` : text);
  const rfc3339 = day || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(text);
  if (!rfc3339 || !isStorableInstant(date) || (day && date.toISOString().slice(0, 10) !== text)) {
    throw invalid('since', 'must be a date (2026-03-01) or an RFC 3339 date-time');
  }
  return date;
}

/** The replies of the workspace with the columns a Reply is made of. */
function repliesOf(db: Kysely<DB>, workspaceId: string) {
  return db.selectFrom('email_replies as r').innerJoin('runs as run', (join) => join.onRef('run.id', '=', 'r.run_id').on('run.workspace_id', '=', workspaceId))
    // At most one touch answers a reply unless skipped (the partial unique index touches_one_response).
    .leftJoin('touches as t', (join) => join.onRef('t.reply_id', '=', 'r.id').on('t.status', '<>', 'SKIPPED'))
    .select([
      't.number as response_number', 't.status as response_status',
      'r.id', 'r.run_id', 'run.lead_id', 'r.received_at', 'r.from_address', 'r.subject', 'r.snippet', 'r.classification',
      'r.referral_name', 'r.referral_email', 'r.classified_by',
      // Days as text on both backends: PGlite would make a DATE an instant at midnight where the process runs.
      sql<string | null>`r.returns_on::text`.as('returns_on'), sql<string | null>`r.follow_up_after::text`.as('follow_up_after'),
    ])
    .where('r.workspace_id', '=', workspaceId);
}

type ReplyRow = Awaited<ReturnType<ReturnType<typeof repliesOf>['executeTakeFirstOrThrow']>>;

function toReply(row: ReplyRow): Reply {
  return {
    id: row.id,
    runId: row.run_id,
    leadId: row.lead_id,
    receivedAt: row.received_at,
    from: row.from_address,
    subject: row.subject,
    snippet: row.snippet,
    classification: row.classification,
    returnsOn: row.returns_on,
    followUpAfter: row.follow_up_after,
    person: row.referral_name || row.referral_email ? { name: row.referral_name, email: row.referral_email } : null,
    classifiedBy: row.classified_by,
    response: row.response_number && row.response_status ? { number: row.response_number, status: row.response_status } : null,
  };
}

/** One reply of the workspace, or null. */
export async function getReply(db: Kysely<DB>, workspaceId: string, replyId: string): Promise<Reply | null> {
  if (!isUuid(replyId)) return null;
  const row = await repliesOf(db, workspaceId).where('r.id', '=', replyId).executeTakeFirst();
  return row ? toReply(row) : null;
}

/** The workspace's replies, newest first, of one class or all, received since an instant. */
export async function listReplies(db: Kysely<DB>, workspaceId: string, filter: ReplyFilter): Promise<{ items: Reply[]; next: Cursor | null }> {
  let query = repliesOf(db, workspaceId);
  if (filter.classification) query = query.where('r.classification', '=', filter.classification);
  if (filter.since) query = query.where('r.received_at', '>=', sinceOf(filter.since));
  if (filter.toAnswer) {
    // Answered: its response was approved, or an e-mail to the lead was queued after the reply came (the next touch,
    // or an answer from another run).
    query = query.where('r.classification', 'in', [...TO_ANSWER])
      .where((eb) => eb.or([eb('t.status', 'is', null), eb('t.status', 'not in', ['APPROVED', 'SENT'])]))
      .where(({ not, exists, selectFrom }) => not(exists(
        selectFrom('email_deliveries as e').innerJoin('runs as later', 'later.id', 'e.run_id').select('e.id')
          .whereRef('later.lead_id', '=', 'run.lead_id').where('later.workspace_id', '=', workspaceId)
          .where('e.workspace_id', '=', workspaceId).whereRef('e.queued_at', '>', 'r.received_at'))));
  }
  return readPage(query, { at: 'r.received_at', id: 'r.id' }, filter, toReply, (reply) => ({ at: reply.receivedAt, id: reply.id }));
}

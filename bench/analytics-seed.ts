// Outreach to count (DESIGN §16), seeded in bulk SQL for the analytics test and benchmark: `emails` runs of one
// workspace, each with its STRATEGY angle, a draft and an e-mail sent over SMTP (a few saved to the mailbox instead,
// which are not counted; some BOUNCED; some the second or third touch of a sequence) by one of three senders over
// `weeks` weeks, and replies of every class to about a third of them (some answered twice). Deterministic: the same
// arguments seed the same rows.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../src/db/schema.ts';

export const SEEDED_ANGLES = ['Month-end close in a day', 'Audit-ready numbers', 'Fewer spreadsheets', 'Finance team time back'];
const CLASSES = ['interested', 'not_now', 'not_interested', 'out_of_office', 'unsubscribe', 'bounce', 'auto_reply', 'referral', 'other'];

export interface OutreachSeed {
  workspaceId: string;
  emails: number;
  /** The first e-mail is sent at this instant; the others over the following weeks. */
  start: Date;
  weeks: number;
}

/** Seeds the workspace (which must exist) with its senders, leads, calls, runs, steps, drafts, deliveries and replies. */
export async function seedOutreach(db: Kysely<DB>, seed: OutreachSeed): Promise<void> {
  const ws = seed.workspaceId;
  const n = seed.emails;
  const leads = Math.max(1, Math.floor(n / 2));
  const spanMs = seed.weeks * 7 * 86_400_000;
  const start = seed.start.toISOString();
  // A uuid made from a name and a number: rows refer to each other without being read back.
  const id = (kind: string, i: RawBuilder<unknown>) => sql`md5(${kind} || ${ws}::text || ${i}::text)::uuid`;
  const i = sql.raw('i');
  await db.transaction().execute(async (trx) => {
    await sql`INSERT INTO users (id, workspace_id, email, name, role, password_hash, created_at)
      SELECT ${id('user', i)}, ${ws}, 'sender' || i || '-' || left(${ws}::text, 8) || '@bench.example', 'Sender ' || i, 'MEMBER', NULL, ${start}::timestamptz
      FROM generate_series(1, 3) i`.execute(trx);
    await sql`INSERT INTO leads (id, workspace_id, name, email, company_name, company_website, status, assigned_to_user_id, created_at, updated_at)
      SELECT ${id('lead', i)}, ${ws}, 'Lead ' || i, 'lead' || i || '@bench.example', 'Company ' || i, NULL,
        CASE WHEN i % 11 = 0 THEN 'WON' WHEN i % 7 = 0 THEN 'QUALIFIED' ELSE 'CONTACTED' END, NULL, ${start}::timestamptz, ${start}::timestamptz
      FROM generate_series(1, ${leads}) i`.execute(trx);
    await sql`INSERT INTO calls (id, workspace_id, lead_id, title, occurred_at, duration_seconds, transcript, created_at)
      SELECT ${id('call', i)}, ${ws}, ${id('lead', i)}, NULL, NULL, NULL, 'Rep: Hello.', ${start}::timestamptz
      FROM generate_series(1, ${leads}) i`.execute(trx);
    const lead = sql`(1 + (i - 1) % ${leads})`;
    await sql`INSERT INTO runs (id, workspace_id, lead_id, call_id, status, created_by_user_id, key_id, trace_id, lease_owner, lease_expires_at,
                                available_at, error, started_at, completed_at, updated_at, feedback, batch_id)
      SELECT ${id('run', i)}, ${ws}, ${id('lead', lead)}, ${id('call', lead)}, 'COMPLETED', NULL, NULL, md5('trace' || i), NULL, NULL,
        ${start}::timestamptz, NULL, ${start}::timestamptz, ${start}::timestamptz, ${start}::timestamptz, NULL, NULL
      FROM generate_series(1, ${n}) i`.execute(trx);
    await sql`INSERT INTO run_steps (run_id, position, node, status, output, attempts)
      SELECT ${id('run', i)}, 2, 'STRATEGY', 'COMPLETED',
        jsonb_build_object('engine', 'offline', 'angle', (${SEEDED_ANGLES}::text[])[1 + (i * 7) % ${SEEDED_ANGLES.length}],
          'valuePropositions', jsonb_build_array('One', 'Two'), 'callToAction', 'A call next week?', 'tone', 'plain'), 1
      FROM generate_series(1, ${n}) i`.execute(trx);
    await sql`INSERT INTO email_drafts (id, workspace_id, run_id, version, status, to_address, subject, body, created_at)
      SELECT ${id('draft', i)}, ${ws}, ${id('run', i)}, 1, 'SENT', 'lead@bench.example', 'A pilot', 'Hello.', ${start}::timestamptz
      FROM generate_series(1, ${n}) i`.execute(trx);
    // Sent over the weeks, a little later each time; one in 40 saved to the mailbox, one in 19 bounced; a few senders
    // unknown; one in 4 a sequence's second touch, one in 10 its third.
    const sentAt = sql`${start}::timestamptz + ((i::bigint * ${spanMs}::bigint / ${n}::bigint) || ' milliseconds')::interval`;
    await sql`INSERT INTO email_deliveries (id, workspace_id, run_id, draft_id, touch, sender_user_id, method, status, message_id, attempts, queued_at, delivered_at, error, response)
      SELECT ${id('delivery', i)}, ${ws}, ${id('run', i)}, ${id('draft', i)}, CASE WHEN i % 4 = 1 THEN 2 WHEN i % 10 = 3 THEN 3 ELSE 1 END,
        CASE WHEN i % 23 = 0 THEN NULL ELSE ${id('user', sql`(1 + i % 3)`)} END,
        CASE WHEN i % 40 = 0 THEN 'mailbox' ELSE 'send' END, CASE WHEN i % 19 = 0 THEN 'BOUNCED' ELSE 'DELIVERED' END,
        '<' || i || '.' || ${ws}::text || '@bench.example>', 1, ${sentAt}, ${sentAt}, NULL, '250 ok'
      FROM generate_series(1, ${n}) i`.execute(trx);
    // A reply to every third e-mail, a second one to every ninth, some hours to days later, of every class.
    await sql`INSERT INTO email_replies (id, workspace_id, delivery_id, run_id, message_id, from_address, subject, snippet, received_at, found_at,
                                         classification, classified_by)
      SELECT ${id('reply', sql`(i * 10 + k)`)}, ${ws}, ${id('delivery', i)}, ${id('run', i)}, '<r' || i || '.' || k || '@lead.example>',
        'lead@bench.example', 'Re: A pilot', 'Thanks.', ${sentAt} + (((i * 37 + k * 11) % 200) || ' hours')::interval,
        ${sentAt} + (((i * 37 + k * 11) % 200) || ' hours')::interval,
        (${CLASSES}::text[])[1 + ((i / 3) * 5 + k * 3) % ${CLASSES.length}], 'engine'
      FROM generate_series(1, ${n}) i CROSS JOIN generate_series(1, 2) k
      WHERE i % 3 = 0 AND (k = 1 OR i % 9 = 0)`.execute(trx);
  });
}

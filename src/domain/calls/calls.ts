// Calls: conversations held with a lead, whose transcripts the agent analyses.
import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { detectFormat } from '../../agent/transcript/detect.ts';
import type { TranscriptFormat } from '../../agent/transcript/types.ts';
import type { Clock } from '../../clock.ts';
import type { CallsTable, DB } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { getLead } from '../leads/leads.ts';
import { readPage, type Cursor } from '../pagination.ts';
import { isStorableInstant, isUuid } from '../validation.ts';

export interface Call {
  id: string;
  leadId: string;
  title: string | null;
  occurredAt: Date | null;
  durationSeconds: number | null;
  transcript: string;
  /** How the transcript is laid out (src/agent/transcript/detect.ts). */
  format: TranscriptFormat;
  createdAt: Date;
}

export interface CallInput {
  transcript: string;
  title?: string | null;
  occurredAt?: string | null;
  durationSeconds?: number | null;
}

export function toCall(row: Selectable<CallsTable>): Call {
  return {
    id: row.id,
    leadId: row.lead_id,
    title: row.title,
    occurredAt: row.occurred_at,
    durationSeconds: row.duration_seconds,
    transcript: row.transcript,
    // A call made before formats were stored is detected now: detection reads a bounded prefix, so this is cheap.
    format: (row.format as TranscriptFormat | null) ?? detectFormat(row.transcript),
    createdAt: row.created_at,
  };
}

/**
 * The instant a call's `occurredAt` names. The schema takes RFC 3339 date-times, which allow a leap second
 * (23:59:60): JavaScript's dates have none, so it is refused, as is an instant outside the years 1000 to 9999 (UTC).
 */
function occurredAtOf(text: string | null | undefined): Date | null {
  if (!text) return null;
  const date = new Date(text);
  if (!isStorableInstant(date)) throw invalid('occurredAt', 'must be an instant from the year 1000 to 9999 (UTC), and not a leap second');
  return date;
}

export async function createCall(db: Kysely<DB>, workspaceId: string, leadId: string, input: CallInput, clock: Clock): Promise<Call> {
  const occurredAt = occurredAtOf(input.occurredAt);
  // Locked as the call's foreign key will lock it: while the lead is being erased, this waits and then finds it gone.
  const lead = isUuid(leadId)
    ? await db.selectFrom('leads').select('id').where('workspace_id', '=', workspaceId).where('id', '=', leadId).forKeyShare().executeTakeFirst()
    : undefined;
  if (!lead) throw notFound('Lead');
  const row = await db.insertInto('calls').values({
    id: randomUUID(),
    workspace_id: workspaceId,
    lead_id: leadId,
    title: input.title ?? null,
    occurred_at: occurredAt,
    duration_seconds: input.durationSeconds ?? null,
    transcript: input.transcript,
    // Detection reads at most the transcript's first 8 KB: it is O(1), so it may run here on the request path.
    format: detectFormat(input.transcript),
    created_at: clock.now(),
  }).returningAll().executeTakeFirstOrThrow();
  return toCall(row);
}

/** The calls of a lead, newest first; null when the lead is not one of the workspace's. */
export async function listCalls(
  db: Kysely<DB>,
  workspaceId: string,
  leadId: string,
  options: { limit: number; cursor?: Cursor | null },
): Promise<{ items: Call[]; next: Cursor | null } | null> {
  if (!(await getLead(db, workspaceId, leadId))) return null;
  const query = db.selectFrom('calls').selectAll().where('workspace_id', '=', workspaceId).where('lead_id', '=', leadId);
  return readPage(query, { at: 'created_at', id: 'id' }, options, toCall, (call) => ({ at: call.createdAt, id: call.id }));
}

export async function getCall(db: Kysely<DB>, workspaceId: string, callId: string): Promise<Call | null> {
  if (!isUuid(callId)) return null;
  const row = await db.selectFrom('calls').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', callId).executeTakeFirst();
  return row ? toCall(row) : null;
}

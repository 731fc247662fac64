// "Mark as…" (DESIGN §16): a person gives a reply another class. The reply is stored as the person's reading, its
// effects are applied again (what the old class did undone where that makes sense, src/domain/replies/effects.ts),
// and the run's log, the audit log and integrators hear of it: `reply.classified`, and a `draft.replied` webhook
// carrying the run with the reply's new class.
import type { Kysely } from 'kysely';
import type { ReplyClass, ReplyClassification } from '../../agent/replies/types.ts';
import type { AuditSource, DB } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { emitRunWebhook, recordEvent } from '../runs/lifecycle.ts';
import { isUuid } from '../validation.ts';
import { getReply, type Reply } from '../replies.ts';
import { applyReplyEffects, type EffectsApplied } from './effects.ts';

export interface MarkInput {
  classification: ReplyClass;
  /** out_of_office only: the day the person is back. */
  returnsOn?: string | null;
  /** not_now only: the first day to contact them again. */
  followUpAfter?: string | null;
}

export interface Marker {
  at: Date;
  source: AuditSource;
  keyId: string | null;
  userId: string | null;
}

/** A real calendar day, `YYYY-MM-DD`, or null. */
function dayOf(field: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw invalid(field, 'must be a calendar day (2026-03-14)');
  }
  return value;
}

/** The classification a person's input stands for: a day only where its class can name one. */
export function classificationOf(input: MarkInput, person: Reply['person']): ReplyClassification {
  const returnsOn = dayOf('returnsOn', input.returnsOn);
  const followUpAfter = dayOf('followUpAfter', input.followUpAfter);
  if (returnsOn && input.classification !== 'out_of_office') throw invalid('returnsOn', 'is only for out_of_office');
  if (followUpAfter && input.classification !== 'not_now') throw invalid('followUpAfter', 'is only for not_now');
  return {
    classification: input.classification, returnsOn, followUpAfter,
    // The person a referral names stays with the reply while it is a referral.
    person: input.classification === 'referral' ? person : null,
  };
}

/**
 * Gives reply `replyId` the class `input` names, as a person's reading, and applies its effects. Marking a reply as
 * what it already is changes nothing (a request sent twice does nothing twice). 404 for a reply of another workspace.
 */
export async function markReply(
  trx: Kysely<DB>, workspaceId: string, replyId: string, input: MarkInput, marker: Marker,
): Promise<{ reply: Reply; effects: EffectsApplied | null }> {
  // Locked: two corrections of one reply at once apply their effects one after the other.
  const locked = isUuid(replyId)
    ? await trx.selectFrom('email_replies').select('id').where('id', '=', replyId).where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst()
    : undefined;
  const before = locked ? await getReply(trx, workspaceId, replyId) : null;
  if (!before) throw notFound('Reply');
  const said = classificationOf(input, before.person);
  const same = before.classification === said.classification && before.returnsOn === said.returnsOn && before.followUpAfter === said.followUpAfter;
  if (same && before.classifiedBy === 'person') return { reply: before, effects: null };

  await trx.updateTable('email_replies').set({
    classification: said.classification, returns_on: said.returnsOn, follow_up_after: said.followUpAfter,
    referral_name: said.person?.name ?? null, referral_email: said.person?.email ?? null, classified_by: 'person',
  }).where('id', '=', replyId).where('workspace_id', '=', workspaceId).execute();
  const ref = { id: replyId, workspaceId, runId: before.runId, from: before.from, receivedAt: before.receivedAt };
  await recordEvent(trx, { runId: before.runId, workspaceId, type: 'reply.classified', at: marker.at });
  // A person confirming the engine's reading changes nothing the reply does.
  const effects = same ? null : await applyReplyEffects(trx, ref, said, {
    by: 'person', at: marker.at, previous: before, actor: { source: marker.source, keyId: marker.keyId, userId: marker.userId },
  });
  await emitRunWebhook(trx, workspaceId, before.runId, 'draft.replied', marker.at);
  return { reply: (await getReply(trx, workspaceId, replyId))!, effects };
}

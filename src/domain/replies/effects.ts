// What a reply does (DESIGN §16), applied in the transaction that records the reply or a person's correction of its
// class. Each effect that changes something is a run event and an audit entry; the `draft.replied` webhook that goes
// with them carries the run, whose replies carry their class.
//
// - any class but out_of_office, auto_reply and bounce stops the lead's sequence (`replied`);
// - out_of_office pauses it until one business day after `returnsOn` (7 days after the reply without a date);
// - unsubscribe suppresses the lead's address, and the address that replied when it is another;
// - interested moves a CONTACTED lead to QUALIFIED, unless the workspace turned that off (`qualify_on_interest`);
// - not_now with a date sets the lead's `nextActionAt` to that day;
// - interested has a response drafted (response.ts), for a person to review in Replies to answer.
//
// The effects are applied once per reply: when it is first recorded (a reply read again is not recorded again, see
// src/mail/replies.ts), and again when a person gives it another class. Undone on a correction: a pause (the
// sequence resumes at once) and a `nextActionAt` this reply set. Not undone: a stop (a stopped sequence is not
// restarted by a correction; a person starts a new one), a suppression (lifting one is a person's decision, made on
// the suppression list), and a qualification (the lead's status may have moved on since).
import type { Kysely } from 'kysely';
import type { ReplyClass, ReplyClassification } from '../../agent/replies/types.ts';
import type { AuditSource, DB, RunEventType } from '../../db/schema.ts';
import { writeAudit, type AuditDetails } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { recordEvent } from '../runs/lifecycle.ts';
import { windowZoneOfRun } from '../sending/schedule.ts';
import { loadSendingSettings } from '../sending/settings.ts';
import { pauseEnrolment, resumeEnrolment, stopEnrolments } from '../sequences/stops.ts';
import { suppressAddress } from '../suppressions/suppress.ts';
import { requestResponse } from './response.ts';

/** Classes that say nothing from the person: the sequence goes on (out_of_office: after a pause). */
const NOT_FROM_THE_PERSON: readonly ReplyClass[] = ['out_of_office', 'auto_reply', 'bounce'];
/** How long an out-of-office reply without a date pauses the sequence. */
export const UNDATED_ABSENCE_DAYS = 7;

/** The stored reply the effects are about. */
export interface ReplyRef {
  id: string;
  workspaceId: string;
  runId: string;
  /** The address that replied (bare, or "Name <address>"). */
  from: string | null;
  receivedAt: Date;
}

export interface EffectOptions {
  by: 'engine' | 'person';
  at: Date;
  /** The class the reply had before a person's correction: what it did is undone where that makes sense. */
  previous?: ReplyClassification | null;
  /** Who corrected it, for the audit entries. */
  actor?: { source: AuditSource; keyId: string | null; userId: string | null };
  /** The time zone (IANA) the days a reply names start at midnight in; by default the lead's, else the workspace's. */
  timeZone?: string;
}

/** What the effects did, for the caller and the tests. */
export interface EffectsApplied {
  stopped: number;
  pausedUntil: Date | null;
  resumed: boolean;
  suppressed: number;
  qualified: boolean;
  nextActionAt: Date | null;
  nextActionCleared: boolean;
  /** The touch of the response asked for (an interested reply), or null. */
  responseTouch: number | null;
}

/** Applies the effects of `said` on reply `reply`; with `previous`, undoes what that class did first. */
export async function applyReplyEffects(
  trx: Kysely<DB>, reply: ReplyRef, said: ReplyClassification, opts: EffectOptions,
): Promise<EffectsApplied> {
  const lead = await trx.selectFrom('runs as r').innerJoin('leads as l', 'l.id', 'r.lead_id')
    .innerJoin('workspaces as w', 'w.id', 'r.workspace_id')
    .select(['l.id', 'l.email', 'l.status', 'l.next_action_at', 'w.qualify_on_interest'])
    .where('r.id', '=', reply.runId).where('r.workspace_id', '=', reply.workspaceId)
    .executeTakeFirst();
  const done: EffectsApplied = { stopped: 0, pausedUntil: null, resumed: false, suppressed: 0, qualified: false, nextActionAt: null, nextActionCleared: false, responseTouch: null };
  if (!lead) return done;
  // The days a reply names are the buyer's: the lead's time zone, else the workspace's (DESIGN §14).
  const zone = opts.timeZone ?? await windowZoneOfRun(trx, reply.workspaceId, reply.runId, await loadSendingSettings(trx, reply.workspaceId));
  const base = { workspaceId: reply.workspaceId, leadId: lead.id, at: opts.at };
  const record = (type: RunEventType, details: AuditDetails) => recordEffect(trx, reply, opts, type, details);
  const previous = opts.previous?.classification ?? null;

  if (previous === 'out_of_office' && said.classification !== 'out_of_office') {
    // The absence this reply announced is no more: the lead's sequence it paused goes on now.
    const paused = await trx.selectFrom('enrolments').select('id').where('workspace_id', '=', reply.workspaceId).where('lead_id', '=', lead.id)
      .where('status', '=', 'PAUSED').where('pause_reason', '=', 'out_of_office').executeTakeFirst();
    done.resumed = paused ? await resumeEnrolment(trx, paused.id, opts.at) : false;
    if (done.resumed) await record('reply.sequence_resumed', {});
  }
  if (previous === 'not_now' && opts.previous?.followUpAfter && said.classification !== 'not_now') {
    const set = startOfDay(opts.previous.followUpAfter, zone);
    if (lead.next_action_at && lead.next_action_at.getTime() === set.getTime()) {
      await trx.updateTable('leads').set({ next_action_at: null, updated_at: opts.at })
        .where('id', '=', lead.id).where('workspace_id', '=', reply.workspaceId).execute();
      done.nextActionCleared = true;
      await record('reply.next_action_set', { nextActionAt: null });
    }
  }

  if (!NOT_FROM_THE_PERSON.includes(said.classification)) {
    const reason = said.classification === 'unsubscribe' ? 'unsubscribed' : 'replied';
    done.stopped = await stopEnrolments(trx, { ...base, reason });
    if (done.stopped > 0) await record('reply.sequence_stopped', { reason, stopped: done.stopped });
  }
  if (said.classification === 'out_of_office') {
    const until = said.returnsOn
      ? startOfDay(businessDayAfter(said.returnsOn), zone)
      : new Date(reply.receivedAt.getTime() + UNDATED_ABSENCE_DAYS * 86_400_000);
    if (await pauseEnrolment(trx, { ...base, until, reason: 'out_of_office' })) {
      done.pausedUntil = until;
      await record('reply.sequence_paused', { until: until.toISOString() });
    }
  }
  if (said.classification === 'unsubscribe') {
    for (const email of addressesToSuppress(lead.email, reply.from)) {
      if (await suppressAddress(trx, { workspaceId: reply.workspaceId, email, reason: 'unsubscribed', source: 'reply', at: opts.at })) {
        done.suppressed += 1;
      }
    }
    if (done.suppressed > 0) await record('reply.address_suppressed', { addresses: done.suppressed });
  }
  if (said.classification === 'interested' && lead.qualify_on_interest && lead.status === 'CONTACTED') {
    const moved = await trx.updateTable('leads').set({ status: 'QUALIFIED', updated_at: opts.at })
      .where('id', '=', lead.id).where('workspace_id', '=', reply.workspaceId).where('status', '=', 'CONTACTED').executeTakeFirst();
    done.qualified = Number(moved.numUpdatedRows) > 0;
    if (done.qualified) await record('reply.lead_qualified', { from: 'CONTACTED', to: 'QUALIFIED' });
  }
  if (said.classification === 'interested') {
    // The buyer is waiting: WRITER drafts the answer now, for a person to review in Replies to answer.
    const response = await requestResponse(trx, reply.workspaceId, reply.id, opts.at).catch((error: unknown) => {
      if (error instanceof AppError) return null; // a thread already full: the person answers from their mailbox
      throw error;
    });
    done.responseTouch = response?.created ? response.number : null;
    if (done.responseTouch) await record('reply.response_requested', { touch: done.responseTouch });
  }
  if (said.classification === 'not_now' && said.followUpAfter) {
    const next = startOfDay(said.followUpAfter, zone);
    await trx.updateTable('leads').set({ next_action_at: next, updated_at: opts.at })
      .where('id', '=', lead.id).where('workspace_id', '=', reply.workspaceId).execute();
    done.nextActionAt = next;
    await record('reply.next_action_set', { nextActionAt: next.toISOString() });
  }
  return done;
}

/** One effect: its run event (no webhook of its own: the draft.replied that goes with it carries the run) and audit entry. */
async function recordEffect(trx: Kysely<DB>, reply: ReplyRef, opts: EffectOptions, type: RunEventType, details: AuditDetails): Promise<void> {
  await recordEvent(trx, { runId: reply.runId, workspaceId: reply.workspaceId, type, at: opts.at });
  await writeAudit(trx, {
    workspaceId: reply.workspaceId, source: opts.actor?.source ?? 'system',
    keyId: opts.actor?.keyId ?? null, userId: opts.actor?.userId ?? null,
    action: type, target: { type: 'run', id: reply.runId }, outcome: 'success', occurredAt: opts.at,
    details: { replyId: reply.id, by: opts.by, ...details },
  });
}

/** The lead's address, and the address that replied when it is another (a colleague answering for them). */
export function addressesToSuppress(leadEmail: string | null, from: string | null): string[] {
  const replied = from?.match(/<([^<>\s]+@[^<>\s]+)>/)?.[1] ?? (from && /^[^<>\s]+@[^<>\s]+$/.test(from.trim()) ? from.trim() : null);
  const addresses = [leadEmail, replied].filter((a): a is string => Boolean(a)).map((a) => a.toLowerCase());
  return [...new Set(addresses)];
}

/** The first Monday-to-Friday day after `day` (`YYYY-MM-DD`). */
export function businessDayAfter(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  do date.setUTCDate(date.getUTCDate() + 1); while (date.getUTCDay() === 0 || date.getUTCDay() === 6);
  return date.toISOString().slice(0, 10);
}

/** Midnight at the start of `day` in `timeZone`. */
export function startOfDay(day: string, timeZone: string): Date {
  const utc = new Date(`${day}T00:00:00Z`);
  if (timeZone === 'UTC') return utc;
  // The zone's offset at that instant, then once more at the corrected instant (a day that starts a DST change).
  let at = utc.getTime();
  for (let i = 0; i < 2; i += 1) at = utc.getTime() - offsetMs(new Date(at), timeZone);
  return new Date(at);
}

function offsetMs(at: Date, timeZone: string): number {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(at).map((p) => [p.type, p.value]));
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return local - Math.floor(at.getTime() / 1000) * 1000;
}

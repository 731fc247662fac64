// A run's lifecycle (DESIGN §3, §7, §9): every change of state of a run, of its steps, of its draft's versions and of
// its delivery is a transition of the tables below, which name the states it leaves from and goes to, the run event
// it records and the webhook event integrators hear of it. applyTransition is the one function that applies one in a
// transaction: the row, the event, its notice and the webhook outbox row together (the request's audit entry joins
// them in the caller's transaction, src/http/mutation.ts; a change no request made writes its own). The worker's
// single statements (src/jobs/sql/run/) and a run's start (start.ts, batches.ts) write the same transitions as
// CTEs, built from the same tables (eventsInsert).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { StepNode } from '../../schemas/outputs.ts';
import type { DB, DeliveryStatus, DraftStatus, RunEventType, RunStatus, StepStatus } from '../../db/schema.ts';
import { writeAudit } from '../audit/audit.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../validation.ts';
import { emitWebhookEvent, type WebhookEventType } from '../webhooks/events.ts';
import { getRun } from './runs.ts';

/** Wakes idle workers when runs become claimable: the notice holds a run's id, or how many runs a batch queued. */
export const RUNS_CHANNEL = 'leadrun_runs';
/** Carries the id of a run whose log grew, so that streams of that run can read on. */
export const RUN_EVENTS_CHANNEL = 'leadrun_run_events';

/** How many runs a RUNS_CHANNEL notice says became claimable. */
export function claimableRuns(payload: string): number {
  return /^\d{1,3}$/.test(payload) ? Math.max(1, Number(payload)) : 1;
}

/** One change of state of a row of `table`. */
export interface Transition<S extends string = string> {
  table: 'runs' | 'run_steps' | 'email_drafts' | 'email_deliveries';
  /** The states it leaves from; none for the row's creation (its INSERT writes the state). */
  from: readonly S[];
  to: S;
  /** What the run's log records of it, or null. */
  event: RunEventType | null;
  /** What integrators hear of it, or null. */
  webhook: WebhookEventType | null;
  /** A change no request makes (a delivery's end, a reply found): it writes its own audit entry, named by its event. */
  audited?: boolean;
}

const run = (from: RunStatus[], to: RunStatus, event: RunEventType | null, webhook: WebhookEventType | null): Transition<RunStatus> =>
  ({ table: 'runs', from, to, event, webhook });
const step = (from: StepStatus[], to: StepStatus, event: RunEventType | null, webhook: WebhookEventType | null = null): Transition<StepStatus> =>
  ({ table: 'run_steps', from, to, event, webhook });
const draft = (from: DraftStatus[], to: DraftStatus, event: RunEventType | null = null): Transition<DraftStatus> =>
  ({ table: 'email_drafts', from, to, event, webhook: null });
const delivery = (
  from: DeliveryStatus[], to: DeliveryStatus, event: RunEventType | null, webhook: WebhookEventType | null = null, audited = false,
): Transition<DeliveryStatus> => ({ table: 'email_deliveries', from, to, event, webhook, audited });

/** A run's states (DESIGN §3). A run's log ends when it is at rest: AWAITING_APPROVAL or later. */
export const RUN = {
  queue: run([], 'QUEUED', 'run.queued', 'run.started'),
  /** A worker takes it, or takes it over from a worker whose lease ran out. */
  claim: run(['QUEUED', 'RUNNING'], 'RUNNING', null, null),
  /** WRITER's completion: the run has its draft. */
  awaitApproval: run(['RUNNING'], 'AWAITING_APPROVAL', 'run.awaiting_approval', 'run.awaiting_approval'),
  fail: run(['RUNNING'], 'FAILED', 'run.failed', 'run.failed'),
  approve: run(['AWAITING_APPROVAL'], 'COMPLETED', 'run.approved', 'run.completed'),
  /** An integrator that heard run.completed hears that the run awaits approval again. */
  undoApproval: run(['COMPLETED'], 'AWAITING_APPROVAL', 'run.approval_undone', 'run.awaiting_approval'),
  reject: run(['AWAITING_APPROVAL'], 'REJECTED', 'run.rejected', 'run.rejected'),
  /** Back to the queue for WRITER alone, with the reviewer's feedback. */
  regenerate: run(['AWAITING_APPROVAL'], 'QUEUED', 'run.regenerating', null),
  cancel: run(['QUEUED', 'RUNNING'], 'CANCELLED', 'run.cancelled', 'run.cancelled'),
} as const;

/** A step's states: each start is an attempt, counted on the row. */
export const STEP = {
  start: step(['PENDING', 'RUNNING'], 'RUNNING', 'step.started'),
  complete: step(['RUNNING'], 'COMPLETED', 'step.completed', 'run.step_completed'),
  /** A failed attempt that will be retried (or a model call put off): the step waits for the run's next claim. */
  retry: step(['RUNNING'], 'PENDING', 'step.retrying'),
  fail: step(['PENDING', 'RUNNING', 'FAILED'], 'FAILED', 'step.failed'),
  /** The steps a failed or cancelled run will not work. */
  skip: step(['PENDING', 'RUNNING'], 'SKIPPED', null),
  /** WRITER again, for a regeneration. */
  reset: step(['COMPLETED'], 'PENDING', null),
} as const;

/** The states of a version of a run's draft (src/domain/runs/drafts.ts). */
export const DRAFT = {
  approve: draft(['DRAFT'], 'APPROVED'),
  undoApproval: draft(['APPROVED'], 'DRAFT'),
  reject: draft(['DRAFT'], 'REJECTED'),
  /** Replaced by the next version: a regeneration's, or a person's edit (which records `draft.edited`). */
  supersede: draft(['DRAFT'], 'SUPERSEDED'),
  edit: draft(['DRAFT'], 'SUPERSEDED', 'draft.edited'),
  send: draft(['APPROVED'], 'SENT'),
} as const;

/** The states of an approved draft's delivery (DESIGN §7, src/jobs/handlers/email-deliver.ts). */
export const DELIVERY = {
  queue: delivery([], 'QUEUED', 'draft.delivery_queued'),
  /** A FAILED delivery queued again (POST /api/v1/runs/{id}/deliver). */
  requeue: delivery(['FAILED'], 'QUEUED', 'draft.delivery_queued'),
  /** The server is about to be contacted: a run page following the run hears of it, without an event of its own. */
  begin: delivery(['QUEUED', 'DELIVERING'], 'DELIVERING', null),
  retry: delivery(['DELIVERING'], 'QUEUED', 'draft.delivery_retrying'),
  send: delivery(['QUEUED', 'DELIVERING'], 'DELIVERED', 'draft.sent', 'draft.sent', true),
  saveToMailbox: delivery(['QUEUED', 'DELIVERING'], 'DELIVERED', 'draft.saved_to_mailbox', null, true),
  fail: delivery(['QUEUED', 'DELIVERING', 'FAILED'], 'FAILED', 'draft.delivery_failed', 'draft.delivery_failed', true),
  /** Made to wait (DESIGN §14): for the approval's `sendAt`, a send window or a per-sender limit (src/domain/sending/). */
  schedule: delivery([], 'SCHEDULED', 'draft.delivery_scheduled'),
  hold: delivery(['QUEUED', 'SCHEDULED'], 'SCHEDULED', 'draft.delivery_scheduled'),
  /** Its time came and the sender had a slot, or a person sent it now: it leaves within the sender's limits. */
  release: delivery(['SCHEDULED'], 'QUEUED', 'draft.delivery_queued'),
  /** Taken off the outbox (DELETE /api/v1/outbox/{id}). */
  cancel: delivery(['SCHEDULED'], 'CANCELLED', 'draft.delivery_cancelled'),
  /** A reply to the delivered e-mail was found (src/mail/replies.ts). */
  reply: delivery(['DELIVERED'], 'DELIVERED', 'draft.replied', 'draft.replied', true),
  /** Its address or domain was suppressed before it left: it ends unsent (src/domain/suppressions/gate.ts). */
  suppress: delivery(['SCHEDULED', 'QUEUED', 'DELIVERING'], 'SUPPRESSED', 'draft.suppressed', null, true),
  /** The recipient's server refused it for good: at once (a 5xx) or by a delivery status notification. */
  bounce: delivery(['DELIVERING', 'DELIVERED'], 'BOUNCED', 'draft.bounced', 'draft.bounced', true),
} as const;

const TRANSITIONS: readonly Transition[] = [RUN, STEP, DRAFT, DELIVERY].flatMap((table) => Object.values(table));

/** The webhook event a run event is, by the tables; null for the events integrators do not hear of. */
export function webhookOf(event: RunEventType): WebhookEventType | null {
  // A creation's webhook event carries the row as its statement wrote it (start.ts), not as recordEvent reads it.
  return TRANSITIONS.find((t) => t.event === event && t.webhook && t.from.length > 0)?.webhook ?? null;
}

/** What a run event records besides its type. */
export interface EventDetails {
  node?: string | null;
  attempt?: number | null;
  durationMs?: number | null;
  engine?: string | null;
  model?: string | null;
  usage?: { inputTokens: number; outputTokens: number } | null;
  error?: string | null;
  /** step.retrying only: the provider asked to wait; no attempt failed. */
  deferred?: boolean;
}

export interface RunEventInput extends EventDetails {
  runId: string;
  workspaceId: string;
  type: RunEventType;
  at: Date;
}

/**
 * Adds an event to the run's log, wakes the run's followers at commit, and writes the webhook event it is. The
 * database numbers the event within the run (migration 0006) under the run's lock. applyTransition's last part.
 */
export async function recordEvent(trx: Kysely<DB>, event: RunEventInput): Promise<void> {
  await trx.insertInto('run_events').values({
    run_id: event.runId,
    workspace_id: event.workspaceId,
    type: event.type,
    node: event.node ?? null,
    attempt: event.attempt ?? null,
    duration_ms: event.durationMs === undefined || event.durationMs === null ? null : Math.round(event.durationMs),
    engine: event.engine ?? null,
    model: event.model ?? null,
    input_tokens: event.usage?.inputTokens ?? null,
    output_tokens: event.usage?.outputTokens ?? null,
    error: event.error ?? null,
    deferred: event.deferred ?? false,
    occurred_at: event.at,
  }).execute();
  await notifyFollowers(trx, event.runId);
  const hook = webhookOf(event.type);
  if (hook) await emitRunWebhook(trx, event.workspaceId, event.runId, hook, event.at);
}

/** Wakes the streams that follow the run (at commit), for a change that adds no event. */
export async function notifyFollowers(db: Kysely<DB>, runId: string): Promise<void> {
  await sql`SELECT pg_notify(${RUN_EVENTS_CHANNEL}, ${runId})`.execute(db);
}

/**
 * A webhook event about a run, its data the Run read in `trx` after the change. It is stored with its traceId, which
 * the delivery turns into the API's traceUrl (the installation's setting, src/jobs/handlers/webhook-deliver.ts).
 */
export async function emitRunWebhook(trx: Kysely<DB>, workspaceId: string, runId: string, type: WebhookEventType, at: Date): Promise<void> {
  await emitWebhookEvent(trx, workspaceId, type, () => getRun(trx, workspaceId, runId), { at, runId });
}

/** The row a transition changes: the run, some of its steps, its draft's current version, or a delivery. */
export interface TransitionTarget {
  workspaceId: string;
  runId: string;
  /** run_steps: the steps it changes; all of the run's steps in `from` when left out. */
  nodes?: readonly StepNode[];
  /** email_drafts: the version it changes; the run's version in `from` when left out. */
  draftId?: string;
  /** email_deliveries: the delivery it changes. */
  deliveryId?: string;
}

export interface TransitionChange extends TransitionTarget {
  at: Date;
  /** Columns the transition writes besides the status (and a run's updated_at). */
  set?: Record<string, unknown>;
  /** What the event records besides its type. */
  event?: EventDetails;
}

/**
 * Applies `transition` in `trx`: the rows of the target that are in one of its `from` states move to its `to` state
 * (with `set`), its event is recorded with the webhook event it is, and a change no request made writes its audit
 * entry. Answers how many rows changed; none changes nothing else. A creation (no `from`) records only: its INSERT
 * wrote the row.
 */
export async function applyTransition(trx: Kysely<DB>, transition: Transition, change: TransitionChange): Promise<number> {
  let changed = 1;
  if (transition.from.length > 0) {
    const set = { ...change.set, status: transition.to, ...(transition.table === 'runs' ? { updated_at: change.at } : {}) };
    const { numUpdatedRows } = await trx.updateTable(transition.table)
      .set(set as never)
      .where(rowsOf(transition.table, change))
      .where('status', 'in', transition.from as never[])
      .executeTakeFirst();
    changed = Number(numUpdatedRows);
  }
  if (changed === 0 || !transition.event) return changed;
  await recordEvent(trx, { runId: change.runId, workspaceId: change.workspaceId, type: transition.event, at: change.at, ...change.event });
  if (transition.audited) {
    await writeAudit(trx, {
      workspaceId: change.workspaceId, source: 'system', action: transition.event, target: { type: 'run', id: change.runId },
      outcome: transition.to === 'FAILED' ? 'failure' : 'success', occurredAt: change.at,
    });
  }
  return changed;
}

function rowsOf(table: Transition['table'], target: TransitionTarget): RawBuilder<boolean> {
  switch (table) {
    case 'runs':
      return sql<boolean>`id = ${target.runId} AND workspace_id = ${target.workspaceId}`;
    case 'run_steps':
      return target.nodes ? sql<boolean>`run_id = ${target.runId} AND node = ANY(${target.nodes}::text[])` : sql<boolean>`run_id = ${target.runId}`;
    case 'email_drafts':
      return target.draftId ? sql<boolean>`id = ${target.draftId} AND run_id = ${target.runId}` : sql<boolean>`run_id = ${target.runId} AND touch = 1`;
    case 'email_deliveries':
      if (!target.deliveryId) throw new Error('a delivery transition names its delivery');
      return sql<boolean>`id = ${target.deliveryId} AND run_id = ${target.runId}`;
  }
}

/** Who made a change: a key through the API, or a user through the UI. */
export interface Decider {
  keyId: string | null;
  userId: string | null;
}

/**
 * Locks the run row for the transaction and checks that `transition` can leave from its state: 404 for no such run
 * in the workspace, 409 invalid_state (naming `verb`) otherwise. `allowed` narrows the check to fewer states.
 */
export async function lockRun(trx: Kysely<DB>, workspaceId: string, runId: string, allowed: readonly RunStatus[], verb: string) {
  const found = isUuid(runId)
    ? await trx.selectFrom('runs').select(['id', 'status']).where('workspace_id', '=', workspaceId).where('id', '=', runId).forUpdate().executeTakeFirst()
    : undefined;
  if (!found) throw notFound('Run');
  if (!allowed.includes(found.status)) {
    throw new AppError('invalid_state', `The run is ${found.status}; it can be ${verb} only while ${allowed.join(' or ')}.`, {
      extra: { runStatus: found.status },
    });
  }
  return found;
}

/**
 * The INSERT of run events for a single-statement change (`from`: a CTE or FROM list whose rows each give the
 * columns `type`, `node`, `attempt`, `duration_ms`, `engine`, `model`, `input_tokens`, `output_tokens`, in order of
 * `ord` when given): the same rows recordEvent writes, without its notice and webhook (the statement sends its own).
 */
export function eventsInsert(runId: RawBuilder<unknown>, workspaceId: RawBuilder<unknown>, at: Date, rows: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO run_events (run_id, workspace_id, type, node, attempt, duration_ms, engine, model, input_tokens, output_tokens, occurred_at)
    SELECT ${runId}, ${workspaceId}, e.type, e.node, e.attempt, e.duration_ms, e.engine, e.model, e.input_tokens, e.output_tokens, ${at}::timestamptz
    FROM ${rows}`;
}

/** One event row of `type` with no details, as `e`, for eventsInsert. */
export function bareEvent(type: RunEventType | null): RawBuilder<unknown> {
  if (!type) throw new Error('the transition records no event');
  return sql`(SELECT ${type}::text AS type, NULL::text AS node, NULL::int AS attempt, NULL::int AS duration_ms, NULL::text AS engine,
                     NULL::text AS model, NULL::int AS input_tokens, NULL::int AS output_tokens) e`;
}

/**
 * The webhook event of a transition that a single statement wrote (its row and run event), with `data` as its
 * payload: the object as the API shows it. Nothing when the transition has none.
 */
export async function emitTransitionWebhook(
  trx: Kysely<DB>, transition: Transition, target: { workspaceId: string; runId: string; at: Date }, data?: unknown,
): Promise<void> {
  if (!transition.webhook) return;
  if (data === undefined) await emitRunWebhook(trx, target.workspaceId, target.runId, transition.webhook, target.at);
  else await emitWebhookEvent(trx, target.workspaceId, transition.webhook, data, { at: target.at, runId: target.runId });
}

/** The steps a failed or cancelled run will not work: the PENDING ones, and with `why`, the RUNNING one (its error). */
export async function skipSteps(trx: Kysely<DB>, target: { workspaceId: string; runId: string; at: Date }, why: string | null): Promise<void> {
  if (why) await applyTransition(trx, { ...STEP.skip, from: ['RUNNING'] }, { ...target, set: { error: why } });
  await applyTransition(trx, { ...STEP.skip, from: ['PENDING'] }, target);
}

/**
 * States as SQL literals for the single statements: `('QUEUED', 'RUNNING')` after IN, `'RUNNING'` after `=`. Literals,
 * not parameters, so that the planner matches the partial indexes whose predicates name them.
 */
export function states(...names: readonly string[]): RawBuilder<unknown> {
  return sql.raw(`(${names.map((n) => `'${n}'`).join(', ')})`);
}

export function state(name: string): RawBuilder<unknown> {
  return sql.raw(`'${name}'`);
}

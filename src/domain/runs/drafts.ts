// The versions of a run's draft (DESIGN §7, §12). WRITER writes version 1 (`generated`) and, when a person asks for
// another (reject with `regenerate`), the next (`regenerated`), from the latest version as the person last saw it; a
// person's edit inserts the next version (`edited`). Either way the version replaced becomes SUPERSEDED, never
// REJECTED, which only a person's rejection makes. One numbering: these version numbers are the ones the run's
// events, its trace and WRITER's `previousDraft` name. Every version stays readable, with the grounding check's
// verdict on its own text.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { RunContext } from '../../agent/engine.ts';
import type { Draft, GroundingReport } from '../../agent/grounding.ts';
import type { AnalysisOutput, ResearchOutput, StrategyOutput } from '../../schemas/outputs.ts';
import type { Clock } from '../../clock.ts';
import type { DB, DraftOrigin, DraftStatus } from '../../db/schema.ts';
import { invalid, notFound } from '../errors.ts';
import { applyTransition, DRAFT, lockRun, type Decider } from './lifecycle.ts';
import { getRun, type DraftGrounding, type Run } from './runs.ts';
import { isUuid, oneLineProblem } from '../validation.ts';


/** A stored report (GroundingReport, or WRITER's with `rewritten`) as the API shows it; DRAFT_GROUNDING_JSON in runs.ts is its twin. */
export function groundingOf(stored: unknown): DraftGrounding | null {
  if (typeof stored !== 'object' || stored === null) return null;
  const report = stored as { grounded?: unknown; unsupported?: unknown };
  return {
    verdict: report.grounded === true ? 'grounded' : 'unsupported',
    unsupported: Array.isArray(report.unsupported) ? report.unsupported.filter((u): u is string => typeof u === 'string') : [],
  };
}

export interface DraftVersion {
  id: string;
  version: number;
  origin: DraftOrigin;
  status: DraftStatus;
  subject: string;
  body: string;
  to: string | null;
  createdAt: string;
  editedAt: string | null;
  editedBy: { type: 'user' | 'key'; id: string; name: string | null } | null;
  feedback: string | null;
  grounding: DraftGrounding | null;
  /** What replaced this version (the next one): a person's edit, or a regeneration; null for the latest. */
  replacedBy: { version: number; origin: 'edited' | 'regenerated' } | null;
}

/** Every version of the run's draft, oldest first; null when the workspace has no such run. */
export async function listDraftVersions(db: Kysely<DB>, workspaceId: string, runId: string): Promise<DraftVersion[] | null> {
  if (!isUuid(runId)) return null;
  const run = await db.selectFrom('runs').select('id').where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst();
  if (!run) return null;
  const rows = await db.selectFrom('email_drafts as d')
    .leftJoin('users as u', 'u.id', 'd.edited_by_user_id')
    .leftJoin('api_keys as k', 'k.id', 'd.edited_by_key_id')
    .select([
      'd.id', 'd.version', 'd.origin', 'd.status', 'd.subject', 'd.body', 'd.to_address', 'd.feedback', 'd.grounding',
      'd.edited_by_user_id', 'd.edited_by_key_id', 'u.name as user_name', 'k.name as key_name',
      sql<string>`leadrun_iso(d.created_at)`.as('created_at'),
      sql<string | null>`leadrun_iso(d.edited_at)`.as('edited_at'),
    ])
    .where('d.workspace_id', '=', workspaceId).where('d.run_id', '=', runId).where('d.touch', '=', 1)
    .orderBy('d.version')
    .execute();
  return rows.map((row, i) => ({
    id: row.id,
    version: row.version,
    origin: row.origin,
    status: row.status,
    subject: row.subject,
    body: row.body,
    to: row.to_address,
    createdAt: row.created_at,
    editedAt: row.edited_at,
    editedBy: row.edited_by_user_id ? { type: 'user', id: row.edited_by_user_id, name: row.user_name }
      : row.edited_by_key_id ? { type: 'key', id: row.edited_by_key_id, name: row.key_name }
      : null,
    feedback: row.feedback,
    grounding: groundingOf(row.grounding),
    replacedBy: replacement(rows[i + 1]),
  }));
}

/** The version after one, as what replaced it; WRITER's first version replaces nothing. */
function replacement(next: { version: number; origin: DraftOrigin } | undefined): DraftVersion['replacedBy'] {
  return next && next.origin !== 'generated' ? { version: next.version, origin: next.origin } : null;
}

// ===============================================================================================================
// Editing

export interface DraftEditInput {
  subject?: string;
  body?: string;
  to?: string | null;
}

interface DraftText extends Draft {
  to: string | null;
}

/** Checks a draft's text against the run's context: in the CPU pool, outside the request's event loop. */
export type DraftGroundingCheck = (draft: Draft, ctx: RunContext) => Promise<GroundingReport | null>;

/**
 * A check that remembers its last answer: the route checks an edit before its transaction (so that no database
 * connection waits on the CPU pool), and the edit under the run's lock reuses that answer when the text is the same.
 * Only a concurrent edit that changed the text in between makes it check again.
 */
export function rememberingCheck(check: DraftGroundingCheck): DraftGroundingCheck {
  let last: { subject: string; body: string; report: Promise<GroundingReport | null> } | null = null;
  return (draft, ctx) => {
    if (last?.subject !== draft.subject || last.body !== draft.body) last = { subject: draft.subject, body: draft.body, report: check(draft, ctx) };
    return last.report;
  };
}

/** The edited text: the fields sent, the others as they are, line breaks as `\n`. */
function applyEdit(current: DraftText, input: DraftEditInput): { next: DraftText; changed: Array<keyof DraftText> } {
  const next: DraftText = {
    subject: input.subject === undefined ? current.subject : input.subject.trim(),
    body: input.body === undefined ? current.body : input.body.replace(/\r\n?/g, '\n').trim(),
    to: input.to === undefined ? current.to : input.to,
  };
  if (!next.subject) throw invalid('subject', 'must not be blank');
  const subjectProblem = input.subject === undefined ? null : oneLineProblem(next.subject);
  if (subjectProblem) throw invalid('subject', subjectProblem);
  if (!next.body) throw invalid('body', 'must not be blank');
  const changed = (['subject', 'body', 'to'] as const).filter((field) => next[field] !== current[field]);
  return { next, changed };
}

async function latestVersion(db: Kysely<DB>, runId: string) {
  return db.selectFrom('email_drafts').select(['id', 'version', 'status', 'subject', 'body', 'to_address as to'])
    .where('run_id', '=', runId).where('touch', '=', 1).orderBy('version', 'desc').limit(1).executeTakeFirst();
}

/**
 * What the run knows, as WRITER knew it: the lead, the call, the outputs of RESEARCH, ANALYSIS and STRATEGY, and the
 * reviewers' feedback (theirs to claim). `senderName` holds everything the e-mail may be signed with: the names and
 * signatures of the run's sender and of the person editing (`editorUserId`), and the workspace's sender name.
 */
export async function loadRunContext(db: Kysely<DB>, workspaceId: string, runId: string, editorUserId: string | null): Promise<RunContext | null> {
  if (!isUuid(runId)) return null;
  const { rows: [row] } = await sql<{
    lead_id: string; lead_name: string; email: string | null; company_name: string | null; company_website: string | null;
    call_id: string; title: string | null; transcript: string; occurred_at: Date | string | null;
    sender_name: string | null; editor_name: string | null; from_name: string | null; feedback: string | null;
    steps: Array<{ node: string; output: unknown }> | null;
  }>`
    SELECT l.id AS lead_id, l.name AS lead_name, l.email, l.company_name, l.company_website,
           c.id AS call_id, c.title, c.transcript, c.occurred_at,
           (SELECT concat_ws(E'\n', u.sender_name, u.name, u.signature) FROM users u WHERE u.id = r.created_by_user_id) AS sender_name,
           (SELECT concat_ws(E'\n', u.sender_name, u.name, u.signature) FROM users u WHERE u.id = ${editorUserId}::uuid) AS editor_name,
           (SELECT m.from_name FROM mail_settings m WHERE m.workspace_id = r.workspace_id) AS from_name,
           (SELECT string_agg(d.feedback, E'\n' ORDER BY d.version) FROM email_drafts d WHERE d.run_id = r.id AND d.touch = 1 AND d.feedback IS NOT NULL) AS feedback,
           (SELECT json_agg(json_build_object('node', s.node, 'output', s.output)) FROM run_steps s
            WHERE s.run_id = r.id AND s.status = 'COMPLETED' AND s.output IS NOT NULL) AS steps
    FROM runs r JOIN leads l ON l.id = r.lead_id JOIN calls c ON c.id = r.call_id
    WHERE r.workspace_id = ${workspaceId} AND r.id = ${runId}`.execute(db);
  if (!row) return null;
  const output = (node: string) => row.steps?.find((s) => s.node === node)?.output;
  const occurredAt = row.occurred_at === null ? null : new Date(row.occurred_at);
  return {
    runId,
    lead: { id: row.lead_id, name: row.lead_name, email: row.email, companyName: row.company_name, companyWebsite: row.company_website },
    call: { id: row.call_id, title: row.title, transcript: row.transcript, occurredAt },
    senderName: [row.sender_name, row.editor_name, row.from_name].filter(Boolean).join('\n') || null,
    research: output('RESEARCH') as ResearchOutput | undefined,
    analysis: output('ANALYSIS') as AnalysisOutput | undefined,
    strategy: output('STRATEGY') as StrategyOutput | undefined,
    feedback: row.feedback,
  };
}

/**
 * Checks an edit's text before the edit's transaction, warming a rememberingCheck. Finds nothing to check (an
 * unknown run, one not awaiting approval, an edit that changes no text) without complaint: editDraft says why.
 */
export async function checkEditAhead(
  db: Kysely<DB>, workspaceId: string, runId: string, input: DraftEditInput, editorUserId: string | null, check: DraftGroundingCheck,
): Promise<void> {
  if (!isUuid(runId)) return;
  const run = await db.selectFrom('runs').select('status').where('workspace_id', '=', workspaceId).where('id', '=', runId).executeTakeFirst();
  if (run?.status !== 'AWAITING_APPROVAL') return;
  const current = await latestVersion(db, runId);
  if (!current) return;
  let next: DraftText;
  try {
    next = applyEdit(current, input).next;
  } catch {
    return;
  }
  if (next.subject === current.subject && next.body === current.body) return;
  const ctx = await loadRunContext(db, workspaceId, runId, editorUserId);
  if (ctx) await check(next, ctx);
}

export interface DraftEdited {
  run: Run;
  /** The version the run's draft is at after the edit. */
  version: number;
  /** The fields the edit changed; none for an edit that repeats what is there (no version is made). */
  changed: Array<'subject' | 'body' | 'to'>;
}

/**
 * Edits the draft of a run AWAITING_APPROVAL: the next version, `edited`, with the fields sent and the others copied,
 * its text checked for grounding; the version it replaces becomes SUPERSEDED. Call it inside a transaction: the run
 * row is locked, so concurrent edits land as consecutive versions.
 */
export async function editDraft(
  trx: Kysely<DB>, workspaceId: string, runId: string, input: DraftEditInput, by: Decider, clock: Clock, check: DraftGroundingCheck,
): Promise<DraftEdited> {
  await lockRun(trx, workspaceId, runId, ['AWAITING_APPROVAL'], 'edited');
  const current = await latestVersion(trx, runId);
  if (!current) throw notFound('Draft');
  const { next, changed } = applyEdit(current, input);
  if (changed.length > 0) {
    const textChanged = changed.includes('subject') || changed.includes('body');
    const ctx = textChanged ? await loadRunContext(trx, workspaceId, runId, by.userId) : null;
    // A change of recipient alone keeps the verdict on the text, which has not changed.
    const report = ctx ? await check(next, ctx) : await trx.selectFrom('email_drafts').select('grounding').where('id', '=', current.id)
      .executeTakeFirstOrThrow().then((row) => row.grounding);
    const now = clock.now();
    await applyTransition(trx, DRAFT.edit, { workspaceId, runId, draftId: current.id, at: now });
    await trx.insertInto('email_drafts').values({
      id: randomUUID(), workspace_id: workspaceId, run_id: runId, version: current.version + 1, status: 'DRAFT', origin: 'edited',
      to_address: next.to, subject: next.subject, body: next.body, created_at: now, edited_at: now,
      edited_by_user_id: by.userId, edited_by_key_id: by.keyId,
      grounding: report === null || report === undefined ? null : JSON.stringify(report),
      feedback: null, decided_at: null, decided_by_key_id: null, decided_by_user_id: null,
    }).execute();
  }
  const run = await getRun(trx, workspaceId, runId);
  if (!run) throw new Error(`run ${runId} vanished inside its transaction`);
  return { run, version: changed.length > 0 ? current.version + 1 : current.version, changed };
}

// What a worker reads to work a run: the claim reads it in its own statement (claimRun.ts), loadRun for a run it is given.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { PreviousDraft, RunContext } from '../../../agent/engine.ts';
import type { StepNode } from '../../../schemas/outputs.ts';
import { prepare } from '../../../db/database.ts';
import type { DB, StepStatus } from '../../../db/schema.ts';

export interface StoredStep {
  node: StepNode;
  status: StepStatus;
  output: unknown;
  attempts: number;
  /** When the model endpoint's refusals first put the step off since its last counted attempt (ISO), or null. */
  putOffSince: string | null;
}

/** What a worker needs to work a run: its context and its steps. */
export interface LoadedRun {
  context: RunContext;
  steps: StoredStep[];
  /** Whether the workspace has webhook endpoints: completeStep's first hint. */
  hasWebhooks: boolean;
}

/** The run's keys that loading it needs. */
export interface RunKeys {
  id: string;
  workspaceId: string;
  leadId: string;
  callId: string;
  createdByUserId: string | null;
}

export interface LoadRow {
  id: string; workspace_id: string; lead_id: string; call_id: string; created_by_user_id: string | null;
  found_lead: string | null; lead_name: string; email: string | null; company_name: string | null; company_website: string | null;
  found_call: string | null; title: string | null; transcript: string; occurred_at: Date | null;
  sender: { name: string | null; signature: string | null } | null; from_name: string | null;
  previous_draft: Required<PreviousDraft> | null; steps: StoredStep[] | null; has_webhooks: boolean;
}

/**
 * What a worker reads to work a run, over `r` (the run's id, workspace_id, lead_id, call_id and created_by_user_id):
 * the lead, the call, the sender, the draft a regeneration replaces (the latest version, a person's edit included),
 * the steps, and whether the workspace has webhook endpoints, with `more` columns (the claim's start). The claim
 * reads it for the run it takes, in the same statement; loadRun for a run it is given.
 *
 * The sender is the person who started the run (from the UI), else the workspace's admin (a run started through
 * the API has no person), each with their sender name (or their name) and signature; a person who has been removed
 * signs nothing. With no person, the workspace's configured sender name (Settings / E-mail) signs.
 */
export const readWork = (more?: RawBuilder<unknown>) => sql`
  SELECT r.*, ${more ? sql`${more}, ` : sql``}l.id AS found_lead, l.name AS lead_name, l.email, l.company_name, l.company_website,
         c.id AS found_call, c.title, c.transcript, c.occurred_at,
         (SELECT json_build_object('name', coalesce(nullif(trim(u.sender_name), ''), nullif(trim(u.name), '')), 'signature', nullif(trim(u.signature), ''))
          FROM users u, workspaces w
          WHERE w.id = r.workspace_id AND u.removed_at IS NULL AND (u.id = r.created_by_user_id OR u.id = w.admin_user_id)
          ORDER BY CASE WHEN u.id = r.created_by_user_id THEN 0 ELSE 1 END
          LIMIT 1) AS sender,
         (SELECT nullif(trim(m.from_name), '') FROM mail_settings m WHERE m.workspace_id = r.workspace_id) AS from_name,
         (SELECT json_build_object('version', d.version, 'subject', d.subject, 'body', d.body, 'origin', d.origin)
          FROM email_drafts d WHERE d.run_id = r.id AND d.touch = 1 ORDER BY d.version DESC LIMIT 1) AS previous_draft,
         (SELECT json_agg(json_build_object('node', s.node, 'status', s.status, 'output', s.output, 'attempts', s.attempts, 'putOffSince', s.put_off_since) ORDER BY s.position)
          FROM run_steps s WHERE s.run_id = r.id) AS steps,
         EXISTS (SELECT 1 FROM webhook_endpoints h WHERE h.workspace_id = r.workspace_id AND h.enabled) AS has_webhooks
  FROM r
  LEFT JOIN leads l ON l.id = r.lead_id AND l.workspace_id = r.workspace_id
  LEFT JOIN calls c ON c.id = r.call_id AND c.workspace_id = r.workspace_id`;

/** A readWork row as the worker uses it; null when the run's lead or call has been erased (src/domain/erasure.ts), and with it the run. */
export function loaded(run: RunKeys, row: LoadRow): LoadedRun | null {
  if (!row.found_lead || !row.found_call) return null;
  const sender = { name: row.sender?.name ?? row.from_name, signature: row.sender?.signature ?? null };
  return {
    context: {
      runId: run.id,
      lead: { id: row.found_lead, name: row.lead_name, email: row.email, companyName: row.company_name, companyWebsite: row.company_website },
      call: { id: row.found_call, title: row.title, transcript: row.transcript, occurredAt: row.occurred_at },
      senderName: sender.name,
      sender,
      previousDraft: row.previous_draft,
    },
    steps: row.steps ?? [],
    hasWebhooks: row.has_webhooks,
  };
}

/** What a worker needs to work a run it was given (the claim reads it for the run it takes), in one round trip. */
export async function loadRun(db: Kysely<DB>, run: RunKeys): Promise<LoadedRun | null> {
  const { rows: [row] } = await sql<LoadRow>`
    ${prepare}WITH r AS (
      SELECT ${run.id}::uuid AS id, ${run.workspaceId}::uuid AS workspace_id, ${run.leadId}::uuid AS lead_id, ${run.callId}::uuid AS call_id,
             ${run.createdByUserId}::uuid AS created_by_user_id)
    ${readWork()}`.execute(db);
  return row ? loaded(run, row) : null;
}

export async function loadSteps(db: Kysely<DB>, runId: string): Promise<StoredStep[]> {
  const rows = await db.selectFrom('run_steps').select(['node', 'status', 'output', 'attempts', 'put_off_since']).where('run_id', '=', runId).orderBy('position').execute();
  return rows.map(({ put_off_since, ...step }) => ({ ...step, putOffSince: put_off_since?.toISOString() ?? null }));
}

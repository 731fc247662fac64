// Kysely's view of the tables in migrations/. Column names stay snake_case as in SQL.
import type { Generated, GeneratedAlways } from 'kysely';

export type Plan = 'FREE' | 'PRO';
export type Role = 'ADMIN' | 'MEMBER';
export type LeadStatus = 'DISCOVERY' | 'CONTACTED' | 'QUALIFIED' | 'PROPOSAL' | 'WON' | 'LOST';
export type RunStatus = 'QUEUED' | 'RUNNING' | 'AWAITING_APPROVAL' | 'COMPLETED' | 'REJECTED' | 'FAILED' | 'CANCELLED';
export type StepStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'SKIPPED';
export type DraftStatus = 'DRAFT' | 'APPROVED' | 'REJECTED' | 'SUPERSEDED';
export type AuditSource = 'api' | 'ui' | 'cli' | 'system';
export type AuditOutcome = 'success' | 'failure' | 'denied' | 'replayed';

export interface WorkspacesTable {
  id: string;
  name: string;
  plan: Plan;
  admin_user_id: string | null;
  created_at: Date;
}

export interface UsersTable {
  id: string;
  workspace_id: string;
  email: string | null;
  name: string | null;
  role: Role;
  password_hash: string | null;
  created_at: Date;
  /** Set when an admin removed the person; their row stays for the audit log (0010_members.sql). */
  removed_at: Generated<Date | null>;
  /** The address a removed person had; `email` is then null, free for someone else. */
  removed_email: Generated<string | null>;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  digest: string;
  scopes: string[];
  created_by_user_id: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface LeadsTable {
  id: string;
  workspace_id: string;
  name: string;
  email: string | null;
  company_name: string | null;
  company_website: string | null;
  status: LeadStatus;
  assigned_to_user_id: string | null;
  created_at: Date;
  updated_at: Date;
  /** The lead's JSON in the API's shape, kept by PostgreSQL (0005_lead_json.sql). */
  api_json: GeneratedAlways<string>;
  /** Name, e-mail and company without accents, in lower case, for search; kept by PostgreSQL (0008_lead_search.sql). */
  search_text: GeneratedAlways<string>;
}

export interface CallsTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  title: string | null;
  occurred_at: Date | null;
  duration_seconds: number | null;
  transcript: string;
  created_at: Date;
}

export interface RunsTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  call_id: string;
  status: RunStatus;
  created_by_user_id: string | null;
  key_id: string | null;
  trace_id: string;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  available_at: Date;
  error: string | null;
  started_at: Date;
  completed_at: Date | null;
  updated_at: Date;
  tokens_used: Generated<number>;
  feedback: string | null;
  batch_id: string | null;
}

export interface RunStepsTable {
  run_id: string;
  position: number;
  node: 'RESEARCH' | 'ANALYSIS' | 'STRATEGY' | 'WRITER';
  status: StepStatus;
  output: unknown;
  attempts: number;
  error: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  engine: string | null;
  model: string | null;
  prompt_version: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  duration_ms: number | null;
}

export interface EmailDraftsTable {
  id: string;
  workspace_id: string;
  run_id: string;
  version: number;
  status: DraftStatus;
  to_address: string | null;
  subject: string;
  body: string;
  created_at: Date;
  feedback: string | null;
  decided_at: Date | null;
  decided_by_key_id: string | null;
  decided_by_user_id: string | null;
}

export interface AuditLogTable {
  id: string;
  workspace_id: string;
  source: AuditSource;
  key_id: string | null;
  user_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: AuditOutcome;
  status: number | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  occurred_at: Date;
}

export type RunEventType =
  | 'run.queued'
  | 'step.started'
  | 'step.retrying'
  | 'step.completed'
  | 'step.failed'
  | 'run.awaiting_approval'
  | 'run.failed'
  | 'run.cancelled'
  | 'run.approved'
  | 'run.rejected'
  | 'run.regenerating';

export interface RunEventsTable {
  id: Generated<string>;
  run_id: string;
  /** The event's number within its run (1, 2, 3…), given by a trigger at insert; the id the API shows. */
  seq: Generated<number>;
  workspace_id: string;
  type: RunEventType;
  node: string | null;
  attempt: number | null;
  duration_ms: number | null;
  engine: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  error: string | null;
  occurred_at: Date;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  workspace_id: string;
  csrf_digest: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  ip: string | null;
  user_agent: string | null;
}

export interface SignInAttemptsTable {
  id: Generated<string>;
  email: string;
  ip: string;
  succeeded: boolean;
  attempted_at: Date;
}

export interface PasswordResetLinksTable {
  digest: string;
  workspace_id: string;
  user_id: string;
  created_by_user_id: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

export interface RunUsageTable {
  workspace_id: string;
  month: string;
  runs: number;
}

export interface IdempotencyKeysTable {
  key_id: string;
  idempotency_key: string;
  request_hash: string;
  locked_until: Date | null;
  response_status: number | null;
  response_body: unknown;
  response_location: string | null;
  target_type: string | null;
  target_id: string | null;
  created_at: Date;
}

export interface DB {
  workspaces: WorkspacesTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  leads: LeadsTable;
  calls: CallsTable;
  runs: RunsTable;
  run_steps: RunStepsTable;
  email_drafts: EmailDraftsTable;
  audit_log: AuditLogTable;
  run_usage: RunUsageTable;
  idempotency_keys: IdempotencyKeysTable;
  run_events: RunEventsTable;
  sessions: SessionsTable;
  sign_in_attempts: SignInAttemptsTable;
  password_reset_links: PasswordResetLinksTable;
}

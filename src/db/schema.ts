// Kysely's view of the tables in migrations/. Column names stay snake_case as in SQL.
import type { Generated, GeneratedAlways } from 'kysely';

export type Plan = 'FREE' | 'PRO';
export type Role = 'ADMIN' | 'MEMBER';
export type LeadStatus = 'DISCOVERY' | 'CONTACTED' | 'QUALIFIED' | 'PROPOSAL' | 'WON' | 'LOST';
export type RunStatus = 'QUEUED' | 'RUNNING' | 'AWAITING_APPROVAL' | 'COMPLETED' | 'REJECTED' | 'FAILED' | 'CANCELLED';
export type StepStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'SKIPPED';
export type DraftStatus = 'DRAFT' | 'APPROVED' | 'SENT' | 'REJECTED' | 'SUPERSEDED';
export type DraftOrigin = 'generated' | 'regenerated' | 'edited';
export type DeliveryMethod = 'send' | 'mailbox';
/** What a reply says (src/schemas/replies.ts REPLY_CLASSES; src/domain/replies.ts holds the two equal). */
export type ReplyClass = 'interested' | 'not_now' | 'not_interested' | 'out_of_office' | 'unsubscribe' | 'bounce' | 'auto_reply' | 'referral' | 'other';
export type DeliveryStatus = 'SCHEDULED' | 'QUEUED' | 'DELIVERING' | 'DELIVERED' | 'FAILED' | 'CANCELLED' | 'SUPPRESSED' | 'BOUNCED';
export type JobStatus = 'QUEUED' | 'RUNNING' | 'DONE' | 'DEAD';
export type TlsMode = 'tls' | 'starttls' | 'none';
export type AuditSource = 'api' | 'ui' | 'cli' | 'system';
export type AuditOutcome = 'success' | 'failure' | 'denied' | 'replayed';

export interface WorkspacesTable {
  id: string;
  name: string;
  plan: Plan;
  admin_user_id: string | null;
  created_at: Date;
  /** An interested reply moves a CONTACTED lead to QUALIFIED (DESIGN §16; 0055_reply_effects.sql). */
  qualify_on_interest: Generated<boolean>;
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
  /** The name e-mails sent in this person's name carry; null: their name (0013_delivery.sql). */
  sender_name: Generated<string | null>;
  /** The signature under e-mails sent in this person's name. */
  signature: Generated<string | null>;
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
  /** When an e-mail to the lead was last sent, and when the lead last replied (0013_delivery.sql). */
  last_contacted_at: Generated<Date | null>;
  last_reply_at: Generated<Date | null>;
  /** The lead's IANA time zone, or null for the workspace's (0045_lead_time_zone.sql). */
  time_zone: Generated<string | null>;
  /** When the lead is next to be acted on: the day a "not now" reply named (0055_reply_effects.sql). */
  next_action_at: Generated<Date | null>;
}

export interface CallsTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  title: string | null;
  occurred_at: Date | null;
  duration_seconds: number | null;
  transcript: string;
  /** Null for a call made before the column: its format is detected when it is read. */
  format: Generated<string | null>;
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
  /** Processes following the run's events (0018): the worker notifies of its steps only while above zero. */
  followers: Generated<number>;
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
  /** When the model endpoint's refusals first put the step off, since its last counted attempt (0017). */
  put_off_since: Date | null;
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
  /** What made this version (0013_delivery.sql). */
  origin: Generated<DraftOrigin>;
  edited_at: Generated<Date | null>;
  edited_by_user_id: Generated<string | null>;
  edited_by_key_id: Generated<string | null>;
  /** The grounding check's report on this version's text (GroundingReport), when it was checked. */
  grounding: Generated<unknown>;
  /** The thread's touch the version belongs to: 1 for the run's first e-mail, n+1 for follow-up step n (0041). */
  touch: Generated<number>;
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
  /** What an entry's action did, in counts (a lead import's); never personal data. */
  details: unknown;
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
  // An approval taken back in the web UI before its delivery began: the run awaits approval again.
  | 'run.approval_undone'
  | 'run.rejected'
  | 'run.regenerating'
  // Delivery (DESIGN §7): an edit, a delivery's course, and a reply found.
  | 'draft.edited'
  | 'draft.delivery_queued'
  | 'draft.delivery_retrying'
  | 'draft.sent'
  | 'draft.saved_to_mailbox'
  | 'draft.delivery_failed'
  | 'draft.replied'
  // Sending like a person (DESIGN §14): a delivery held for a window, a limit or `sendAt`, and one taken off the outbox.
  | 'draft.delivery_scheduled'
  | 'draft.delivery_cancelled'
  // Follow-up sequences (DESIGN §13, src/domain/sequences/events.ts).
  | 'sequence.enrolled'
  | 'sequence.stopped'
  | 'sequence.paused'
  | 'sequence.resumed'
  | 'sequence.finished'
  | 'touch.drafted'
  | 'touch.awaiting_approval'
  | 'touch.approved'
  | 'touch.sent'
  | 'touch.skipped'
  // Consent (DESIGN §15): a delivery ended unsent for a suppressed address, or refused by the recipient's server.
  | 'draft.suppressed'
  | 'draft.bounced'
  // What a reply did (DESIGN §16, src/domain/replies/effects.ts), and a person's correction of its class.
  | 'reply.classified'
  | 'reply.sequence_stopped'
  | 'reply.sequence_paused'
  | 'reply.sequence_resumed'
  | 'reply.address_suppressed'
  | 'reply.lead_qualified'
  | 'reply.response_requested'
  | 'reply.next_action_set';

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
  /** A step.retrying put off by the model provider, not a failed attempt (migration 0025). */
  deferred: Generated<boolean>;
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

export interface SetupTokensTable {
  /** SHA-256 of the token, hex. */
  digest: string;
  created_at: Date;
}

export interface JobsTable {
  id: string;
  workspace_id: string | null;
  kind: string;
  /** Unique among the kind's QUEUED and RUNNING jobs when set. */
  key: string | null;
  payload: unknown;
  status: JobStatus;
  attempts: Generated<number>;
  max_attempts: number;
  available_at: Date;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** The lane a kind with a fair claim takes its jobs from in turn: a webhook delivery's endpoint. */
  lane: Generated<string | null>;
}

export interface EmailDeliveriesTable {
  id: string;
  workspace_id: string;
  run_id: string;
  draft_id: string;
  sender_user_id: string | null;
  method: DeliveryMethod;
  status: DeliveryStatus;
  message_id: string;
  attempts: Generated<number>;
  queued_at: Date;
  delivered_at: Date | null;
  error: string | null;
  response: string | null;
  /** When a SCHEDULED delivery leaves, what it waits for, and whether it keeps to the send window (0046_send_windows.sql). */
  scheduled_for: Generated<Date | null>;
  waiting_for: Generated<WaitingFor | null>;
  respect_window: Generated<boolean>;
  slot_taken_at: Generated<Date | null>;
  /** The touch of the thread it delivers (0041): 1 for the run's approved e-mail. */
  touch: Generated<number>;
}

/** What a SCHEDULED delivery waits for (DESIGN §14). */
export type WaitingFor = 'window' | 'daily_limit' | 'gap' | 'sendAt';

/** A workspace's send window and per-sender limits (0046_send_windows.sql); without a row, the defaults. */
export interface SendingSettingsTable {
  workspace_id: string;
  window_days: number[];
  window_start: number;
  window_end: number;
  time_zone: string;
  daily_limit: number;
  min_gap_seconds: number;
  updated_at: Date;
  updated_by_user_id: string | null;
}

/** A sending address's count of its day, locked while a delivery takes a slot (src/domain/sending/limits.ts). */
export interface SenderCountersTable {
  workspace_id: string;
  address: string;
  day: string;
  sent: number;
  last_sent_at: Date | null;
}

export interface EmailRepliesTable {
  id: string;
  workspace_id: string;
  delivery_id: string;
  run_id: string;
  message_id: string;
  from_address: string | null;
  subject: string | null;
  snippet: string;
  received_at: Date;
  found_at: Date;
  classification: Generated<ReplyClass>;
  /** `YYYY-MM-DD`: dates are read as text (src/db/database.ts). */
  returns_on: string | null;
  follow_up_after: string | null;
  referral_name: string | null;
  referral_email: string | null;
  classified_by: Generated<'engine' | 'person'>;
  /** The reply's own words (0042); null for replies found before. */
  text: string | null;
}

/** One e-mail sent over SMTP and what it led to (0057_outreach_outcomes.sql): written by triggers, read by Outcomes. */
export interface OutreachOutcomesTable {
  delivery_id: string;
  workspace_id: string;
  lead_id: string;
  sent_at: Date;
  sender_user_id: string | null;
  angle: string | null;
  step: number;
  first_reply_at: Date | null;
  bounced: boolean;
  interested: boolean;
  unsubscribed: boolean;
}

export interface MailSettingsTable {
  workspace_id: string;
  from_name: string | null;
  from_address: string | null;
  default_deliver: 'send' | 'mailbox' | 'none' | null;
  smtp_host: string | null;
  smtp_port: number | null;
  smtp_security: TlsMode | null;
  smtp_user: string | null;
  /** AES-256-GCM ciphertext (src/domain/secret-box.ts). */
  smtp_password: string | null;
  imap_host: string | null;
  imap_port: number | null;
  imap_security: TlsMode | null;
  imap_user: string | null;
  /** AES-256-GCM ciphertext (src/domain/secret-box.ts). */
  imap_password: string | null;
  imap_drafts_folder: string | null;
  /** The footer's company name; null: the workspace's name (0051_sender_identity.sql). */
  company_name: Generated<string | null>;
  /** The footer's postal address; null: MAIL_POSTAL_ADDRESS. */
  postal_address: Generated<string | null>;
  footer_enabled: Generated<boolean>;
  /** An address taking unsubscribe requests by mail (a `mailto:` in List-Unsubscribe). */
  unsubscribe_address: Generated<string | null>;
  updated_at: Date;
  updated_by_user_id: string | null;
}

export interface MailboxCursorsTable {
  workspace_id: string;
  /** bigint: read as a string or a number depending on the driver; convert with Number(). */
  uid_validity: string | number;
  last_uid: string | number;
  checked_at: Date;
  error: string | null;
}

export type WebhookDeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** The event types it wants; empty for every type. */
  events: string[];
  /**
   * The read scopes (leads:read, runs:read) of whoever last set its url or events: it is sent only the event types
   * these scopes read (EVENT_SCOPES in src/domain/webhooks/events.ts).
   */
  read_scopes: string[];
  /** SecretBox ciphertext of `whsec_…` (src/domain/secret-box.ts). */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
  /** When a delivery to it was last claimed: endpoints are served in turn. */
  served_at: Generated<Date | null>;
  /** Its attempts in a row that got no answer in time. */
  timeouts: Generated<number>;
  /** No delivery to it is claimed before this (it has been timing out). */
  put_off_until: Generated<Date | null>;
}

export interface WebhookEventsTable {
  id: string;
  workspace_id: string;
  type: string;
  /** `{"type","timestamp","data"}`, the body every endpoint is sent. */
  payload: unknown;
  occurred_at: Date;
  run_id: string | null;
  lead_id: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  /** bigint identity: the order deliveries were made in. */
  seq: Generated<string>;
  workspace_id: string;
  event_id: string;
  endpoint_id: string;
  run_id: string | null;
  status: WebhookDeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  last_response_excerpt: string | null;
  last_duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

export interface ModelEndpointsTable {
  endpoint: string;
  limit_now: number;
  paused_until: Date | null;
  halved_at: Date | null;
  updated_at: Date;
}

export interface ModelEndpointWorkersTable {
  endpoint: string;
  worker: string;
  seen_at: Date;
}

export type SuppressionReason = 'unsubscribed' | 'bounced' | 'complained' | 'manual' | 'imported';

/** The suppression list (0050_suppressions.sql): an address or a domain, lower-cased. */
export interface SuppressionsTable {
  id: string;
  workspace_id: string;
  email: string | null;
  domain: string | null;
  reason: SuppressionReason;
  source: string;
  created_at: Date;
}

export interface UnsubscribeTokensTable {
  workspace_id: string;
  email: string;
  /** Hex SHA-256 of the token. */
  digest: string;
  /** SecretBox ciphertext of the token (src/domain/secret-box.ts). */
  sealed_token: string;
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
  setup_tokens: SetupTokensTable;
  jobs: JobsTable;
  email_deliveries: EmailDeliveriesTable;
  email_replies: EmailRepliesTable;
  outreach_outcomes: OutreachOutcomesTable;
  mail_settings: MailSettingsTable;
  mailbox_cursors: MailboxCursorsTable;
  sending_settings: SendingSettingsTable;
  sender_counters: SenderCountersTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  model_endpoints: ModelEndpointsTable;
  model_endpoint_workers: ModelEndpointWorkersTable;
  sequences: SequencesTable;
  enrolments: EnrolmentsTable;
  touches: TouchesTable;
  suppressions: SuppressionsTable;
  unsubscribe_tokens: UnsubscribeTokensTable;
}

// Follow-up sequences (DESIGN §13; 0040_sequences.sql, 0041_enrolments_and_touches.sql).
export type EnrolmentStatus = 'ACTIVE' | 'PAUSED' | 'FINISHED' | 'STOPPED';
export type TouchStatus = 'SCHEDULED' | 'DRAFTED' | 'AWAITING_APPROVAL' | 'APPROVED' | 'SENT' | 'SKIPPED';

export interface SequencesTable {
  id: string;
  workspace_id: string;
  name: string;
  /** SequenceStep[] (src/schemas/sequences.ts). */
  steps: unknown;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface EnrolmentsTable {
  id: string;
  workspace_id: string;
  lead_id: string;
  run_id: string;
  sequence_id: string | null;
  sequence_name: string;
  steps: unknown;
  /** Made for a response in a run that enrolled in no sequence (0042): the thread alone, not shown as a sequence. */
  thread_only: Generated<boolean>;
  method: DeliveryMethod;
  sender_user_id: string | null;
  status: EnrolmentStatus;
  stop_reason: string | null;
  pause_reason: string | null;
  paused_until: Date | null;
  next_touch_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TouchesTable {
  id: string;
  workspace_id: string;
  enrolment_id: string;
  run_id: string;
  number: number;
  status: TouchStatus;
  review: 'required' | 'auto';
  due_at: Date | null;
  ready_at: Date | null;
  draft_id: string | null;
  delivery_id: string | null;
  skip_reason: string | null;
  /** `response`: the answer to reply `reply_id` ("Draft a response", 0042), no step of the sequence. */
  kind: Generated<'sequence' | 'response'>;
  reply_id: string | null;
  created_at: Date;
  updated_at: Date;
}

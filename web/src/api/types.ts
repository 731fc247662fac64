// Named types for the UI, each taken from the generated schema: nothing here describes a shape a second time.
import type { ResponseOf } from './client';
import type { components } from './schema';

type Schemas = components['schemas'];

export type Lead = Schemas['Lead'];
export type LeadStatus = Lead['status'];
export type Call = Schemas['Call'];
export type TranscriptFormat = Call['format'];
export type Run = Schemas['Run'];
export type RunStatus = Run['status'];
export type Step = Run['steps'][number];
export type StepNode = Step['node'];
export type StepStatus = Step['status'];
export type EmailDraft = NonNullable<Run['emailDraft']>;
export type RunEvent = Schemas['RunEvent'];
export type Problem = Schemas['Problem'];

type StepOutput = NonNullable<Step['output']>;
export type ResearchOutput = Extract<StepOutput, { facts: unknown }>;
export type AnalysisOutput = Extract<StepOutput, { painPoints: unknown }>;
export type StrategyOutput = Extract<StepOutput, { angle: unknown }>;
export type WriterOutput = Extract<StepOutput, { subject: unknown }>;

export type Session = ResponseOf<'get', '/ui/api/session'>;
export type Role = Session['user']['role'];
export type ApiKey = ResponseOf<'get', '/ui/api/keys'>['data'][number];
export type CreatedApiKey = ResponseOf<'post', '/ui/api/keys'>;
export type Member = ResponseOf<'get', '/ui/api/members'>['data'][number];
export type RemovedMember = ResponseOf<'post', '/ui/api/members/{id}/remove'>;
export type ResetLink = ResponseOf<'post', '/ui/api/members/{id}/password-reset'>;
export type AuditEntry = ResponseOf<'get', '/ui/api/audit'>['data'][number];
export type Usage = ResponseOf<'get', '/ui/api/usage'>;

export const LEAD_STATUSES: readonly LeadStatus[] = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'];
export const STEP_NODES: readonly StepNode[] = ['RESEARCH', 'ANALYSIS', 'STRATEGY', 'WRITER'];
export const SCOPES = ['leads:read', 'leads:write', 'runs:read', 'runs:write', 'webhooks:read', 'webhooks:write', 'sequences:read', 'sequences:write'] as const;
export type Scope = (typeof SCOPES)[number];
/** Statuses in which a run holds no worker and changes only by a person's decision. */
export const RUN_AT_REST: ReadonlySet<RunStatus> = new Set(['AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED']);

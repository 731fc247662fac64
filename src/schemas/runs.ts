// Runs: the run, its steps and their outputs, its draft's versions and its delivery, and what starts and decides one.
import { Type, type TSchema } from 'typebox';
import { AnalysisOutput, MAX_ANSWER_BYTES, ResearchOutput, STEP_NODES, StrategyOutput, WriterOutput } from './outputs.ts';
import { ONE_LINE_PATTERN } from '../domain/validation.ts';
import { RunSequence } from './sequences.ts';
import { ReplyClassification } from './reply-classification.ts';
import { Nullable, MESSAGE_MAX, INT32_MAX, Int32, Int64, Timestamp, Id, EMAIL_MAX, HEADER_LINE_MAX, FEEDBACK_MAX } from './common.ts';

/** A draft's bounds: a subject fits a header line, a body an e-mail a person reads (src/agent/grounding.ts fits it). */
export const SUBJECT_MAX = 80;
export const BODY_MAX = 5000;

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'AWAITING_APPROVAL', 'COMPLETED', 'REJECTED', 'FAILED', 'CANCELLED'] as const;
export const DRAFT_ORIGINS = ['generated', 'regenerated', 'edited'] as const;
export const DRAFT_STATUSES = ['DRAFT', 'APPROVED', 'SENT', 'REJECTED', 'SUPERSEDED'] as const;

/** The model an endpoint says answered (or the configured one): no longer than the answer that named it. */
export const MODEL_NAME_MAX = MAX_ANSWER_BYTES;

export const StepNode = Type.Enum(STEP_NODES);

/**
 * A step output's schema (src/agent/outputs.ts) as answers describe it: with the bound of every text and list in it that
 * the schema leaves open. No output is larger than the largest model answer read (MAX_ANSWER_BYTES), nor is anything
 * within it; the outputs' own schemas, which models are shown, stay as they are.
 */
function boundedOutput<T extends TSchema>(schema: T): T {
  const bound = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(bound);
    if (!node || typeof node !== 'object') return node;
    const copy: Record<string | symbol, unknown> = { ...node };
    for (const key of Object.keys(copy)) copy[key] = bound(copy[key]);
    if (copy.type === 'string' && copy.maxLength === undefined && copy.enum === undefined && copy.const === undefined) copy.maxLength = MAX_ANSWER_BYTES;
    if (copy.type === 'array' && copy.maxItems === undefined) copy.maxItems = MAX_ANSWER_BYTES;
    if (copy.type === 'integer' && copy.format === undefined) Object.assign(copy, { format: 'int32', minimum: copy.minimum ?? -INT32_MAX - 1, maximum: copy.maximum ?? INT32_MAX });
    return copy;
  };
  return bound(schema) as T;
}

/** A step's output: validated against its node's schema before it is stored (src/agent/output-check.ts). */
export const StepOutput = Type.Union([ResearchOutput, AnalysisOutput, StrategyOutput, WriterOutput].map(boundedOutput), {
  description: 'The step output, validated against its schema (RESEARCH, ANALYSIS, STRATEGY, WRITER); null until COMPLETED.',
});

export const Step = Type.Object({
  node: StepNode,
  status: Type.Enum(['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'SKIPPED']),
  output: Nullable(StepOutput),
  attempts: Int32({ minimum: 0 }),
  startedAt: Nullable(Timestamp()),
  completedAt: Nullable(Timestamp()),
  error: Nullable(Type.String({ maxLength: MESSAGE_MAX, description: 'Why the step failed, when it did.' })),
  engine: Nullable(Type.String({ maxLength: 20, description: 'The engine that produced the output: offline or model.' })),
  model: Nullable(Type.String({ maxLength: MODEL_NAME_MAX, description: 'The model that answered, for the model engine.' })),
  promptVersion: Nullable(Type.String({ maxLength: 100, description: 'The version of the prompt (or rules) that produced the output.' })),
  durationMs: Nullable(Int64({ description: 'How long the completing attempt took.' })),
  usage: Nullable(Type.Object({ inputTokens: Int64(), outputTokens: Int64(), totalTokens: Int64() }, {
    description: 'Tokens the completing attempt spent, for the model engine.',
  })),
});

// The delivery of an approved draft (DESIGN §7).
export const DeliveryMethod = Type.Enum(['send', 'mailbox'], { description: '`send`: over SMTP; `mailbox`: saved to the sender\'s Drafts folder over IMAP.' });
export const Delivery = Type.Object({
  method: DeliveryMethod,
  status: Type.Enum(['SCHEDULED', 'QUEUED', 'DELIVERING', 'DELIVERED', 'FAILED', 'CANCELLED', 'SUPPRESSED', 'BOUNCED'], {
    description: 'QUEUED → DELIVERING → DELIVERED, or FAILED after its retries (then POST /api/v1/runs/{id}/deliver queues it again). '
      + 'SCHEDULED while it waits for a send window, a per-sender limit or the approval\'s `sendAt` (DESIGN §14); CANCELLED when taken off '
      + 'the outbox; SUPPRESSED when its address asked to stop before it left, and BOUNCED when the recipient\'s server refused it (§15).',
  }),
  messageId: Type.String({ maxLength: HEADER_LINE_MAX, description: 'The Message-ID of the e-mail, fixed when the delivery was made: a resend carries the same.' }),
  attempts: Int32({ minimum: 0, description: 'Attempts made so far.' }),
  queuedAt: Timestamp('When the delivery was (last) queued.'),
  deliveredAt: Nullable(Timestamp('When the mail server took the message.')),
  scheduledFor: Nullable(Timestamp('While SCHEDULED: when it leaves, unless a send window or a per-sender limit moves it (DESIGN §14).')),
  error: Nullable(Type.String({ maxLength: MESSAGE_MAX, description: 'Why the last attempt failed, in the mail server\'s words where it gave some.' })),
});

export const DraftOrigin = Type.Enum(DRAFT_ORIGINS, {
  description: '`generated`: WRITER\'s first draft; `regenerated`: WRITER\'s draft after a rejection with feedback; `edited`: a person\'s edit.',
});

/**
 * An unsupported claim as the grounding check writes it (src/agent/grounding.ts): the distinct words of a sentence,
 * each quoted and separated (at most three characters of text for each character of the draft), then the sentence's
 * first 200 characters. There is at most one a sentence, so no more than the draft has characters.
 */
const CLAIM_MAX = 4 * (SUBJECT_MAX + BODY_MAX);

export const DraftGrounding = Type.Object({
  verdict: Type.Enum(['grounded', 'unsupported'], {
    description: '`grounded`: every specific claim (figure, amount, year, name) is found in the call, the research or the lead; '
      + '`unsupported`: some are not.',
  }),
  unsupported: Type.Array(Type.String({ maxLength: CLAIM_MAX }), { maxItems: SUBJECT_MAX + BODY_MAX, description: 'Each unsupported claim with the sentence it is in.' }),
}, { description: "The grounding check of this version's own text (DESIGN §3); null when it was not checked." });

export const EmailDraft = Type.Object({
  id: Id('Identifier of the draft.'),
  status: Type.Enum(['DRAFT', 'APPROVED', 'SENT', 'REJECTED', 'SUPERSEDED'], {
    description: 'DRAFT → APPROVED → SENT (an SMTP server took it), or DRAFT → REJECTED (a person rejected it); '
      + 'SUPERSEDED by a later version: a person\'s edit, or a regeneration a person asked for (never REJECTED for '
      + 'that).',
  }),
  subject: Type.String({ maxLength: SUBJECT_MAX }),
  body: Type.String({ maxLength: BODY_MAX }),
  to: Nullable(Type.String({ maxLength: EMAIL_MAX, description: "The lead's e-mail address, when known." })),
  version: Int32({ minimum: 1, description: 'Starts at 1; a regenerated or edited draft is the next version.' }),
  // Versions and editing (DESIGN §7).
  origin: DraftOrigin,
  editedAt: Nullable(Timestamp('When a person wrote this version by editing the one before; null for a version WRITER wrote.')),
  grounding: Nullable(DraftGrounding),
  // Delivery (DESIGN §7).
  delivery: Nullable(Delivery),
});

/** One version of a run's draft, as GET /api/v1/runs/{id}/drafts lists them. */
export const DraftVersion = Type.Object({
  id: Id('Identifier of this version.'),
  version: Int32({ minimum: 1, description: '1, 2, 3…: the order in which the versions were made.' }),
  origin: DraftOrigin,
  status: Type.Enum(DRAFT_STATUSES, {
    description: 'DRAFT for the version under review; SUPERSEDED for one a later version replaced (an edit, or a '
      + 'regeneration a person asked for: `replacedBy` says which); REJECTED only when a person rejected it without '
      + 'asking for another.',
  }),
  subject: Type.String({ maxLength: SUBJECT_MAX }),
  body: Type.String({ maxLength: BODY_MAX }),
  to: Nullable(Type.String({ maxLength: EMAIL_MAX })),
  createdAt: Timestamp('When this version was made.'),
  editedAt: Nullable(Timestamp('For an edited version: when the edit was saved.')),
  editedBy: Nullable(Type.Object({
    type: Type.Enum(['user', 'key'], { description: 'A person in the web UI, or an API key.' }),
    id: Id('The user or the API key.'),
    name: Nullable(Type.String({ maxLength: 200, description: "The user's or key's name." })),
  }, { description: 'For an edited version: who edited it.' })),
  feedback: Nullable(Type.String({
    maxLength: FEEDBACK_MAX,
    description: "The reviewer's feedback when they rejected this version or asked for the next one.",
  })),
  grounding: Nullable(DraftGrounding),
  replacedBy: Nullable(Type.Object({
    version: Int32({ minimum: 2, description: 'The version that replaced this one.' }),
    origin: Type.Enum(['edited', 'regenerated'], {
      description: "`edited`: a person's edit; `regenerated`: WRITER, asked by a person.",
    }),
  }, { description: 'What replaced this version: null for the latest one.' })),
}, { $id: 'DraftVersion' });

/** PATCH /api/v1/runs/{id}/draft: the fields to change; the others are copied from the version being edited. */
export const DraftEdit = Type.Object({
  // Linear patterns only (DESIGN §10): one line of text in a subject (the domain refuses encoded words too), no control
  // characters but tab and line breaks in a body. A subject or body of white space alone is refused by the domain.
  subject: Type.Optional(Type.String({
    minLength: 1, maxLength: SUBJECT_MAX, pattern: ONE_LINE_PATTERN,
    description: `The subject line: 1 to ${SUBJECT_MAX} characters, one line, without encoded words (=?...?=).`,
  })),
  body: Type.Optional(Type.String({
    minLength: 1, maxLength: BODY_MAX, pattern: '^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]*$',
    description: `The plain-text body: 1 to ${BODY_MAX} characters; line breaks and tabs are the only control characters allowed.`,
  })),
  to: Type.Optional(Nullable(Type.String({
    format: 'idn-email', maxLength: EMAIL_MAX, description: 'The recipient; null leaves the draft without one.',
  }))),
}, { additionalProperties: false, minProperties: 1 });

export const RunStatus = Type.Enum(RUN_STATUSES);

/** At most this many replies are shown on a run: the newest. */
export const RUN_REPLIES_MAX = 200;

export const RunReply = Type.Object({
  id: Id('Identifier of the reply (POST /api/v1/replies/{id}/classification corrects its class).'),
  receivedAt: Timestamp('When the reply was sent (its Date header, never later than when it was found).'),
  from: Nullable(Type.String({ maxLength: 320, description: 'Who replied, as "Name <address>" or the address alone.' })),
  snippet: Type.String({ maxLength: 300, description: 'The start of what the reply says, without the quoted e-mail: at most 300 characters.' }),
  classification: ReplyClassification.properties.classification,
  returnsOn: ReplyClassification.properties.returnsOn,
  followUpAfter: ReplyClassification.properties.followUpAfter,
  classifiedBy: Type.Enum(['engine', 'person'], { description: 'Whether the class is the engine\'s reading or a person\'s correction.' }),
}, { description: "A reply found in the sender's inbox to the run's delivered e-mail, with what it says (DESIGN §16)." });

export const Run = Type.Object({
  id: Id('Identifier of the run.'),
  status: RunStatus,
  leadId: Id('The lead the run is for.'),
  callId: Id('The call the run is for.'),
  startedAt: Timestamp('When the run was accepted.'),
  completedAt: Nullable(Timestamp('When the pipeline ended (AWAITING_APPROVAL, FAILED or CANCELLED).')),
  traceUrl: Type.String({ format: 'uri', maxLength: 2048, description: 'Where the trace of the run can be seen.' }),
  error: Nullable(Type.String({ maxLength: MESSAGE_MAX, description: 'Why the run failed, when it did.' })),
  tokensUsed: Int64({ minimum: 0, description: 'Tokens the run has spent on model calls, over every step and attempt.' }),
  batchId: Nullable(Id('The batch the run was started in (POST /api/v1/runs/batch); null for a run started on its own.')),
  steps: Type.Array(Step, { minItems: 4, maxItems: 4, description: 'Always four, in the order RESEARCH, ANALYSIS, STRATEGY, WRITER.' }),
  emailDraft: Nullable(EmailDraft),
  reply: Nullable(RunReply),
  // Follow-ups (DESIGN §13).
  sequence: Nullable(RunSequence),
  replies: Type.Array(RunReply, { maxItems: RUN_REPLIES_MAX, description: `The replies found to the run's e-mail, oldest first (DESIGN §16): the newest ${RUN_REPLIES_MAX}; \`reply\` is the last of them.` }),
}, { $id: 'Run' });

export const RunCreate = Type.Object({
  leadId: Type.String({ format: 'uuid', maxLength: 36, description: 'The lead the run is for.' }),
  callId: Type.String({ format: 'uuid', maxLength: 36, description: 'A call of that lead.' }),
}, { additionalProperties: false });

export const RunBatchCreate = Type.Object({
  runs: Type.Array(RunCreate, {
    minItems: 1, maxItems: 100, description: 'One run for each item, started in this order, all or none. A lead or call may appear more than once.',
  }),
}, { additionalProperties: false });

export const RunApprove = Type.Object({
  deliver: Type.Optional(Type.Enum(['send', 'mailbox', 'none'], {
    description: 'What happens to the e-mail; left out, the workspace\'s default (`none` when no mail transport is set up).',
  })),
  sendAt: Type.Optional(Type.Union([
    Type.Literal('next_window'),
    Type.String({ format: 'date-time', maxLength: 40 }),
  ], {
    type: 'string', maxLength: 40, examples: ['next_window', '2026-03-02T09:00:00+01:00'],
    description: 'When the e-mail leaves (DESIGN §14): `next_window`, the next opening of the send window in the lead\'s '
      + 'time zone (at once when it is open), or an RFC 3339 instant, not in the past. The delivery then waits SCHEDULED '
      + 'with `scheduledFor`, listed in the outbox. Left out: at once, within the sender\'s limits.',
  })),
  sequenceId: Type.Optional(Type.Union([Id('The sequence of follow-ups the lead is enrolled in.'), Type.Null()], {
    description: 'With `send` or `mailbox`: the follow-up sequence to enrol the lead in; null for no follow-ups; left out, the workspace\'s default.',
  })),
}, { additionalProperties: false, description: 'No body is needed; `{}` approves with the workspace\'s default delivery.' });

export const RunReject = Type.Object({
  feedback: Type.Optional(Type.Union([Type.String({ maxLength: FEEDBACK_MAX, description: 'What should change; WRITER reads it when regenerating.' }), Type.Null()])),
  regenerate: Type.Optional(Type.Boolean({ default: false, description: 'Queue the run again for WRITER to write the next version.' })),
}, { additionalProperties: false });

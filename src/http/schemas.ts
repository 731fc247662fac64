// The API's shapes. Each schema validates requests, serialises responses, types the handlers and writes the
// OpenAPI document: a shape is described here once.
import { Type, type TSchema } from 'typebox';
import { AnalysisOutput, MAX_ANSWER_BYTES, ResearchOutput, STEP_NODES, StrategyOutput, WriterOutput } from '../agent/outputs.ts';
import { LEAD_STATUSES, SEARCH_MAX_LENGTH, SEARCH_MAX_WORDS, UNASSIGNED } from '../domain/leads.ts';
import {
  IMPORT_FIELDS, IMPORT_LISTED_ERRORS, IMPORT_LISTED_WARNINGS, IMPORT_MAX_COLUMNS, IMPORT_MAX_ROWS,
} from '../domain/lead-import-format.ts';
import { DRAFT_ORIGINS, DRAFT_STATUSES, RUN_STATUSES } from '../domain/runs/runs.ts';
import { BODY_MAX, SUBJECT_MAX } from '../agent/grounding.ts';
import { DESCRIPTION_MAX as WEBHOOK_DESCRIPTION_MAX } from '../domain/webhooks/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks/events.ts';
import { URL_MAX } from '../domain/webhooks/url.ts';
import { ERROR_CODES } from '../domain/errors.ts';
import { TRANSCRIPT_FORMATS } from '../agent/transcript/types.ts';
import { NOT_BLANK_PATTERN, ONE_LINE_PATTERN } from '../domain/validation.ts';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
// Every string and array of the document states its bound, answers included, so that a client can size what it
// stores: the bound a request is checked against, or what the server writes at most.
/** `2026-01-31T09:30:00.000Z`: 24 characters; a year past 9999 takes 3 more. */
const TIMESTAMP_MAX = 27;
/**
 * An error or a message the server wrote (why a step, a run or a delivery failed): a sentence or a few, which may quote
 * the request's path (Node takes at most 16 KiB of request line and headers).
 */
export const MESSAGE_MAX = 20_000;
/** An e-mail address (RFC 5321), and a header line of an e-mail (RFC 5322). */
const EMAIL_MAX = 254;
const HEADER_LINE_MAX = 998;
/** The model an endpoint says answered (or the configured one): no longer than the answer that named it. */
export const MODEL_NAME_MAX = MAX_ANSWER_BYTES;
/** A reviewer's feedback on a rejected draft. */
const FEEDBACK_MAX = 2000;
// An integer states its range: what it is checked against, or else all that its format holds. A 64-bit integer of
// this API is a JavaScript number, exact up to 2^53 - 1.
export const INT32_MAX = 2_147_483_647;
export const Int32 = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({ format: 'int32', minimum: -INT32_MAX - 1, maximum: INT32_MAX, ...options });
export const Int64 = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({ format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...options });
export const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', maxLength: TIMESTAMP_MAX, description: description ?? 'ISO 8601 timestamp in UTC with milliseconds.' });
const Id = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description });

export const Problem = Type.Object({
  type: Type.String({ maxLength: 2048, description: 'A URI naming the kind of problem.' }),
  title: Type.String({ maxLength: 200 }),
  status: Int32({ minimum: 400, maximum: 599 }),
  detail: Type.String({ maxLength: MESSAGE_MAX, description: 'What went wrong, for a person.' }),
  code: Type.Enum(ERROR_CODES, { description: 'A stable snake_case word to branch on; the list is closed.' }),
  requestId: Type.String({ maxLength: 128, description: 'The X-Request-Id of the request, to quote when asking for help.' }),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String({ maxLength: 1000 }), message: Type.String({ maxLength: MESSAGE_MAX }) }), {
    maxItems: 50, description: 'For a request that failed validation: what is wrong with each field, the first 50 at most.',
  })),
  errorCount: Type.Optional(Int32({ minimum: 0, description: 'How many entries `errors` would have in all.' })),
  requiredScope: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Optional(Int32({ minimum: 0 })),
  used: Type.Optional(Int32({ minimum: 0 })),
  resetsAt: Type.Optional(Timestamp()),
  runStatus: Type.Optional(Type.Enum(RUN_STATUSES, { description: 'For invalid_state: the status the run is in.' })),
}, { $id: 'Problem', description: 'An RFC 9457 problem document (application/problem+json).' });

export const ProblemRef = Type.Ref('Problem');

export const LeadStatus = Type.Enum(LEAD_STATUSES, { description: 'Where the lead stands.' });

export const Lead = Type.Object({
  id: Id('Identifier of the lead.'),
  name: Type.String({ maxLength: 200, description: 'Person name of the lead.' }),
  email: Nullable(Type.String({ format: 'idn-email', maxLength: EMAIL_MAX })),
  companyName: Nullable(Type.String({ maxLength: 200 })),
  companyWebsite: Nullable(Type.String({ format: 'uri', maxLength: 2048 })),
  status: LeadStatus,
  assignedToUserId: Nullable(Id('The user the lead is assigned to.')),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  lastContactedAt: Nullable(Timestamp('When an e-mail to the lead was last sent (DESIGN §7).')),
  lastReplyAt: Nullable(Timestamp('When the lead last replied to a sent e-mail (DESIGN §7).')),
}, { $id: 'Lead' });

const leadFields = {
  name: Type.String({ maxLength: 200, pattern: NOT_BLANK_PATTERN, description: 'Person name of the lead; not blank.' }),
  email: Nullable(Type.String({ format: 'idn-email', maxLength: EMAIL_MAX })),
  companyName: Nullable(Type.String({ maxLength: 200 })),
  companyWebsite: Nullable(Type.String({
    format: 'website', maxLength: 2048,
    description: 'An absolute http or https URL, or a bare host (`www.example.com`, `example.com/about`), which is '
      + 'stored as `https://` and the host.',
  })),
  status: LeadStatus,
  assignedToUserId: Nullable(Type.String({ format: 'uuid', maxLength: 36, description: 'A user of the same workspace.' })),
};

export const LeadCreate = Type.Object({
  name: leadFields.name,
  email: Type.Optional(leadFields.email),
  companyName: Type.Optional(leadFields.companyName),
  companyWebsite: Type.Optional(leadFields.companyWebsite),
  status: Type.Optional(leadFields.status),
  assignedToUserId: Type.Optional(leadFields.assignedToUserId),
}, { additionalProperties: false });

export const LeadUpdate = Type.Object({
  name: Type.Optional(leadFields.name),
  email: Type.Optional(leadFields.email),
  companyName: Type.Optional(leadFields.companyName),
  companyWebsite: Type.Optional(leadFields.companyWebsite),
  status: Type.Optional(leadFields.status),
  assignedToUserId: Type.Optional(leadFields.assignedToUserId),
}, { additionalProperties: false, minProperties: 1 });

/** The filters of GET /api/v1/leads, its count and its export: the same leads are listed, counted and exported. */
export const LeadFilters = {
  q: Type.Optional(Type.String({
    maxLength: SEARCH_MAX_LENGTH,
    description: `Words (at most ${SEARCH_MAX_WORDS}, split on whitespace) each of which must appear inside the name, e-mail or company, `
      + 'whatever the case and accents: `north` finds Northwind, `angstrom` finds Ångström. A blank `q` finds every lead.',
  })),
  status: Type.Optional(LeadStatus),
  assignedToUserId: Type.Optional(Type.Union([
    Type.String({ format: 'uuid', maxLength: 36 }),
    Type.Literal(UNASSIGNED),
  ], { type: 'string', maxLength: 36, description: `The leads assigned to this user, or \`${UNASSIGNED}\` for the leads assigned to nobody.` })),
};

export const LeadCount = Type.Object({
  count: Int64({ minimum: 0, description: 'How many leads the filters find.' }),
});

/**
 * A JSON lead import: each lead as POST /api/v1/leads takes it. The rows are validated one by one, against LeadCreate
 * itself (src/domain/lead-import-file.ts), and a row that fails is answered in `errors` of a 200, not refused: so the
 * document puts no schema on a row. With LeadCreate there, a tool that checks requests against the document (Prism,
 * a fuzzer) would call such a request invalid and expect the 4xx the server never gives.
 */
export const LeadImportJson = Type.Object({
  leads: Type.Array(Type.Unknown({
    description: 'A lead as `POST /api/v1/leads` takes it (`name`, and `email`, `companyName`, `companyWebsite`, '
      + '`status`, `assignedToUserId` as it has them). A row that is not one is skipped and reported in `errors`, by '
      + 'its index.',
  }), { maxItems: IMPORT_MAX_ROWS, description: `The leads, at most ${IMPORT_MAX_ROWS.toLocaleString('en')}.` }),
}, { additionalProperties: false });

export const LeadImportQuery = Type.Object({
  dedupe: Type.Optional(Type.Enum(['email'], {
    description: 'With `email`, a row whose e-mail is that of a lead already there (compared case-insensitively) updates that lead '
      + 'instead of creating a second; rows of the file with one e-mail make one lead, the later rows updating it.',
  })),
  dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Read and check everything, write nothing, and answer the same counts.' })),
  map: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), {
    maxItems: IMPORT_FIELDS.length,
    description: 'CSV only: read a field from a column of your choice, as `FIELD:COLUMN` (`map=email:Work E-mail`); `FIELD:` '
      + `reads that field from no column. FIELD is one of ${IMPORT_FIELDS.join(', ')}. Repeat for more fields; the other `
      + 'columns are matched by their headers.',
  })),
  statusMap: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), {
    maxItems: IMPORT_LISTED_WARNINGS,
    description: 'CSV only: read a status value of the file that is not a lead status as one, as `VALUE:STATUS` '
      + '(`statusMap=Cold:DISCOVERY`, `statusMap=Contact in Future:CONTACTED`); VALUE is compared without case or '
      + `surrounding spaces, and STATUS is one of ${LEAD_STATUSES.join(', ')}. Repeat for more values; an unknown `
      + 'value that is not mapped gives the lead the default status, and a warning.',
  })),
});

export const LeadImportResult = Type.Object({
  created: Int32({
    minimum: 0,
    description: 'Rows that created a lead. To a key without `leads:read`: every row written, created or updated.',
  }),
  updated: Int32({
    minimum: 0,
    description: 'Rows that updated a lead (with `dedupe=email`): one already there, or one an earlier row created. '
      + 'Always 0 to a key without `leads:read`: it would say which e-mails are leads already.',
  }),
  skipped: Int32({ minimum: 0, description: 'Invalid rows, left out; `errors` says why.' }),
  errors: Type.Array(Type.Object({
    row: Int32({
      minimum: 0,
      description: 'CSV: the row as a spreadsheet numbers it (the header is row 1, the first lead row 2; a cell over several lines is '
        + 'still one row). JSON: the index of the lead in `leads`, from 0.',
    }),
    field: Type.String({ maxLength: 100, description: 'The lead field, or `(row)` for the row as a whole.' }),
    message: Type.String({ maxLength: MESSAGE_MAX, description: 'What is wrong, in the words of POST /api/v1/leads.' }),
  }), { maxItems: IMPORT_LISTED_ERRORS, description: `What is wrong with each skipped row, in row order: the first ${IMPORT_LISTED_ERRORS.toLocaleString('en')}.` }),
  errorCount: Int32({ minimum: 0, description: 'How many entries `errors` would have in all.' }),
  warnings: Type.Array(Type.Object({
    field: Type.String({ maxLength: 100, description: 'The lead field: `status`.' }),
    value: Type.String({ maxLength: 200, description: 'The value as the file holds it (its first 200 characters).' }),
    rows: Int32({ minimum: 1, description: 'How many rows hold it.' }),
    message: Type.String({
      maxLength: MESSAGE_MAX, description: 'What the import did with those rows, and how to choose otherwise.',
    }),
  }), {
    maxItems: IMPORT_LISTED_WARNINGS,
    description: 'CSV: each distinct value the import could not read as written, once (the first '
      + `${IMPORT_LISTED_WARNINGS}): a status that is not a lead status. Its rows were imported with the default `
      + 'status; '
      + 'map it with `statusMap`. Empty for JSON, whose statuses are checked as `POST /api/v1/leads` checks them.',
  }),
  rows: Int32({ minimum: 0, description: 'Rows of leads read: created + updated + skipped. Blank rows are not counted.' }),
  dryRun: Type.Boolean({ description: 'True when nothing was written: the counts say what the import would do.' }),
  columns: Nullable(Type.Array(Type.Object({
    header: Type.String({ maxLength: 200, description: 'The header of the column (its first 200 characters).' }),
    field: Nullable(Type.Enum(IMPORT_FIELDS, { description: 'What the column was read as; null for a column that was ignored.' })),
  }), { maxItems: IMPORT_MAX_COLUMNS, description: 'CSV: how each column was read, in order. Null for JSON.' })),
}, { $id: 'LeadImportResult' });

const TRANSCRIPT_MAX = 200_000;

export const Call = Type.Object({
  id: Id('Identifier of the call.'),
  leadId: Id('The lead the call was held with.'),
  title: Nullable(Type.String({ maxLength: 200 })),
  occurredAt: Nullable(Timestamp('When the call took place.')),
  durationSeconds: Nullable(Int32({ minimum: 0, maximum: 86_400 })),
  transcript: Type.String({ maxLength: TRANSCRIPT_MAX }),
  format: Type.Enum(TRANSCRIPT_FORMATS, {
    description: 'How the transcript is laid out, detected from its start when the call is added: `labelled` (`Name: '
      + 'text`), `rep-prospect` (`REP:`/`PROSPECT:` and other labels for a side), `speaker-n` (`Speaker 1:`), `webvtt` '
      + '(WebVTT from Zoom or Teams), `srt` (SRT subtitles), `otter` (Otter or Fireflies: name and time on one line, the '
      + 'text below), `timestamped` (`[00:03:12] Name (Company): text`), `meet` (a Google Meet export), `plain` (no '
      + 'speakers). More values may be added.',
  }),
  createdAt: Timestamp(),
}, { $id: 'Call' });

export const CallCreate = Type.Object({
  transcript: Type.String({ minLength: 1, maxLength: TRANSCRIPT_MAX, description: 'What was said; one speaker turn per line reads best.' }),
  title: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  occurredAt: Type.Optional(Nullable(Type.String({ format: 'date-time', maxLength: 64 }))),
  durationSeconds: Type.Optional(Nullable(Int32({ minimum: 0, maximum: 86_400 }))),
}, { additionalProperties: false });

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
  status: Type.Enum(['QUEUED', 'DELIVERING', 'DELIVERED', 'FAILED'], {
    description: 'QUEUED → DELIVERING → DELIVERED, or FAILED after its retries (then POST /api/v1/runs/{id}/deliver queues it again).',
  }),
  messageId: Type.String({ maxLength: HEADER_LINE_MAX, description: 'The Message-ID of the e-mail, fixed when the delivery was made: a resend carries the same.' }),
  attempts: Int32({ minimum: 0, description: 'Attempts made so far.' }),
  queuedAt: Timestamp('When the delivery was (last) queued.'),
  deliveredAt: Nullable(Timestamp('When the mail server took the message.')),
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

export const RunReply = Type.Object({
  receivedAt: Timestamp('When the reply was sent (its Date header, never later than when it was found).'),
  from: Nullable(Type.String({ maxLength: 320, description: 'Who replied, as "Name <address>" or the address alone.' })),
  snippet: Type.String({ maxLength: 300, description: 'The start of what the reply says, without the quoted e-mail: at most 300 characters.' }),
}, { description: "The newest reply found in the sender's inbox to the run's delivered e-mail; null until there is one." });

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
}, { additionalProperties: false, description: 'No body is needed; `{}` approves with the workspace\'s default delivery.' });

export const RunReject = Type.Object({
  feedback: Type.Optional(Type.Union([Type.String({ maxLength: FEEDBACK_MAX, description: 'What should change; WRITER reads it when regenerating.' }), Type.Null()])),
  regenerate: Type.Optional(Type.Boolean({ default: false, description: 'Queue the run again for WRITER to write the next version.' })),
}, { additionalProperties: false });

export const Limit = (fallback: number, max: number) =>
  Int32({ minimum: 1, maximum: max, default: fallback, description: `Page size, 1 to ${max}.` });

export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'Opaque; take it from the Link header of the previous page.' });

// Not checked as a UUID: any other text is a 404, as for an identifier that is not there. 100 is the longest path
// segment the router takes.
export const IdParam = Type.Object({ id: Type.String({ maxLength: 100, description: 'Identifier (UUID).' }) });

export const dataOf = <T extends TSchema>(schema: T) => Type.Object({ data: schema });
/** A list answer: a page of at most `max` items (the largest `limit`, or all there can be). */
export const listOf = <T extends TSchema>(schema: T, max: number) => Type.Object({ data: Type.Array(schema, { maxItems: max }) });

/**
 * A JSON answer with what it is, for the OpenAPI document: the response's description. Without one, @fastify/swagger
 * writes "Default Response", which tells a reader of /docs or of a generated client nothing. It is said by the
 * extension @fastify/swagger reads for it, and drops from the schema, rather than by a `{description, content}`
 * response: in that form a schema with an `$id` (Lead, Run…) is written out in full where it is used instead of as a
 * named component.
 */
export const answer = <T extends TSchema>(description: string, schema: T): T =>
  ({ ...schema, 'x-response-description': description });

/** An error answer in the OpenAPI document: an RFC 9457 problem, sent as application/problem+json. */
export const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemRef } } });

/** The error answers every authenticated route can give. */
export const authProblems = {
  400: problem('The request is invalid; `errors` names each field.'),
  401: problem('No API key, or a malformed, unknown or revoked one.'),
  403: problem('The key lacks the scope this endpoint needs; `requiredScope` names it.'),
  404: problem('No such resource in this workspace.'),
  429: problem('Too many requests for this key; see `Retry-After`.'),
  503: problem('The database cannot be reached; see `Retry-After`.'),
};

/** The further error answers of a POST or PATCH with a JSON body. */
export const writeProblems = {
  409: problem('A request with this Idempotency-Key is still in flight.'),
  413: problem('The body is over 1 MiB.'),
  415: problem('The body is not application/json.'),
  422: problem('This Idempotency-Key was used for a different request.'),
};

// Webhooks (DESIGN §9).
export const WebhookEventType = Type.Enum(WEBHOOK_EVENT_TYPES, { description: 'A kind of event an endpoint can be sent.' });

export const WebhookEndpoint = Type.Object({
  id: Id('Identifier of the endpoint.'),
  url: Type.String({ format: 'uri', maxLength: URL_MAX, description: 'Where events are POSTed.' }),
  description: Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX })),
  events: Type.Array(WebhookEventType, { maxItems: WEBHOOK_EVENT_TYPES.length, description: 'The event types it is sent; empty for every type.' }),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String({ maxLength: MESSAGE_MAX, description: 'Why it is disabled: by an admin, or after 3 days of failed deliveries.' })),
  disabledAt: Nullable(Timestamp()),
  failingSince: Nullable(Timestamp('Since when every delivery has failed; null while deliveries succeed.')),
  previousSecretExpiresAt: Nullable(Timestamp('After a secret roll-over: until when the previous secret signs too.')),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
}, { $id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecret = Type.Object({
  ...WebhookEndpoint.properties,
  secret: Type.String({ maxLength: 100, description: 'The signing secret, `whsec_` and base64: shown this once, never again.' }),
}, { $id: 'WebhookEndpointWithSecret' });

const WebhookUrl = Type.String({ minLength: 1, maxLength: URL_MAX, description: 'An http or https URL without user name or password, on a public address.' });
const WebhookEvents = Type.Array(WebhookEventType, {
  maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true,
  description: 'Empty or left out: every type. Each type needs the read scope of its data (`lead.*`: leads:read; '
    + '`run.*` and `draft.*`: runs:read), and every type both: a key without it is refused with 403.',
});

export const WebhookEndpointCreate = Type.Object({
  url: WebhookUrl,
  description: Type.Optional(Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX }))),
  events: Type.Optional(WebhookEvents),
}, { additionalProperties: false });

export const WebhookEndpointUpdate = Type.Object({
  url: Type.Optional(WebhookUrl),
  description: Type.Optional(Nullable(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX }))),
  events: Type.Optional(WebhookEvents),
  enabled: Type.Optional(Type.Boolean({ description: 'false disables it; true enables it again and clears its failures.' })),
}, { additionalProperties: false });

export const WebhookDelivery = Type.Object({
  id: Id('Identifier of the delivery.'),
  eventId: Id('The event, sent as `webhook-id`; a replay sends the same one.'),
  eventType: Type.String({ maxLength: 100 }),
  status: Type.Enum(['PENDING', 'SUCCEEDED', 'FAILED']),
  attempts: Int32({ minimum: 0 }),
  nextAttemptAt: Nullable(Timestamp()),
  lastStatus: Nullable(Int32({ minimum: 0, maximum: 999, description: 'The HTTP status of the last answer; null when none came.' })),
  lastError: Nullable(Type.String({ maxLength: MESSAGE_MAX })),
  lastResponseExcerpt: Nullable(Type.String({ maxLength: 1024, description: 'The first 1 KB of the last answer\'s body.' })),
  lastDurationMs: Nullable(Int32({ minimum: 0 })),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
}, { $id: 'WebhookDelivery' });

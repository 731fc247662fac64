// The touches of a run's thread (DESIGN §13): touch 1, the approved e-mail, a follow-up for each step of the
// sequence the run's lead is enrolled in, and the responses to the buyer's replies (§16 "Draft a response"). Apart
// from sequences.ts, which the Run (runs.ts) imports.
import { Type } from 'typebox';
import { Nullable, Timestamp, Id, Int32, FEEDBACK_MAX, EMAIL_MAX } from './common.ts';
import { BODY_MAX, Delivery, SUBJECT_MAX } from './runs.ts';
import { INSTRUCTION_MAX, SEQUENCE_STEPS_MAX } from './sequences.ts';

export const TOUCH_STATUSES = ['SCHEDULED', 'DRAFTED', 'AWAITING_APPROVAL', 'APPROVED', 'SENT', 'SKIPPED'] as const;

/** The most responses one thread holds (src/db/migrations/0042_response_touches.sql). */
export const RESPONSES_MAX = 20;
/** Touch 1, the follow-ups, then the responses: the highest touch number. */
export const TOUCH_NUMBER_MAX = 1 + SEQUENCE_STEPS_MAX + RESPONSES_MAX;

export const TouchDraft = Type.Object({
  id: Id('Identifier of the draft version.'),
  version: Int32({ minimum: 1 }),
  subject: Type.String({ maxLength: SUBJECT_MAX + 4 }),
  body: Type.String({ maxLength: BODY_MAX }),
  to: Nullable(Type.String({ maxLength: EMAIL_MAX })),
});

export const Touch = Type.Object({
  number: Int32({ minimum: 1, maximum: TOUCH_NUMBER_MAX, description: '1: the approved e-mail; n+1: the sequence\'s step n; after those, the responses.' }),
  kind: Type.Enum(['sequence', 'response'], { description: '`response`: the answer to a reply ("Draft a response"), no step of the sequence.' }),
  replyId: Nullable(Id('The reply a response answers; null for the sequence\'s touches.')),
  of: Int32({ minimum: 1, maximum: SEQUENCE_STEPS_MAX + 1, description: 'How many touches the thread has: "Follow-up 2 of 3".' }),
  status: Type.Enum(TOUCH_STATUSES, {
    description: 'SCHEDULED → DRAFTED → AWAITING_APPROVAL (review required) → APPROVED → SENT, or SKIPPED (the sequence stopped '
      + 'first, the follow-up was rejected, or its delivery failed or was cancelled).',
  }),
  review: Type.Enum(['required', 'auto']),
  instruction: Nullable(Type.String({ maxLength: INSTRUCTION_MAX, description: 'The step\'s instruction; null for touch 1.' })),
  dueAt: Nullable(Timestamp('When it is due; null until the touch before it went out.')),
  skipReason: Nullable(Type.String({ maxLength: 200, description: 'Why it was skipped: the sequence\'s stop reason; `rejected`; '
    + '`delivery_failed` (the mail server refused it after its retries) or `cancelled` (taken off the outbox). The sequence '
    + 'then goes on to the next touch.' })),
  draft: Nullable(TouchDraft),
  delivery: Nullable(Delivery),
});

export const TouchParams = Type.Object({
  id: Type.String({ maxLength: 100, description: 'Identifier (UUID) of the run.' }),
  number: Int32({ minimum: 2, maximum: TOUCH_NUMBER_MAX, description: 'The follow-up\'s or response\'s touch number (2 or more).' }),
});

export const TouchReject = Type.Object({
  feedback: Type.Optional(Nullable(Type.String({ maxLength: FEEDBACK_MAX, description: 'What should change; WRITER reads it when regenerating.' }))),
  regenerate: Type.Optional(Type.Boolean({ default: false, description: 'Write the follow-up again with the feedback; without it the follow-up is SKIPPED.' })),
}, { additionalProperties: false });

export const TouchDraftEdit = Type.Object({
  subject: Type.Optional(Type.String({ minLength: 1, maxLength: SUBJECT_MAX + 4 })),
  body: Type.Optional(Type.String({ minLength: 1, maxLength: BODY_MAX })),
}, { additionalProperties: false, minProperties: 1 });


/** A follow-up waiting for review, as the review queue lists them (GET /api/v1/touches). */
export const TouchForReview = Type.Object({
  runId: Id('The run whose thread it belongs to.'),
  leadId: Id('The lead it is written to.'),
  leadName: Type.String({ maxLength: 200 }),
  number: Int32({ minimum: 2, maximum: SEQUENCE_STEPS_MAX + 1 }),
  of: Int32({ minimum: 2, maximum: SEQUENCE_STEPS_MAX + 1, description: '"Follow-up 2 of 3".' }),
  dueAt: Nullable(Timestamp('When it is due; approved later, it goes at once.')),
  draft: TouchDraft,
});

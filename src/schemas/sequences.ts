// Follow-up sequences (DESIGN §13): a workspace's sequences, a run's enrolment in one, and the touches of its thread.
import { Type } from 'typebox';
import { Nullable, Timestamp, Id, Int32 } from './common.ts';

export const SEQUENCE_NAME_MAX = 100;
export const INSTRUCTION_MAX = 500;
export const SEQUENCE_STEPS_MAX = 10;
export const WAIT_DAYS_MAX = 30;
/** A workspace's sequences are few: a team has a handful of ways to follow up, not a library of them. */
export const SEQUENCES_MAX = 100;

export const SequenceStep = Type.Object({
  waitDays: Int32({ minimum: 1, maximum: WAIT_DAYS_MAX, description: 'Business days (Monday to Friday) after the previous e-mail of the thread went out.' }),
  instruction: Type.String({ minLength: 1, maxLength: INSTRUCTION_MAX, description: 'What this follow-up does, for WRITER: "a short bump with one new point from the call".' }),
  review: Type.Enum(['required', 'auto'], { description: '`required`: the follow-up waits in the review queue for a person; `auto`: it is sent when due.' }),
}, { additionalProperties: false });

const Steps = Type.Array(SequenceStep, { minItems: 1, maxItems: SEQUENCE_STEPS_MAX, description: 'The follow-ups, in order: step n is touch n+1 of the thread.' });
const Name = Type.String({ minLength: 1, maxLength: SEQUENCE_NAME_MAX, pattern: '\\S', description: 'What the team calls it.' });

export const Sequence = Type.Object({
  id: Id('Identifier of the sequence.'),
  name: Type.String({ maxLength: SEQUENCE_NAME_MAX }),
  steps: Steps,
  isDefault: Type.Boolean({ description: 'The sequence an approval enrols in when it names none.' }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

export const SequenceCreate = Type.Object({
  name: Name,
  steps: Steps,
  isDefault: Type.Optional(Type.Boolean({ description: 'Make it the workspace\'s default (the former default stops being one).' })),
}, { additionalProperties: false });

export const SequenceUpdate = Type.Object({
  name: Type.Optional(Name),
  steps: Type.Optional(Steps),
  isDefault: Type.Optional(Type.Literal(true, { description: 'Make it the default; a default stops being one only when another becomes it.' })),
}, { additionalProperties: false, minProperties: 1 });

export const ENROLMENT_STATUSES = ['ACTIVE', 'PAUSED', 'FINISHED', 'STOPPED'] as const;
export const STOP_REASONS = ['replied', 'bounced', 'unsubscribed', 'suppressed', 'lead_closed', 'manual', 'superseded', 'erased'] as const;

/** The run's enrolment as the Run shows it (`sequence`). */
export const RunSequence = Type.Object({
  id: Id('Identifier of the sequence; its name is kept when the sequence was deleted since.'),
  name: Type.String({ maxLength: SEQUENCE_NAME_MAX }),
  status: Type.Enum(ENROLMENT_STATUSES, {
    description: 'ACTIVE → FINISHED (every step sent), ACTIVE → STOPPED (see `stopReason`), ACTIVE ⇄ PAUSED.',
  }),
  stopReason: Nullable(Type.Enum(STOP_REASONS, {
    description: '`replied`, `bounced`, `unsubscribed`, `suppressed`, `lead_closed` (the lead moved to WON or LOST), `manual`, '
      + '`superseded` (a newer enrolment of the lead), `erased`.',
  })),
  pausedUntil: Nullable(Timestamp('A pause\'s end (an out-of-office reply\'s return); null for a pause until resumed.')),
  nextTouchAt: Nullable(Timestamp('When the next follow-up is due; null when none is scheduled.')),
}, { description: 'The follow-up sequence the run\'s lead is enrolled in by this run\'s approval; null for none.' });

export const SequencePause = Type.Object({
  until: Type.Optional(Nullable(Timestamp('When it resumes by itself; left out or null: until resumed.'))),
}, { additionalProperties: false });

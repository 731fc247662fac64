// Replies and what they say (DESIGN §16): one class, and the date, time or person that class can name. The offline
// classifier and the model (src/agent/replies/) answer ReplyClassification; the API shows it on every stored reply.
import { Type } from 'typebox';
import { Id, Int32, Nullable } from './common.ts';
import { RunReply } from './runs.ts';
import { Touch, TOUCH_NUMBER_MAX } from './touches.ts';

export {
  REPLY_CLASSES, ReferredPerson, ReplyClassification, PERSON_NAME_MAX, PERSON_EMAIL_MAX,
} from './reply-classification.ts';
export type { ReplyClass } from './reply-classification.ts';
import { ReplyClassification } from './reply-classification.ts';

export const Reply = Type.Object({
  id: Id('Identifier of the reply.'),
  runId: Id('The run whose e-mail it answers.'),
  leadId: Id('The lead who (or whose address) replied.'),
  receivedAt: RunReply.properties.receivedAt,
  from: RunReply.properties.from,
  subject: Nullable(Type.String({ maxLength: 300 })),
  snippet: RunReply.properties.snippet,
  ...ReplyClassification.properties,
  classifiedBy: Type.Enum(['engine', 'person'], { description: 'Whether the class is the engine\'s reading or a person\'s correction.' }),
  response: Nullable(Type.Object({
    number: Int32({ minimum: 2, maximum: TOUCH_NUMBER_MAX, description: 'Its touch in the run\'s thread (GET /api/v1/runs/{id}/touches).' }),
    status: Touch.properties.status,
  }, { description: 'The response drafted to it ("Draft a response"), unless skipped: SCHEDULED while WRITER writes it, then AWAITING_APPROVAL.' })),
}, { $id: 'Reply' });

/** POST /api/v1/replies/{id}/classification: a person's reading of a reply ("Mark as…"). */
export const ReplyClassify = Type.Object({
  classification: ReplyClassification.properties.classification,
  returnsOn: Type.Optional(Type.Union([Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10 }), Type.Null()], {
    description: 'out_of_office only: the day the person is back; the sequence resumes one business day after it.',
  })),
  followUpAfter: Type.Optional(Type.Union([Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10 }), Type.Null()], {
    description: 'not_now only: the first day to contact them again; it becomes the lead\'s nextActionAt.',
  })),
}, { additionalProperties: false });

// What a reply says (DESIGN §16): one class, and the date, time or person that class can name. Apart from replies.ts so
// that the run (runs.ts), which shows its replies with their class, can use it without a cycle.
import { Type, type Static } from 'typebox';

export const REPLY_CLASSES = [
  'interested', 'not_now', 'not_interested', 'out_of_office', 'unsubscribe', 'bounce', 'auto_reply', 'referral', 'other',
] as const;
export type ReplyClass = (typeof REPLY_CLASSES)[number];

/** A calendar day, `2026-03-14`, in the time zone of the reply's Date header. */
const Day = (description: string) => Type.Union([Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description }), Type.Null()]);
const NAME_MAX = 200;
const EMAIL_MAX = 254;

export const ReferredPerson = Type.Object({
  name: Type.Union([Type.String({ maxLength: NAME_MAX }), Type.Null()], { description: 'The person\'s name as the reply writes it.' }),
  email: Type.Union([Type.String({ maxLength: EMAIL_MAX }), Type.Null()], { description: 'Their address, when the reply gives one.' }),
}, { description: 'Whom a referral points to.' });

export const ReplyClassification = Type.Object({
  classification: Type.Enum(REPLY_CLASSES, { description: 'What the reply says.' }),
  returnsOn: Day('out_of_office: the day the reply names for the return (or the last day away); otherwise null.'),
  followUpAfter: Day('not_now: the first day of the time the reply asks to be contacted again; otherwise null.'),
  person: Type.Union([ReferredPerson, Type.Null()], { description: 'referral: the person it points to; otherwise null.' }),
});
export type ReplyClassification = Static<typeof ReplyClassification>;
export type ReferredPerson = Static<typeof ReferredPerson>;
export { NAME_MAX as PERSON_NAME_MAX, EMAIL_MAX as PERSON_EMAIL_MAX };

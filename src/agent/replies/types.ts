// What a reply says (DESIGN §16): one class, and the date, time or person that class can name. The offline classifier
// (classify.ts) and the model (model.ts) answer this same shape; the API shows it on every stored reply.
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

/** A reply as the classifiers read it: the headers that tell a machine's message from a person's, and its text. */
export interface ReplyInput {
  /** Header names in lower case: subject, from, content-type, auto-submitted, x-autoreply, x-autorespond, precedence. */
  headers: Record<string, string>;
  /** The text part, quoted e-mail and all: the classifiers find the reply's own words in it. */
  text: string;
  /** The Date header as sent (RFC 5322); null without one. Dates the reply names are read relative to it. */
  date: string | null;
  /** When the reply arrived: what its dates are read relative to when it has no Date header. */
  receivedAt?: Date;
}

/** The headers a classifier reads; any other header of a message is left out of a ReplyInput. */
export const CLASSIFIED_HEADERS = [
  'subject', 'from', 'content-type', 'auto-submitted', 'x-autoreply', 'x-autorespond', 'precedence', 'x-failed-recipients',
] as const;

export function classified(classification: ReplyClass, extra: Partial<Omit<ReplyClassification, 'classification'>> = {}): ReplyClassification {
  return { classification, returnsOn: null, followUpAfter: null, person: null, ...extra };
}

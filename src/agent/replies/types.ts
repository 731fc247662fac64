// What a reply says (DESIGN §16): one class, and the date, time or person that class can name. The offline classifier
// (classify.ts) and the model (model.ts) answer this same shape; the API shows it on every stored reply.

export { REPLY_CLASSES, ReferredPerson, ReplyClassification, PERSON_NAME_MAX, PERSON_EMAIL_MAX } from '../../schemas/replies.ts';
export type { ReplyClass } from '../../schemas/replies.ts';
import type { ReplyClass, ReplyClassification } from '../../schemas/replies.ts';

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

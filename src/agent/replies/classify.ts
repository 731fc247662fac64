// The offline reply classifier (DESIGN §16): what a reply says, from its headers and the cues of its own words in
// English, German, French and Spanish. It runs in a CPU pool thread (the task `classifyReply`, src/cpu/tasks.ts) with
// the pool's time budget; every step is linear in the text, and at most MAX_TEXT_CHARS of it are read.
//
// The order of the questions is the order of what matters most: a machine's notice is known by its headers first; an
// unsubscribe request is never missed, whatever else the reply says; a named person makes a referral; a time to come
// back makes "not now" even in a friendly reply; a refusal outweighs the polite words around it.
import {
  ABSENCE, ABSENCE_SUBJECT, AUTOMATED, AUTOMATED_SUBJECT, BOUNCE_SENDER, BOUNCE_SUBJECT, INTERESTED, NOT_INTERESTED, NOT_NOW,
  normalise, UNSUBSCRIBE, UNSUBSCRIBE_WORD, type Cues,
} from './cues.ts';
import { followUpDay, returnDay } from './dates.ts';
import { writtenAt } from './written.ts';
import { ownText } from './own-text.ts';
import { referredPerson } from './person.ts';
import { classified, type ReplyClassification, type ReplyInput } from './types.ts';

/** A reply's text is read up to this size: the message reader keeps no more of a message (src/mail/reply-reading.ts). */
export const MAX_TEXT_CHARS = 64 * 1024;
/** Of the reply's own words, this many are read for cues: what a person answers is said at the top. */
export const MAX_OWN_CHARS = 8 * 1024;

function header(input: ReplyInput, name: string): string {
  const value = input.headers[name];
  return typeof value === 'string' ? value.slice(0, 1000) : '';
}

/** A delivery status notification (RFC 3464), or a mailer daemon's notice that names a failed delivery. */
function isBounce(input: ReplyInput, subject: string): boolean {
  const type = header(input, 'content-type').toLowerCase();
  if (type.startsWith('multipart/report') && /report-type\s*=\s*"?delivery-status/.test(type)) return true;
  if (header(input, 'x-failed-recipients')) return true;
  return BOUNCE_SENDER.test(header(input, 'from')) && BOUNCE_SUBJECT.test(subject);
}

/** Sent by a machine, as RFC 3834 and the usual headers of autoresponders say. */
function isAutomatic(input: ReplyInput): boolean {
  const submitted = header(input, 'auto-submitted').trim().toLowerCase();
  const precedence = header(input, 'precedence').trim().toLowerCase();
  return (submitted !== '' && submitted !== 'no')
    || header(input, 'x-autoreply') !== '' || header(input, 'x-autorespond') !== ''
    || ['bulk', 'junk', 'list', 'auto_reply'].includes(precedence)
    || header(input, 'content-type').toLowerCase().startsWith('multipart/report');
}

/**
 * Whether the subject begins with one of the cues ("Automatic reply: …", "[Ticket #1] …"): an autoresponder puts its
 * mark first, and a person's "Re: Taking the busywork away" echoes our own subject.
 */
function begins(cue: Cues, subject: string): boolean {
  const found = cue.find(subject.trimStart());
  return found !== null && found.index <= 1;
}

/** What the reply says, read offline. */
export function classifyReply(input: ReplyInput): ReplyClassification {
  const subject = normalise(header(input, 'subject'));
  if (isBounce(input, subject)) return classified('bounce');

  const text = ownText(input.text.slice(0, MAX_TEXT_CHARS)).slice(0, MAX_OWN_CHARS);
  const said = normalise(text);
  if (UNSUBSCRIBE_WORD.test(subject.trim()) || UNSUBSCRIBE_WORD.test(said.trim()) || UNSUBSCRIBE.test(said)) return classified('unsubscribe');

  const written = writtenAt(input.date, input.receivedAt ?? new Date());
  const absent = () => classified('out_of_office', { returnsOn: returnDay(text, written) });
  const subjectSaysAbsent = begins(ABSENCE_SUBJECT, subject);
  if (isAutomatic(input) || subjectSaysAbsent || begins(AUTOMATED_SUBJECT, subject)) {
    return subjectSaysAbsent || ABSENCE.test(said) ? absent() : classified('auto_reply');
  }
  if (AUTOMATED.test(said)) return classified('auto_reply');

  const person = referredPerson(text, said);
  if (person) return classified('referral', { person });
  if (NOT_NOW.test(said)) return classified('not_now', { followUpAfter: followUpDay(text, written) });
  if (NOT_INTERESTED.test(said)) return classified('not_interested');
  if (INTERESTED.test(said)) return classified('interested');
  // A person's own note of an absence, without an autoresponder's headers.
  if (ABSENCE.test(said)) return absent();
  return classified('other');
}

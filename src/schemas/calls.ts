// Calls: a conversation held with a lead, and what adds one.
import { Type } from 'typebox';
import { Nullable, Int32, Timestamp, Id } from './common.ts';

/** How a call's transcript is laid out, in the order DESIGN §12 lists the layouts reps paste (src/agent/transcript/). */
export const TRANSCRIPT_FORMATS = [
  'labelled', 'rep-prospect', 'speaker-n', 'webvtt', 'srt', 'otter', 'timestamped', 'meet', 'plain',
] as const;

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

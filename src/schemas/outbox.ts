// The outbox and the sending rules (DESIGN §14): deliveries waiting for a send window, a per-sender limit or the
// approval's `sendAt`, and the workspace's window, time zone and limits as Settings / E-mail edits them.
import { Type } from 'typebox';
import { Id, Int32, Nullable, Timestamp } from './common.ts';

export const WAITING_FOR = ['window', 'daily_limit', 'gap', 'sendAt'] as const;

export const OutboxEntry = Type.Object({
  id: Id('Identifier of the delivery.'),
  runId: Id('The run whose draft it delivers.'),
  touch: Int32({ minimum: 1, description: 'Which e-mail of the lead\'s sequence it is: 1 for the first, 2 for the first follow-up.' }),
  to: Nullable(Type.String({ maxLength: 254, description: 'The recipient\'s address.' })),
  scheduledFor: Timestamp('When it leaves, unless the window or a limit moves it again.'),
  waitingFor: Type.Enum(WAITING_FOR, {
    description: '`window`: the send window (in the lead\'s time zone, else the workspace\'s); `daily_limit`: the '
      + 'sender\'s daily limit; `gap`: the least time between two e-mails of one sender; `sendAt`: the time the approval asked for.',
  }),
}, { $id: 'OutboxEntry' });

const Time = (description: string) => Type.String({ pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$', maxLength: 5, description, examples: ['08:00'] });

export const SendingSettings = Type.Object({
  days: Type.Array(Int32({ minimum: 1, maximum: 7 }), { maxItems: 7, description: 'ISO weekdays of the window: 1 Monday … 7 Sunday.' }),
  start: Time('The window\'s first minute, local time.'),
  end: Time('The minute the window closes, local time (24:00: midnight at the end).'),
  timeZone: Type.String({ maxLength: 64, description: 'The workspace\'s IANA time zone: the window\'s for a lead without one, and the day of the daily limit.' }),
  dailyLimit: Int32({ minimum: 1, maximum: 2000, description: 'E-mails one sending address sends a day, at most.' }),
  minGapSeconds: Int32({ minimum: 0, maximum: 86_400, description: 'Least seconds between two e-mails of one address (jittered up to a fifth more).' }),
  updatedAt: Nullable(Timestamp()),
  senders: Type.Array(Type.Object({
    address: Type.String({ maxLength: 254 }),
    sentToday: Int32({ minimum: 0, description: 'E-mails it sent today, the day in the workspace\'s time zone.' }),
    lastSentAt: Nullable(Timestamp()),
  }), { maxItems: 100, description: 'Each sending address that has sent, with today\'s count.' }),
}, { $id: 'UiSendingSettings' });

export const SendingSettingsChange = Type.Object({
  days: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), { minItems: 1, maxItems: 7 })),
  start: Type.Optional(Time('Local time the window opens.')),
  end: Type.Optional(Time('Local time the window closes.')),
  timeZone: Type.Optional(Type.String({ format: 'time-zone', maxLength: 64, description: 'An IANA time zone name.' })),
  dailyLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
  minGapSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
}, { additionalProperties: false, minProperties: 1, $id: 'UiSendingSettingsChange' });

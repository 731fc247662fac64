// Outcomes (DESIGN §16): GET /api/v1/analytics/outreach, what the workspace's e-mails led to, by group.
import { Type } from 'typebox';
import { Int64 } from './common.ts';

export const GROUP_BYS = ['week', 'sender', 'angle', 'sequenceStep'] as const;

const Day = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description });

export const OutreachQuery = Type.Object({
  from: Type.Optional(Day('The first day counted (`2026-03-01`), in the workspace\'s time zone; by default the Monday 11 weeks before `to`\'s week.')),
  to: Type.Optional(Day('The last day counted, included; by default today.')),
  groupBy: Type.Optional(Type.Enum(GROUP_BYS, {
    description: '`week` (Mondays, every week of the range, oldest first), `sender`, `angle` (the one STRATEGY chose) or `sequenceStep`; the others most e-mails first. Default `week`.',
  })),
});

const Count = (description: string) => Int64({ minimum: 0, description });

export const OutreachGroup = Type.Object({
  group: Type.String({ maxLength: 1000, description: 'The week\'s Monday (`2026-03-02`), the sender\'s address, the angle, or the step number (`1`).' }),
  sent: Count('E-mails sent over SMTP in the range.'),
  delivered: Count('Sent and not bounced.'),
  bounced: Count('Their delivery came back (BOUNCED), or a bounce answered them.'),
  replied: Count('A person answered them: a reply of any class but out_of_office, auto_reply and bounce.'),
  interested: Count('A reply read as interested.'),
  unsubscribed: Count('A reply asked to hear no more.'),
  won: Count('Their lead is WON now.'),
  replyRate: Type.Number({ minimum: 0, maximum: 1, description: '`replied` over `delivered`, to 4 places; 0 with nothing delivered.' }),
  medianHoursToReply: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'The median time from sending to the first person\'s reply, in hours to one place; null without replies.' }),
}, { $id: 'OutreachGroup', description: 'What one group of e-mails led to. Opens and clicks are not tracked, so there are none.' });

export const OutreachReport = Type.Object({
  from: Day('The first day counted.'),
  to: Day('The last day counted.'),
  timeZone: Type.String({ maxLength: 100, description: 'The time zone the days and weeks are in: the workspace\'s.' }),
  data: Type.Array(OutreachGroup, { maxItems: 10_000 }),
});

// Business-day arithmetic for follow-ups (DESIGN §13): a step waits `waitDays` business days (Monday to Friday) after
// the previous e-mail of the thread went out, counted on the calendar of a time zone, at the same local time of day.
// The send window (DESIGN §14, src/domain/sending/) then holds the delivery to the window; this only says the day.
// The zone's arithmetic is the window's (src/domain/sending/window.ts): a repeated hour is its first, a skipped one its end.
import { instantOf, wallClock } from '../sending/window.ts';

const DAY = 24 * 60 * 60_000;
const [SUNDAY, SATURDAY] = [0, 6];

/**
 * `days` business days after `from`, at the same local time of day in `timeZone`: one business day after Friday (or
 * Saturday) 10:00 is Monday 10:00.
 */
export function addBusinessDays(from: Date, days: number, timeZone = 'UTC'): Date {
  // The local wall clock (to the second) as if it were UTC, split into its day and its time of day.
  const wall = wallClock(from.getTime(), timeZone);
  const timeOfDay = ((wall % DAY) + DAY) % DAY;
  let day = wall - timeOfDay;
  for (let left = days; left > 0;) {
    day += DAY;
    const weekday = new Date(day).getUTCDay();
    if (weekday !== SATURDAY && weekday !== SUNDAY) left -= 1;
  }
  return new Date(instantOf(day + timeOfDay, timeZone) + (from.getTime() % 1000));
}

/** How long before its due time a follow-up is written: a person has a day to review it before it is due. */
export const WRITE_AHEAD_MS = 24 * 60 * 60_000;

/** When the scheduler writes a follow-up due at `dueAt`: a day ahead, but never before `now`. */
export function writeTimeOf(dueAt: Date, now: Date): Date {
  return new Date(Math.max(now.getTime(), dueAt.getTime() - WRITE_AHEAD_MS));
}

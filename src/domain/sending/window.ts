// Send windows in a time zone (DESIGN §14): which instants lie inside "Monday to Friday, 08:00-18:00 in
// Europe/Berlin", and the first one at or after a given instant. Pure functions over the platform's Intl time zone
// data (docs/decisions/0012-time-zones.md): a window is local wall-clock time, so a 09:00 start is 09:00 local on
// both sides of a daylight-saving switch, and a start that falls into the spring gap moves forward to the switch.

/** A send window: ISO weekdays (1 = Monday … 7 = Sunday) and the local minutes of the day [start, end). */
export interface SendWindow {
  days: readonly number[];
  /** Minutes after local midnight, 0–1439. */
  start: number;
  /** Minutes after local midnight, 1–1440, after `start`. */
  end: number;
}

export const DEFAULT_WINDOW: SendWindow = { days: [1, 2, 3, 4, 5], start: 8 * 60, end: 18 * 60 };

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A formatter per zone: building one is the costly part (a few hundred zones at most). */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The local date and time of an instant, as if it were UTC: comparable wall-clock milliseconds. */
export function wallClock(at: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(at))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/** The zone's offset from UTC at an instant, in milliseconds (to the second). */
const offsetAt = (at: number, timeZone: string) => wallClock(at, timeZone) - Math.floor(at / 1000) * 1000;

/**
 * The instant a local wall-clock time names. Repeated in the autumn: the earlier of the two. Missing in the spring
 * gap: the switch itself, the first instant whose local time is later.
 */
export function instantOf(wall: number, timeZone: string): number {
  const candidates = [offsetAt(wall - DAY, timeZone), offsetAt(wall + DAY, timeZone)].map((offset) => wall - offset);
  const valid = candidates.filter((at) => wallClock(at, timeZone) === wall);
  if (valid.length > 0) return Math.min(...valid);
  // In the gap: the switch lies between the two candidates; the first second whose wall clock is past `wall`.
  let low = Math.min(...candidates);
  let high = Math.max(...candidates);
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (wallClock(middle, timeZone) >= wall) high = middle;
    else low = middle;
  }
  return high;
}

/** The local calendar day of an instant, as midnight UTC of that date, and its ISO weekday. */
function localDay(at: number, timeZone: string): { midnight: number; weekday: number } {
  const wall = wallClock(at, timeZone);
  const midnight = wall - (((wall % DAY) + DAY) % DAY);
  return { midnight, weekday: ((new Date(midnight).getUTCDay() + 6) % 7) + 1 };
}

/** The local date of an instant, `YYYY-MM-DD`: the day a sender's daily count belongs to. */
export function localDate(at: Date, timeZone: string): string {
  return new Date(localDay(at.getTime(), timeZone).midnight).toISOString().slice(0, 10);
}

/** The first instant of the local day after the one `at` falls on. */
export function startOfNextDay(at: Date, timeZone: string): Date {
  return new Date(instantOf(localDay(at.getTime(), timeZone).midnight + DAY, timeZone));
}

/** Whether `at` lies inside the window in `timeZone`. */
export function isInWindow(at: Date, window: SendWindow, timeZone: string): boolean {
  const { midnight, weekday } = localDay(at.getTime(), timeZone);
  if (!window.days.includes(weekday)) return false;
  const minute = (wallClock(at.getTime(), timeZone) - midnight) / MINUTE;
  return minute >= window.start && minute < window.end;
}

/**
 * The first instant at or after `at` that lies inside the window: `at` itself when it does. Each local day's start
 * and end are found as wall-clock times, so a switch to or from summer time moves neither.
 */
export function nextWindowStart(at: Date, window: SendWindow, timeZone: string): Date {
  if (window.days.length === 0) throw new Error('a send window needs at least one day');
  const time = at.getTime();
  const { midnight } = localDay(time, timeZone);
  // Eight local days hold a window day of any week, whatever day `at` is on.
  for (let day = 0; day <= 7; day += 1) {
    const date = midnight + day * DAY;
    const weekday = ((new Date(date).getUTCDay() + 6) % 7) + 1;
    if (!window.days.includes(weekday)) continue;
    const start = instantOf(date + window.start * MINUTE, timeZone);
    if (time < start) return new Date(start);
    if (time < instantOf(date + window.end * MINUTE, timeZone)) return at;
  }
  throw new Error('unreachable: a week holds every window day');
}

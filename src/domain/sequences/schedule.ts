// Business-day arithmetic for follow-ups (DESIGN §13): a step waits `waitDays` business days (Monday to Friday) after
// the previous e-mail of the thread went out, counted on the calendar of a time zone, at the same local time of day.
// The send window (DESIGN §14, src/domain/sending/) then holds the delivery to the window; this only says the day.

const WEEKDAY = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 } as const;

interface LocalTime { year: number; month: number; day: number; hour: number; minute: number; second: number; ms: number }

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function localTime(at: Date, timeZone: string): LocalTime {
  const parts = Object.fromEntries(formatter(timeZone).formatToParts(at).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year), month: Number(parts.month), day: Number(parts.day),
    hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second), ms: at.getUTCMilliseconds(),
  };
}

/** The instant that reads as `local` in `timeZone` (the later one of a repeated hour; a skipped hour moves on). */
function instantOf(local: LocalTime, timeZone: string): Date {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.ms);
  let guess = wall;
  // Two corrections settle every offset change; the offset is what the zone reads at the guess minus UTC.
  for (let i = 0; i < 2; i += 1) {
    const seen = localTime(new Date(guess), timeZone);
    const offset = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute, seen.second, seen.ms) - guess;
    guess = wall - offset;
  }
  return new Date(guess);
}

/** True for a time zone name the runtime knows (IANA). */
export function isTimeZone(name: string): boolean {
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * `days` business days after `from`, at the same local time of day in `timeZone`: one business day after Friday (or
 * Saturday) 10:00 is Monday 10:00.
 */
export function addBusinessDays(from: Date, days: number, timeZone = 'UTC'): Date {
  const local = localTime(from, timeZone);
  const day = new Date(Date.UTC(local.year, local.month - 1, local.day));
  let left = days;
  while (left > 0) {
    day.setUTCDate(day.getUTCDate() + 1);
    const weekday = day.getUTCDay();
    if (weekday !== WEEKDAY.Sat && weekday !== WEEKDAY.Sun) left -= 1;
  }
  return instantOf({ ...local, year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() }, timeZone);
}

/** How long before its due time a follow-up is written: a person has a day to review it before it is due. */
export const WRITE_AHEAD_MS = 24 * 60 * 60_000;

/** When the scheduler writes a follow-up due at `dueAt`: a day ahead, but never before `now`. */
export function writeTimeOf(dueAt: Date, now: Date): Date {
  return new Date(Math.max(now.getTime(), dueAt.getTime() - WRITE_AHEAD_MS));
}

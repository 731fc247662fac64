// When a reply was written, as its Date header says: apart from dates.ts, so that the model classifier (on the worker's
// event loop) reads it without loading chrono-node, which only the CPU pool's threads need.

/** When the reply was written: the instant, and the UTC offset its sender wrote it in. */
export interface Written {
  instant: Date;
  offsetMinutes: number;
}

/** The instant and offset a Date header names; `fallback` (the time it was received) when it names none. */
export function writtenAt(dateHeader: string | null, fallback: Date): Written {
  const header = (dateHeader ?? '').slice(0, 200);
  const instant = new Date(header);
  if (!header || Number.isNaN(instant.getTime())) return { instant: fallback, offsetMinutes: 0 };
  const zone = /([+-])(\d{2}):?(\d{2})\s*(?:\([^()]{0,60}\))?\s*$/.exec(header);
  const offsetMinutes = zone ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  return { instant, offsetMinutes: Math.abs(offsetMinutes) <= 14 * 60 ? offsetMinutes : 0 };
}

/** `2026-03-14`: the calendar day of `instant` at `offsetMinutes` from UTC. */
export function dayAt(instant: Date, offsetMinutes: number): string {
  return new Date(instant.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 10);
}

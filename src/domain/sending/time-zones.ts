// IANA time zone names (DESIGN §14): a lead's and a workspace's. A name is known when the platform's time zone data
// (Intl, ICU) has it, canonical or an alias (`Asia/Calcutta` as well as `Asia/Kolkata`); offsets (`+02:00`) and
// abbreviations (`CET` aside, which is a zone) are not IANA names and are refused.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-]*(?:\/[A-Za-z0-9_+\-]+){0,2}$/;
export const TIME_ZONE_MAX = 64;
export const TIME_ZONE_MESSAGE = 'must be an IANA time zone name such as Europe/Berlin';

const known = new Map<string, string | null>();

/** The zone's name as the platform spells it (`europe/berlin` is `Europe/Berlin`), or null for an unknown one. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length > TIME_ZONE_MAX || !ZONE_NAME.test(name)) return null;
  const cached = known.get(name);
  if (cached !== undefined) return cached;
  let canonical: string | null;
  try {
    canonical = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    canonical = null;
  }
  // Bounded: only names of the zone pattern get here, and the platform knows a few hundred.
  if (canonical !== null || known.size < 2000) known.set(name, canonical);
  return canonical;
}

export const isTimeZone = (name: string) => canonicalTimeZone(name) !== null;

/** Every canonical zone the platform knows, for a form's choices. */
export function timeZones(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];
}

// Small checks shared by the domain and the HTTP schemas.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

// The instants every part of leadrun keeps as they were given: written as YYYY-MM-DDTHH:mm:ss.sssZ (years up to
// 9999), stored by PostgreSQL and PGlite alike (a year past 9999 fails in PGlite), and read back faithfully (PGlite
// reads the years 1 to 99 as 19xx or 20xx). A margin below: nothing leadrun records happened before year 1000.
const EARLIEST_INSTANT = Date.parse('1000-01-01T00:00:00.000Z');
const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** A real instant (not an Invalid Date) that the database stores and gives back: years 1000 to 9999, in UTC. */
export function isStorableInstant(date: Date): boolean {
  const time = date.getTime();
  return time >= EARLIEST_INSTANT && time <= LATEST_INSTANT;
}

// The WHATWG HTML definition of a valid e-mail address (what <input type=email> accepts), with a dot required
// in the domain: a lead's address must be one an e-mail can be sent to.
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/** An absolute http or https URL with a host. */
export function isWebUrl(value: string): boolean {
  if (value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

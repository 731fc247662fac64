// What a lead import may hold and how a file's columns are read as lead fields: the limits, the header matching
// and the explicit column mapping (`map=email:Work E-mail`). Plain functions without imports, so that the web UI's
// import page can show the very mapping the server will apply.

/** The largest file an import reads, in bytes. */
export const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
/** The most rows of leads one import takes (blank rows are not counted). */
export const IMPORT_MAX_ROWS = 50_000;
/** The most columns a file's header row may name. */
export const IMPORT_MAX_COLUMNS = 1_000;
/** The most row errors an answer lists; `errorCount` gives them all. */
export const IMPORT_LISTED_ERRORS = 1_000;

/** What a column of a file can be read as: a lead's field, or half of its name. */
export const IMPORT_FIELDS = ['name', 'firstName', 'lastName', 'email', 'companyName', 'companyWebsite', 'status', 'assignedToUserId', 'timeZone'] as const;
export type ImportField = (typeof IMPORT_FIELDS)[number];

/** An explicit mapping: the header of the column to read each field from, or null to read that field from none. */
export type ColumnMap = Partial<Record<ImportField, string | null>>;

/** A header as headers are compared: lower case, without spaces, `_` and `-` ("E-mail" and "email" are one). */
export function normaliseHeader(header: string): string {
  return header.toLowerCase().replace(/[\s_-]+/g, '');
}

/** The headers each field is recognised by, normalised. */
const SYNONYMS: Record<ImportField, readonly string[]> = {
  // Close's and Zoho's "Contact Name", Pipedrive's "Person - Name". Not "Lead Name": see companyName.
  name: ['name', 'fullname', 'contactname', 'personname'],
  firstName: ['firstname', 'givenname', 'forename', 'first'],
  lastName: ['lastname', 'surname', 'familyname', 'last'],
  // Apollo's "Email" and "Email 1"; Salesforce's and HubSpot's "Work Email"; Pipedrive's "Person - Email" and
  // "Person - Email - Work" (its "- Home" and "- Other" are left, as they are not the address to sell to); Close's
  // "Contact Email".
  email: [
    'email', 'emailaddress', 'mail', 'workemail', 'email1', 'primaryemail', 'businessemail', 'personemail',
    'personemailwork', 'contactemail',
  ],
  // Apollo's "Company Name for Emails" (after its "Company"), Salesforce's "Account Name", Pipedrive's
  // "Organization - Name" and "Person - Organization". Close's "Lead Name" too: a lead in Close is the company, its
  // people are the lead's contacts (elsewhere a lead is a person, so "Lead Name" is no longer read as the name; a
  // file whose only name column it is is refused for want of one, and map=name:Lead Name reads it so).
  companyName: [
    'company', 'companyname', 'organisation', 'organization', 'employer', 'companynameforemails', 'accountname',
    'organizationname', 'organisationname', 'personorganization', 'leadname',
  ],
  companyWebsite: ['website', 'companywebsite', 'url', 'web', 'homepage', 'companyurl', 'websiteurl'],
  status: ['status', 'leadstatus'],
  assignedToUserId: ['assignedtouserid', 'assignedto', 'assignee'],
  // HubSpot's "Time Zone", Apollo's "Timezone"; an IANA name, checked as POST /api/v1/leads checks it.
  timeZone: ['timezone', 'tz', 'ianatimezone', 'leadtimezone', 'contacttimezone'],
};

const FIELD_OF_HEADER = new Map<string, ImportField>(
  IMPORT_FIELDS.flatMap((field) => SYNONYMS[field].map((header) => [header, field] as [string, ImportField])),
);

/**
 * Headers read as the status only when the file has no status column, and then only if their values turn out to be
 * statuses: Apollo's "Stage" holds Cold, Approaching, Replied, which are Apollo's and not a lead's status; HubSpot's
 * "Lifecycle Stage" holds subscriber, lead, marketingqualifiedlead; Pipedrive's "Deal - Stage" holds its pipeline's
 * stages, of which the default pipeline's first, Qualified, is one.
 */
const TENTATIVE_STATUS = new Set(['stage', 'leadstage', 'lifecyclestage', 'dealstage']);

/**
 * Headers that are ignored by name, whatever a synonym might one day match in them: a profile's address is not the
 * company's website, and the columns leadrun's export adds for people are not written back. Close's "Display Name"
 * is its lead's, that is the company's, name, or a contact's when the lead has none, while an address book's is a
 * person's: which one a file holds cannot be told, so it is read only when mapped (map=name:Display Name).
 */
export const IGNORED_HEADERS: ReadonlySet<string> = new Set([
  'personlinkedinurl', 'companylinkedinurl', 'linkedinurl', 'linkedin', 'twitterurl', 'facebookurl',
  'ownername', 'owneremail', 'lastcontactedat', 'lastreplyat', 'createdat', 'updatedat', 'displayname',
]);

/** The field a header names by itself, or null. */
export function fieldOfHeader(header: string): ImportField | null {
  const normal = normaliseHeader(header);
  return IGNORED_HEADERS.has(normal) ? null : FIELD_OF_HEADER.get(normal) ?? null;
}

export interface MappingProblem {
  field: string;
  message: string;
}

/**
 * Reads `map` entries, each `FIELD:COLUMN` (`email:Work E-mail`; `status:` reads no column as the status). The
 * field is matched forgivingly, like a header.
 */
export function parseColumnMap(entries: readonly string[]): { map: ColumnMap; problems: MappingProblem[] } {
  const map: ColumnMap = {};
  const problems: MappingProblem[] = [];
  const byName = new Map(IMPORT_FIELDS.map((field) => [normaliseHeader(field), field]));
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const field = colon < 0 ? undefined : byName.get(normaliseHeader(entry.slice(0, colon)));
    if (!field) {
      problems.push({ field: 'map', message: `must be FIELD:COLUMN, where FIELD is one of ${IMPORT_FIELDS.join(', ')}` });
      continue;
    }
    if (field in map) {
      problems.push({ field: 'map', message: `maps ${field} more than once` });
      continue;
    }
    const header = entry.slice(colon + 1).trim();
    map[field] = header === '' ? null : header;
  }
  return { map, problems };
}

/**
 * Which field each column is read as (null: ignored). Columns the mapping names come first: each found by its exact
 * header, else by its normalised one. Every other column is recognised by its header, the first of two columns
 * with the same meaning winning; a field the mapping sets to null is read from no column.
 */
export function matchColumns(headers: readonly string[], map: ColumnMap = {}): {
  fields: Array<ImportField | null>;
  problems: MappingProblem[];
  /** The column read as the status only if its values are statuses (a "Stage" column), or null. */
  tentativeStatus: number | null;
} {
  const fields: Array<ImportField | null> = headers.map(() => null);
  const normalisedHeaders = headers.map(normaliseHeader);
  const problems: MappingProblem[] = [];
  const taken = new Set<ImportField>();
  for (const field of IMPORT_FIELDS) {
    if (!(field in map)) continue;
    taken.add(field);
    const wanted = map[field];
    if (wanted === null || wanted === undefined) continue;
    let index = headers.indexOf(wanted);
    if (index < 0) {
      index = normalisedHeaders.indexOf(normaliseHeader(wanted));
    }
    if (index < 0) problems.push({ field: 'map', message: `${field}: the file has no column "${wanted}"` });
    else if (fields[index] !== null) problems.push({ field: 'map', message: `${field}: the column "${wanted}" is already read as ${fields[index]}` });
    else fields[index] = field;
  }
  normalisedHeaders.forEach((header, index) => {
    if (fields[index] !== null || IGNORED_HEADERS.has(header)) return;
    const field = FIELD_OF_HEADER.get(header);
    if (field && !taken.has(field)) {
      fields[index] = field;
      taken.add(field);
    }
  });
  let tentativeStatus: number | null = null;
  if (!taken.has('status')) {
    const index = normalisedHeaders.findIndex((header, i) => fields[i] === null && TENTATIVE_STATUS.has(header));
    if (index >= 0) {
      fields[index] = 'status';
      tentativeStatus = index;
    }
  }
  return { fields, problems, tentativeStatus };
}

/** The most distinct unknown values an import warns of; the rows of others are imported all the same. */
export const IMPORT_LISTED_WARNINGS = 100;

/**
 * Reads `statusMap` entries, each `VALUE:STATUS` (`Cold:DISCOVERY`; the last colon splits, since a value may hold
 * one). VALUE is compared without case or surrounding spaces, as the file's statuses are; STATUS must be one of
 * `statuses`.
 */
export function parseStatusMap(entries: readonly string[], statuses: readonly string[]): {
  map: Record<string, string>;
  problems: MappingProblem[];
} {
  const map: Record<string, string> = {};
  const problems: MappingProblem[] = [];
  for (const entry of entries) {
    const colon = entry.lastIndexOf(':');
    const value = colon < 0 ? '' : entry.slice(0, colon).trim().toUpperCase();
    const status = colon < 0 ? '' : entry.slice(colon + 1).trim().toUpperCase();
    if (value === '' || !statuses.includes(status)) {
      const message = `must be VALUE:STATUS, where STATUS is one of ${statuses.join(', ')}`;
      problems.push({ field: 'statusMap', message });
    } else if (Object.hasOwn(map, value)) {
      problems.push({ field: 'statusMap', message: `maps "${value}" more than once` });
    } else {
      map[value] = status;
    }
  }
  return { map, problems };
}

/** Whether the columns give each row a name: a name column, or first and last name columns (either suffices). */
export function hasNameColumn(fields: ReadonlyArray<ImportField | null>): boolean {
  return fields.some((field) => field === 'name' || field === 'firstName' || field === 'lastName');
}

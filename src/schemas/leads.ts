// Leads: the lead itself, what creates and changes one, the list filters and the import's request and result.
import { Type } from 'typebox';
import {
  IMPORT_FIELDS, IMPORT_LISTED_ERRORS, IMPORT_LISTED_WARNINGS, IMPORT_MAX_COLUMNS, IMPORT_MAX_ROWS,
} from '../domain/lead-import-format.ts';
import { NOT_BLANK_PATTERN } from '../domain/validation.ts';
import { Nullable, MESSAGE_MAX, Int32, Int64, Timestamp, Id, EMAIL_MAX } from './common.ts';

export const LEAD_STATUSES = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'] as const;
export const SEARCH_MAX_LENGTH = 200;
export const SEARCH_MAX_WORDS = 10;
/** The value of `assignedToUserId` that asks for the leads assigned to nobody. */
export const UNASSIGNED = 'none';

export const LeadStatus = Type.Enum(LEAD_STATUSES, { description: 'Where the lead stands.' });

export const Lead = Type.Object({
  id: Id('Identifier of the lead.'),
  name: Type.String({ maxLength: 200, description: 'Person name of the lead.' }),
  email: Nullable(Type.String({ format: 'idn-email', maxLength: EMAIL_MAX })),
  companyName: Nullable(Type.String({ maxLength: 200 })),
  companyWebsite: Nullable(Type.String({ format: 'uri', maxLength: 2048 })),
  status: LeadStatus,
  assignedToUserId: Nullable(Id('The user the lead is assigned to.')),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  lastContactedAt: Nullable(Timestamp('When an e-mail to the lead was last sent (DESIGN §7).')),
  lastReplyAt: Nullable(Timestamp('When the lead last replied to a sent e-mail (DESIGN §7).')),
  timeZone: Nullable(Type.String({
    maxLength: 64, examples: ['Europe/Berlin'],
    description: 'The lead\'s IANA time zone: follow-ups leave inside the send window in it (DESIGN §14); null for the workspace\'s.',
  })),
  doNotContact: Type.Optional(Type.Literal(true, {
    description: '"Do not contact": present (true) when the lead\'s address or domain is on the suppression list, so nothing is '
      + 'delivered to it; left out otherwise. Shown where a lead is read (a lead, a page of leads), not in webhook events.',
  })),
  nextActionAt: Nullable(Timestamp('When the lead is next to be contacted: the day a "not now" reply named (DESIGN §16), from its start in UTC.')),
}, { $id: 'Lead' });

const leadFields = {
  name: Type.String({ maxLength: 200, pattern: NOT_BLANK_PATTERN, description: 'Person name of the lead; not blank.' }),
  email: Nullable(Type.String({ format: 'idn-email', maxLength: EMAIL_MAX })),
  companyName: Nullable(Type.String({ maxLength: 200 })),
  companyWebsite: Nullable(Type.String({
    format: 'website', maxLength: 2048,
    description: 'An absolute http or https URL, or a bare host (`www.example.com`, `example.com/about`), which is '
      + 'stored as `https://` and the host.',
  })),
  status: LeadStatus,
  assignedToUserId: Nullable(Type.String({ format: 'uuid', maxLength: 36, description: 'A user of the same workspace.' })),
  timeZone: Nullable(Type.String({
    format: 'time-zone', maxLength: 64, examples: ['America/New_York'],
    description: 'An IANA time zone name (`Europe/Berlin`; aliases such as `Asia/Calcutta` too), stored as the server '
      + 'spells it; null for the workspace\'s zone. An unknown name is refused.',
  })),
};

export const LeadCreate = Type.Object({
  name: leadFields.name,
  email: Type.Optional(leadFields.email),
  companyName: Type.Optional(leadFields.companyName),
  companyWebsite: Type.Optional(leadFields.companyWebsite),
  status: Type.Optional(leadFields.status),
  assignedToUserId: Type.Optional(leadFields.assignedToUserId),
  timeZone: Type.Optional(leadFields.timeZone),
}, { additionalProperties: false });

export const LeadUpdate = Type.Object({
  name: Type.Optional(leadFields.name),
  email: Type.Optional(leadFields.email),
  companyName: Type.Optional(leadFields.companyName),
  companyWebsite: Type.Optional(leadFields.companyWebsite),
  status: Type.Optional(leadFields.status),
  assignedToUserId: Type.Optional(leadFields.assignedToUserId),
  timeZone: Type.Optional(leadFields.timeZone),
}, { additionalProperties: false, minProperties: 1 });

/** The filters of GET /api/v1/leads, its count and its export: the same leads are listed, counted and exported. */
export const LeadFilters = {
  q: Type.Optional(Type.String({
    maxLength: SEARCH_MAX_LENGTH,
    description: `Words (at most ${SEARCH_MAX_WORDS}, split on whitespace) each of which must appear inside the name, e-mail or company, `
      + 'whatever the case and accents: `north` finds Northwind, `angstrom` finds Ångström. A blank `q` finds every lead.',
  })),
  status: Type.Optional(LeadStatus),
  assignedToUserId: Type.Optional(Type.Union([
    Type.String({ format: 'uuid', maxLength: 36 }),
    Type.Literal(UNASSIGNED),
  ], { type: 'string', maxLength: 36, description: `The leads assigned to this user, or \`${UNASSIGNED}\` for the leads assigned to nobody.` })),
};

export const LeadCount = Type.Object({
  count: Int64({ minimum: 0, description: 'How many leads the filters find.' }),
});

/**
 * A JSON lead import: each lead as POST /api/v1/leads takes it. The rows are validated one by one, against LeadCreate
 * itself (src/domain/leads/import-file.ts), and a row that fails is answered in `errors` of a 200, not refused: so the
 * document puts no schema on a row. With LeadCreate there, a tool that checks requests against the document (Prism,
 * a fuzzer) would call such a request invalid and expect the 4xx the server never gives.
 */
export const LeadImportJson = Type.Object({
  leads: Type.Array(Type.Unknown({
    description: 'A lead as `POST /api/v1/leads` takes it (`name`, and `email`, `companyName`, `companyWebsite`, '
      + '`status`, `assignedToUserId`, `timeZone` as it has them). A row that is not one is skipped and reported in `errors`, by '
      + 'its index.',
  }), { maxItems: IMPORT_MAX_ROWS, description: `The leads, at most ${IMPORT_MAX_ROWS.toLocaleString('en')}.` }),
}, { additionalProperties: false });

export const LeadImportQuery = Type.Object({
  dedupe: Type.Optional(Type.Enum(['email'], {
    description: 'With `email`, a row whose e-mail is that of a lead already there (compared case-insensitively) updates that lead '
      + 'instead of creating a second; rows of the file with one e-mail make one lead, the later rows updating it.',
  })),
  dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Read and check everything, write nothing, and answer the same counts.' })),
  map: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), {
    maxItems: IMPORT_FIELDS.length,
    description: 'CSV only: read a field from a column of your choice, as `FIELD:COLUMN` (`map=email:Work E-mail`); `FIELD:` '
      + `reads that field from no column. FIELD is one of ${IMPORT_FIELDS.join(', ')}. Repeat for more fields; the other `
      + 'columns are matched by their headers.',
  })),
  statusMap: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), {
    maxItems: IMPORT_LISTED_WARNINGS,
    description: 'CSV only: read a status value of the file that is not a lead status as one, as `VALUE:STATUS` '
      + '(`statusMap=Cold:DISCOVERY`, `statusMap=Contact in Future:CONTACTED`); VALUE is compared without case or '
      + `surrounding spaces, and STATUS is one of ${LEAD_STATUSES.join(', ')}. Repeat for more values; an unknown `
      + 'value that is not mapped gives the lead the default status, and a warning.',
  })),
});

export const LeadImportResult = Type.Object({
  created: Int32({
    minimum: 0,
    description: 'Rows that created a lead. To a key without `leads:read`: every row written, created or updated.',
  }),
  updated: Int32({
    minimum: 0,
    description: 'Rows that updated a lead (with `dedupe=email`): one already there, or one an earlier row created. '
      + 'Always 0 to a key without `leads:read`: it would say which e-mails are leads already.',
  }),
  skipped: Int32({ minimum: 0, description: 'Invalid rows, left out; `errors` says why.' }),
  errors: Type.Array(Type.Object({
    row: Int32({
      minimum: 0,
      description: 'CSV: the row as a spreadsheet numbers it (the header is row 1, the first lead row 2; a cell over several lines is '
        + 'still one row). JSON: the index of the lead in `leads`, from 0.',
    }),
    field: Type.String({ maxLength: 100, description: 'The lead field, or `(row)` for the row as a whole.' }),
    message: Type.String({ maxLength: MESSAGE_MAX, description: 'What is wrong, in the words of POST /api/v1/leads.' }),
  }), { maxItems: IMPORT_LISTED_ERRORS, description: `What is wrong with each skipped row, in row order: the first ${IMPORT_LISTED_ERRORS.toLocaleString('en')}.` }),
  errorCount: Int32({ minimum: 0, description: 'How many entries `errors` would have in all.' }),
  warnings: Type.Array(Type.Object({
    field: Type.String({ maxLength: 100, description: 'The lead field: `status`.' }),
    value: Type.String({ maxLength: 200, description: 'The value as the file holds it (its first 200 characters).' }),
    rows: Int32({ minimum: 1, description: 'How many rows hold it.' }),
    message: Type.String({
      maxLength: MESSAGE_MAX, description: 'What the import did with those rows, and how to choose otherwise.',
    }),
  }), {
    maxItems: IMPORT_LISTED_WARNINGS,
    description: 'CSV: each distinct value the import could not read as written, once (the first '
      + `${IMPORT_LISTED_WARNINGS}): a status that is not a lead status. Its rows were imported with the default `
      + 'status; '
      + 'map it with `statusMap`. Empty for JSON, whose statuses are checked as `POST /api/v1/leads` checks them.',
  }),
  rows: Int32({ minimum: 0, description: 'Rows of leads read: created + updated + skipped. Blank rows are not counted.' }),
  dryRun: Type.Boolean({ description: 'True when nothing was written: the counts say what the import would do.' }),
  columns: Nullable(Type.Array(Type.Object({
    header: Type.String({ maxLength: 200, description: 'The header of the column (its first 200 characters).' }),
    field: Nullable(Type.Enum(IMPORT_FIELDS, { description: 'What the column was read as; null for a column that was ignored.' })),
  }), { maxItems: IMPORT_MAX_COLUMNS, description: 'CSV: how each column was read, in order. Null for JSON.' })),
}, { $id: 'LeadImportResult' });

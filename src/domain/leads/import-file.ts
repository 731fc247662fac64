// Reading a lead import: a file's bytes (CSV or JSON) into rows of leads, each validated as POST /api/v1/leads
// validates its body (the same LeadCreate schema and messages). This is CPU work over a stranger's file: it runs in
// a CPU pool thread (src/cpu/tasks.ts), in time linear in the file's size, and it answers with data rather than
// exceptions, since an error's class does not cross the thread boundary.
import type { ValidateFunction } from 'ajv';
import { parse as parseCsv } from 'csv-parse/sync';
import type { CsvError } from 'csv-parse';
import { CELLS_SPLIT, csvDelimiterOf, type CsvRecord, holdsText, isCsvError, readCsvRecords, rowOfCsvError } from '../csv-records.ts';
import type { FieldError } from '../errors.ts';
import { LEAD_STATUSES } from '../../schemas/leads.ts';
import { websiteUrl } from '../validation.ts';
import {
  hasNameColumn, IMPORT_LISTED_ERRORS, IMPORT_LISTED_WARNINGS, IMPORT_MAX_BYTES, IMPORT_MAX_COLUMNS, IMPORT_MAX_ROWS,
  matchColumns,
  type ColumnMap, type ImportField,
} from '../lead-import-format.ts';
import { LeadCreate, LeadImportJson } from '../../schemas/leads.ts';
import { bodyValidator, fieldErrorsOf } from '../validators.ts';
import { canonicalTimeZone } from '../sending/time-zones.ts';

export interface ImportFileInput {
  format: 'csv' | 'json';
  bytes: Uint8Array;
  /** The explicit column mapping (CSV). */
  map: ColumnMap;
  /** CSV: the status each unknown status value is read as, keyed by the value in upper case (`statusMap`). */
  statusMap?: Record<string, string>;
  /** With `dedupe=email`, the rows with one e-mail become one lead. */
  dedupe: boolean;
  /** The ids of the workspace's users: a row's assignedToUserId must be one of them. */
  userIds: string[];
}

export interface ImportRowError {
  row: number;
  field: string;
  message: string;
}

/** A value the import read other than as written: each distinct one once, with how many rows hold it. */
export interface ImportWarning {
  field: string;
  value: string;
  rows: number;
  message: string;
}

export interface ImportColumn {
  header: string;
  field: ImportField | null;
}

/** A file read: its valid rows, ready for the database, and what is wrong with the others. */
export interface ReadImport {
  ok: true;
  /** Rows of leads read (blank rows left out). */
  rows: number;
  skipped: number;
  /** The first IMPORT_LISTED_ERRORS errors, in row order. */
  errors: ImportRowError[];
  errorCount: number;
  warnings: ImportWarning[];
  columns: ImportColumn[] | null;
  /**
   * The valid rows as JSON arrays of lead records (IMPORT_WRITE_BATCH in each) in the database's column names,
   * holding only the fields a row gives (a null clears a field on update). With dedupe, the rows of one e-mail are
   * merged into one record, later rows' fields winning; `n` counts them and `key` is the e-mail in lower case.
   */
  records: string[];
  recordCount: number;
  /** Every assignedToUserId of the valid rows, once each. */
  assignees: string[];
}

/** A file refused as a whole. */
export interface RefusedImport {
  ok: false;
  code: 'invalid_request' | 'payload_too_large';
  message: string;
  errors: FieldError[];
}

export type ImportFileResult = ReadImport | RefusedImport;

/** The database record of a valid row (src/domain/leads/import.ts writes it). */
export interface LeadRecord {
  n: number;
  key?: string;
  name?: string;
  email?: string | null;
  company_name?: string | null;
  company_website?: string | null;
  status?: string;
  assigned_to_user_id?: string | null;
  time_zone?: string | null;
}

const COLUMN_OF = {
  name: 'name', email: 'email', companyName: 'company_name', companyWebsite: 'company_website', status: 'status', assignedToUserId: 'assigned_to_user_id',
  timeZone: 'time_zone',
} as const satisfies Partial<Record<ImportField, keyof LeadRecord>>;

const STATUSES: ReadonlySet<string> = new Set(LEAD_STATUSES);

/** The fields whose cells are read as written; the others are trimmed. */
const KEPT_AS_WRITTEN: ReadonlySet<ImportField> = new Set(['name', 'companyName']);

// What a spreadsheet would run as a formula, which an export (leadrun's, with csv-stringify's escape_formulas, and
// others') writes with an apostrophe before it. Read back, the apostrophe goes: "'=1+1" was "=1+1" before export.
// leadrun's export also puts one before a cell that is apostrophes and then one of these ("'=x" is written "''=x"),
// so that what it writes reads back as it was.
const ESCAPED_FORMULA = /^'+[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** A cell as it was before an export defused it. */
function unescapedCell(cell: string): string {
  return ESCAPED_FORMULA.test(cell) ? cell.slice(1) : cell;
}

// The NUL character cannot be stored in PostgreSQL text; POST /api/v1/leads refuses it with these words.
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const HEADER_SHOWN = 200;
/**
 * Records per statement of the write. PGlite runs a statement on the thread that answers HTTP, which answers nothing
 * meanwhile: 50,000 rows in one statement held it for seconds, a thousand for 60-130 ms on a quiet machine, 250 for
 * 15-25 ms. PostgreSQL takes a few more round trips.
 */
export const IMPORT_WRITE_BATCH = 250;
const MiB = 1024 * 1024;

let leadValidator: ValidateFunction | null = null;
let envelopeValidator: ValidateFunction | null = null;

/** Compiles the validators now rather than within the first import (a CPU pool thread does it as it starts). */
export function prepareImportReading(): void {
  validateLead();
  validateEnvelope();
}

/** LeadCreate, compiled once per thread. */
function validateLead(): ValidateFunction {
  leadValidator ??= bodyValidator().compile(LeadCreate);
  return leadValidator;
}

/** LeadImportJson without its items' schema and row limit: the items are validated one by one, the limit is a 413. */
function validateEnvelope(): ValidateFunction {
  if (!envelopeValidator) {
    const { items: _items, maxItems: _maxItems, ...list } = LeadImportJson.properties.leads as unknown as Record<string, unknown>;
    envelopeValidator = bodyValidator().compile({ ...LeadImportJson, properties: { leads: list } });
  }
  return envelopeValidator;
}

/** Text from a stranger, made safe to answer with and to store as JSON: well-formed, without NUL, short. */
function shown(text: string, max = HEADER_SHOWN): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return cut.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

function refused(code: RefusedImport['code'], message: string, errors: FieldError[] = []): RefusedImport {
  return { ok: false, code, message, errors };
}

const tooManyRows = () => refused('payload_too_large',
  `The import has more than ${IMPORT_MAX_ROWS.toLocaleString('en')} rows of leads, the most one import takes; split it into several.`);

/** Collects the rows: validates each, keeps the valid ones as records, the errors of the others. */
class Rows {
  rows = 0;
  skipped = 0;
  errors: ImportRowError[] = [];
  errorCount = 0;
  readonly #records: LeadRecord[] = [];
  readonly #byKey = new Map<string, LeadRecord>();
  readonly #assignees = new Set<string>();
  readonly #users: Set<string>;
  readonly #dedupe: boolean;

  constructor(input: ImportFileInput) {
    this.#users = new Set(input.userIds.map((id) => id.toLowerCase()));
    this.#dedupe = input.dedupe;
  }

  /** One row of leads: `lead` is what POST /api/v1/leads would have been sent. */
  add(row: number, lead: Record<string, unknown>, rowErrors: FieldError[] = []): void {
    this.rows += 1;
    const errors = [...rowErrors];
    if (lead !== null && typeof lead === 'object' && !Array.isArray(lead)) {
      for (const [field, value] of Object.entries(lead)) {
        if (typeof value === 'string' && value.includes('\u0000')) errors.push({ field, message: NUL_MESSAGE });
      }
    }
    const validate = validateLead();
    if (!validate(lead)) errors.push(...fieldErrorsOf(validate.errors ?? [], '(row)'));
    const assignee = typeof lead?.assignedToUserId === 'string' ? lead.assignedToUserId.toLowerCase() : null;
    if (errors.length === 0 && assignee !== null && !this.#users.has(assignee)) {
      errors.push({ field: 'assignedToUserId', message: 'is not a user of this workspace' });
    }
    if (errors.length > 0) {
      this.skipped += 1;
      this.errorCount += errors.length;
      for (const error of errors) {
        if (this.errors.length >= IMPORT_LISTED_ERRORS) break;
        this.errors.push({ row, field: shown(error.field), message: shown(error.message, 500) });
      }
      return;
    }
    if (assignee !== null) this.#assignees.add(assignee);
    this.#keep(lead);
  }

  #keep(lead: Record<string, unknown>): void {
    const record: LeadRecord = { n: 1 };
    for (const [field, column] of Object.entries(COLUMN_OF)) {
      if (!Object.hasOwn(lead, field)) continue;
      const value = lead[field] as string | null;
      // A JSON string may hold a lone surrogate, which PostgreSQL's JSON refuses; the API stores it as U+FFFD.
      (record as unknown as Record<string, string | null>)[column] = typeof value === 'string' ? value.toWellFormed() : value;
    }
    if (record.assigned_to_user_id) record.assigned_to_user_id = record.assigned_to_user_id.toLowerCase();
    // A bare host (www.example.com) is stored as the API stores it: https:// and the host.
    if (record.company_website) record.company_website = websiteUrl(record.company_website);
    if (record.time_zone) record.time_zone = canonicalTimeZone(record.time_zone);
    const key = this.#dedupe && typeof record.email === 'string' ? record.email.toLowerCase() : null;
    const earlier = key === null ? undefined : this.#byKey.get(key);
    if (earlier) {
      const { n } = earlier;
      Object.assign(earlier, record, { n: n + 1 });
      return;
    }
    if (key !== null) {
      record.key = key;
      this.#byKey.set(key, record);
    }
    this.#records.push(record);
  }

  result(columns: ImportColumn[] | null, warnings: ImportWarning[] = []): ReadImport {
    return {
      ok: true,
      rows: this.rows,
      skipped: this.skipped,
      errors: this.errors,
      errorCount: this.errorCount,
      warnings,
      columns,
      records: Array.from({ length: Math.ceil(this.#records.length / IMPORT_WRITE_BATCH) },
        (_, i) => JSON.stringify(this.#records.slice(i * IMPORT_WRITE_BATCH, (i + 1) * IMPORT_WRITE_BATCH))),
      recordCount: this.#records.length,
      assignees: [...this.#assignees],
    };
  }
}

/** Reads an import file. Never throws for anything the file holds. */
export function readImportFile(input: ImportFileInput): ImportFileResult {
  if (input.bytes.byteLength > IMPORT_MAX_BYTES) {
    return refused('payload_too_large', `The file is larger than ${IMPORT_MAX_BYTES / MiB} MiB, the most one import takes; split it into several.`);
  }
  let text: string;
  try {
    // Strips a byte order mark; anything that is not UTF-8 is refused rather than read as something it is not.
    text = new TextDecoder('utf-8', { fatal: true }).decode(input.bytes);
  } catch {
    return refused('invalid_request', `The file is not UTF-8 text (line ${lineOfFirstInvalidByte(input.bytes)} is not); `
      + 'save it as "CSV UTF-8" (or export it as UTF-8) and import it again.', [{ field: '(body)', message: 'is not UTF-8 text' }]);
  }
  return input.format === 'json' ? readJson(text, input) : readCsv(text, input);
}

function lineOfFirstInvalidByte(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const at = text.indexOf('\uFFFD');
  let line = 1;
  for (let i = 0; i < at; i++) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

// ---- JSON ----------------------------------------------------------------------------------------------------

function readJson(text: string, input: ImportFileInput): ImportFileResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refused('invalid_request', 'The request body is not valid JSON.', [{ field: '(body)', message: 'is not valid JSON' }]);
  }
  const leads = (body as { leads?: unknown } | null)?.leads;
  if (Array.isArray(leads) && leads.length > IMPORT_MAX_ROWS) return tooManyRows();
  const validate = validateEnvelope();
  if (!validate(body)) {
    const errors = fieldErrorsOf(validate.errors ?? [], '(body)').map((e) => ({ field: shown(e.field), message: e.message }));
    return refused('invalid_request', `The request body is invalid: ${errors.slice(0, 5).map((e) => `${e.field} ${e.message}`).join('; ')}.`, errors);
  }
  const rows = new Rows(input);
  (leads as unknown[]).forEach((lead, index) => rows.add(index, lead as Record<string, unknown>));
  return rows.result(null);
}

// ---- CSV -----------------------------------------------------------------------------------------------------

/** Stops the CSV parser from inside its record callback, with the answer to give. */
class Stop {
  readonly answer: RefusedImport;
  constructor(answer: RefusedImport) {
    this.answer = answer;
  }
}

/** The answer to a file csv-parse stops reading: a quote where the file's quotes cannot be read. */
function unreadable(error: CsvError): RefusedImport {
  // The record being read when it stopped: the records before it, and the empty lines passed over.
  const row = rowOfCsvError(error);
  const problem = (message: string, short: string, field = '(body)') => refused('invalid_request', message, [{ field, message: short }]);
  if (Number(error.column) === CELLS_SPLIT - 1 && error.code !== 'CSV_QUOTE_NOT_CLOSED') {
    const header = Number(error.records) === 0;
    return problem(`Row ${row} has more than ${IMPORT_MAX_COLUMNS.toLocaleString('en')} cells, and a quote among those past them; `
      + `an import reads at most ${IMPORT_MAX_COLUMNS.toLocaleString('en')} columns.`,
    header ? `has more than ${IMPORT_MAX_COLUMNS} columns` : `row ${row} has more than ${IMPORT_MAX_COLUMNS} cells`, header ? '(header)' : '(body)');
  }
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return problem(`Row ${row} opens a quoted cell that is never closed: the file ends inside it. `
        + 'Close the quote (a quote inside a quoted cell is written twice: "").', `row ${row} opens a quote that is never closed`);
    case 'INVALID_OPENING_QUOTE':
      return problem(`Row ${row} has a quote inside a cell that does not begin with one. Put that cell in quotes and write `
        + 'each quote inside it twice ("5"" screen" for 5" screen).', `row ${row} has a quote inside an unquoted cell`);
    case 'CSV_INVALID_CLOSING_QUOTE':
      return problem(`Row ${row} has text after the quote that closes a quoted cell. A quote inside a quoted cell is written `
        + 'twice (""), and a quoted cell ends at a delimiter or the end of the line.', `row ${row} has text after a closing quote`);
    default:
      return problem(`Row ${row} cannot be read as CSV: ${shown(error.message, 300)}`, `row ${row} cannot be read as CSV`);
  }
}

function readCsv(text: string, input: ImportFileInput): ImportFileResult {
  if (!/\S/.test(text)) {
    return refused('invalid_request', 'The file is empty: it needs a header row that names the columns, then a row per lead.',
      [{ field: '(body)', message: 'is empty' }]);
  }
  const delimiter = csvDelimiterOf(text);
  const rows = new Rows(input);
  const file: {
    headers: string[] | null;
    fields: Array<ImportField | null>;
    /** The columns read, as [index, field]: a row costs the few of them, however many columns it has. */
    read: Array<[number, ImportField]>;
    /** The records read under the header, blank or not. */
    records: number;
    /** The column read as the status only if its values are statuses, and how many of its values were. */
    tentativeStatus: number | null;
    statuses: number;
  } = { headers: null, fields: [], read: [], records: 0, tentativeStatus: null, statuses: 0 };
  const statusMap = input.statusMap ?? {};
  // Keyed by the value in upper case, as statusMap matches it: "Cold" and "COLD" are one value, shown as first met.
  const unknown = new Map<string, ImportWarning>();
  const unknownStatus = (value: string) => {
    const key = value.toUpperCase();
    const known = unknown.get(key);
    if (known) known.rows += 1;
    else if (unknown.size < IMPORT_LISTED_WARNINGS) {
      const shownValue = shown(value);
      unknown.set(key, {
        field: 'status', value: shownValue, rows: 1,
        message: `is not a lead status: imported as ${LEAD_STATUSES[0]} `
          + '(with dedupe=email, an existing lead keeps its own); '
          + `choose one with statusMap=${shownValue}:STATUS`,
      });
    }
  };

  const onRecord = ({ cells, row, width }: CsvRecord): void => {
    if (file.headers === null) {
      if (width > IMPORT_MAX_COLUMNS) {
        throw new Stop(refused('invalid_request', `The header row has ${width.toLocaleString('en')} columns; an import reads at most `
          + `${IMPORT_MAX_COLUMNS.toLocaleString('en')}.`, [{ field: '(header)', message: `has more than ${IMPORT_MAX_COLUMNS} columns` }]));
      }
      const headers = cells.map((cell) => cell.trim());
      file.headers = headers;
      const matched = matchColumns(headers, input.map);
      if (matched.problems.length > 0) {
        throw new Stop(refused('invalid_request', `The column mapping does not fit the file: ${matched.problems.map((p) => shown(p.message)).join('; ')}.`,
          matched.problems.map((p) => ({ field: p.field, message: shown(p.message) }))));
      }
      file.fields = matched.fields;
      file.tentativeStatus = matched.tentativeStatus;
      if (!hasNameColumn(file.fields)) {
        const found = headers.slice(0, 20).map((h) => `"${shown(h, 40)}"`).join(', ');
        throw new Stop(refused('invalid_request', `No column of the file holds the leads' names (its columns: ${found}${headers.length > 20 ? ', …' : ''}). `
          + 'Name one "name" or "full name", or two "first name" and "last name", or map one with map=name:COLUMN.',
        [{ field: 'name', message: 'is in no column of the file' }]));
      }
      file.read = file.fields.flatMap((field, index) => (field ? [[index, field] as [number, ImportField]] : []));
      return;
    }
    // Every record counts, blank or not (empty lines aside): csv-parse builds an error object for each record whose
    // cell count differs from the header's, so the records it reads, not only the rows of leads, must be bounded.
    file.records += 1;
    if (file.records > IMPORT_MAX_ROWS) throw new Stop(tooManyRows());
    if (!holdsText(cells, 0, delimiter)) return;
    const given: Partial<Record<ImportField, string>> = {};
    let blankName: string | null = null;
    for (const [index, field] of file.read) {
      const cell = unescapedCell(cells[index] ?? '');
      // A name and a company are kept as written, spaces and all, as POST /api/v1/leads keeps them: an export read
      // back gives the leads it was made of. The other fields are trimmed, as a space there would only be refused.
      if (KEPT_AS_WRITTEN.has(field)) {
        if (field === 'name' && cell !== '' && !/\S/.test(cell)) blankName = cell;
        else if (cell !== '') given[field] = cell;
      } else if (/\S/.test(cell)) {
        given[field] = cell.trim();
      }
    }
    const lead: Record<string, unknown> = {};
    const name = given.name ?? [given.firstName, given.lastName].filter(Boolean).join(' ');
    if (name !== '') lead.name = name;
    // A name of spaces alone is refused as POST /api/v1/leads refuses it ("must not be blank"), not taken for none.
    else if (blankName !== null) lead.name = blankName;
    if (given.email !== undefined) lead.email = given.email;
    if (given.companyName !== undefined) lead.companyName = given.companyName;
    if (given.companyWebsite !== undefined) lead.companyWebsite = given.companyWebsite;
    // A spreadsheet's "Qualified" is the API's QUALIFIED. Another CRM's status (Apollo's "Cold", "Contact in
    // Future") is read through statusMap, or else left out, so that the lead is imported with the default status
    // and the value reported once among the warnings, rather than the row refused.
    if (given.status !== undefined) {
      const value = given.status.toUpperCase();
      const status = Object.hasOwn(statusMap, value) ? statusMap[value] : STATUSES.has(value) ? value : undefined;
      if (status !== undefined) {
        lead.status = status;
        file.statuses += 1;
      } else {
        unknownStatus(given.status);
      }
    }
    if (given.assignedToUserId !== undefined) lead.assignedToUserId = given.assignedToUserId;
    if (given.timeZone !== undefined) lead.timeZone = given.timeZone;
    const columns = file.headers.length;
    const extra = width > columns && holdsText(cells, columns, delimiter)
      ? [{ field: '(row)', message: `has ${width} cells, more than the ${columns} columns of the header row` }]
      : [];
    rows.add(row, lead, extra);
  };

  try {
    readCsvRecords(parseCsv, Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength), delimiter, onRecord);
  } catch (error) {
    if (error instanceof Stop) return error.answer;
    if (isCsvError(error)) return unreadable(error);
    throw error;
  }
  const { headers, fields } = file;
  if (headers === null) return refused('invalid_request', 'The file has no header row.', [{ field: '(body)', message: 'has no header row' }]);
  // A "Stage" column none of whose values is a status (or mapped to one) was not the leads' status: it is reported as
  // ignored, and its values are no warnings. No lead took a status from it.
  if (file.tentativeStatus !== null && file.statuses === 0) {
    fields[file.tentativeStatus] = null;
    unknown.clear();
  }
  const columns = headers.map((header, index) => ({ header: shown(header), field: fields[index] ?? null }));
  return rows.result(columns, [...unknown.values()]);
}

// What the import page knows of a file of leads, read the way the server reads it: csv-parse (its browser build)
// with the server's own options, delimiter and row numbers (src/domain/csv-records.ts), and the server's header
// matching and column mapping (lead-import-format.ts), so the preview, the mapping shown and the row numbers of bad
// rows are what the import applies. It imports nothing else, so that Node's tests can load it as it is.
import { parse } from 'csv-parse/browser/esm/sync';
import { csvDelimiterOf, holdsText, isCsvError, readCsvRecords, rowOfCsvError, type CsvDelimiter } from '../../../src/domain/csv-records.ts';
import {
  hasNameColumn, IMPORT_FIELDS, IMPORT_MAX_BYTES, IMPORT_MAX_COLUMNS, matchColumns, parseColumnMap, type ImportField,
} from '../../../src/domain/lead-import-format.ts';

export { hasNameColumn, IMPORT_FIELDS, IMPORT_MAX_BYTES, matchColumns, type CsvDelimiter, type ImportField };

/** How much of a CSV file the preview reads: the start only, however large the file. */
export const PREVIEW_BYTES = 64 * 1024;
/** Rows of leads the preview shows. */
export const PREVIEW_ROWS = 10;
/** The longest `map` entry the API takes (`FIELD:COLUMN`). */
const MAP_ENTRY_MAX = 300;

export type ImportFormat = 'csv' | 'json';

export const FIELD_LABEL: Record<ImportField, string> = {
  name: 'Name',
  firstName: 'First name',
  lastName: 'Last name',
  email: 'E-mail',
  companyName: 'Company',
  companyWebsite: 'Website',
  status: 'Status',
  assignedToUserId: 'Assigned to (user id)',
  timeZone: 'Time zone',
};

/** A problem's field as a person reads it: `email` is "E-mail", `(row)` the row as a whole. */
export function fieldLabel(field: string): string {
  if (field === '(row)') return 'Row';
  return (FIELD_LABEL as Record<string, string>)[field] ?? field;
}

/** The format of a chosen file by its name (or its type), or null for neither CSV nor JSON. */
export function formatOf(file: { name: string; type: string }): ImportFormat | null {
  const name = file.name.toLowerCase();
  if (name.endsWith('.csv') || (!name.includes('.') && file.type === 'text/csv')) return 'csv';
  if (name.endsWith('.json') || (!name.includes('.') && file.type === 'application/json')) return 'json';
  return null;
}

/** A size as "512 bytes", "48.2 KiB", "10 MiB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  return `${value.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}

/** Why a file cannot be imported as it is chosen (before anything is sent), or null. */
export function refusalOf(file: { name: string; type: string; size: number }): string | null {
  if (formatOf(file) === null) return `“${file.name}” is neither a CSV nor a JSON file. Choose a .csv file (as a spreadsheet saves it) or a .json file.`;
  if (file.size > IMPORT_MAX_BYTES) {
    const size = formatBytes(file.size) === formatBytes(IMPORT_MAX_BYTES) ? `${file.size.toLocaleString('en')} bytes` : formatBytes(file.size);
    return `“${file.name}” is ${size}; an import takes at most ${formatBytes(IMPORT_MAX_BYTES)}. Split it into several files.`;
  }
  if (file.size === 0) return `“${file.name}” is empty.`;
  return null;
}

/** Whether bytes are UTF-8, as far as they go: a character cut at their end (the preview's cut) is not an error. */
export function isUtf8Start(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

export interface PreviewRow {
  /** The row as a spreadsheet numbers it, as the server's errors do. */
  row: number;
  cells: string[];
}

export interface CsvPreview {
  delimiter: CsvDelimiter;
  /** The header row's cells, trimmed as the server trims them. */
  headers: string[];
  rows: PreviewRow[];
  /** Whether the file has rows beyond those shown. */
  more: boolean;
  /** What the server will refuse the whole file for, when the start of it tells. */
  problem: string | null;
}

/**
 * How the columns of a previewed file are first read: as the server matches them, except a "Stage" column (read as
 * the status only if its values are statuses) none of whose previewed values is one of `statuses`: Apollo's Stage
 * holds Cold and Replied, which are not a lead's status. It is then shown ignored, and can still be chosen.
 */
export function initialFields(preview: CsvPreview, statuses: readonly string[]): Array<ImportField | null> {
  const { fields, tentativeStatus } = matchColumns(preview.headers);
  if (tentativeStatus === null) return fields;
  const isStatus = (cell: string | undefined) => statuses.includes((cell ?? '').trim().toUpperCase());
  const known = preview.rows.some(({ cells }) => isStatus(cells[tentativeStatus]));
  return known ? fields : fields.map((field, index) => (index === tentativeStatus ? null : field));
}

class Enough {}

/**
 * The header and the first rows of leads of a CSV file, from its start (`text`, the whole file when `complete`).
 * Blank rows are left out, as the server leaves them out; a record the cut may have shortened is not shown.
 */
export function previewCsv(text: string, complete: boolean, maxRows = PREVIEW_ROWS): CsvPreview {
  const delimiter = csvDelimiterOf(text);
  let headers: string[] | null = null;
  const rows: PreviewRow[] = [];
  let more = false;
  let problem: string | null = null;
  let cutShort = !complete;
  try {
    readCsvRecords(parse, text, delimiter, ({ cells, row }) => {
      if (headers === null) {
        headers = cells.map((cell) => cell.trim());
        return;
      }
      if (!holdsText(cells, 0, delimiter)) return;
      if (rows.length === maxRows) {
        more = true;
        throw new Enough();
      }
      rows.push({ row, cells });
    });
  } catch (error) {
    if (isCsvError(error) && error.code === 'CSV_QUOTE_NOT_CLOSED') {
      // Cut inside a quoted cell: every record before it is whole. In the whole file, the server refuses it.
      if (complete) problem = `Row ${rowOfCsvError(error)} opens a quoted cell that is never closed: the file ends inside it.`;
      else more = true;
      cutShort = false;
    } else if (error instanceof Enough) {
      cutShort = false;
    } else {
      throw error;
    }
  }
  if (cutShort && rows.length > 0) {
    // The last record read ran into the cut: it may be the start of a longer one.
    rows.pop();
    more = true;
  }
  if (headers === null || (headers as string[]).every((header) => header === '')) {
    return { delimiter, headers: [], rows: [], more: false, problem: problem ?? 'The file has no header row: its first row must name the columns.' };
  }
  const found = headers as string[];
  if (found.length > IMPORT_MAX_COLUMNS) problem = `The header row has ${found.length} columns; an import reads at most ${IMPORT_MAX_COLUMNS}.`;
  return { delimiter, headers: found, rows, more, problem };
}

/** The `map` query entries that make the server read each column as `fields` says (null: ignored). */
export function mapEntries(headers: readonly string[], fields: ReadonlyArray<ImportField | null>): string[] {
  return IMPORT_FIELDS.map((field) => {
    const index = fields.indexOf(field);
    return `${field}:${index < 0 ? '' : headers[index]}`;
  });
}

/**
 * Why the server would not read the columns as `fields` says with the entries of mapEntries, or null when it
 * would: the entries go through the server's own parseColumnMap and matchColumns and must come back as `fields`.
 */
export function mappingProblem(headers: readonly string[], fields: ReadonlyArray<ImportField | null>): string | null {
  for (const [index, field] of fields.entries()) {
    if (field === null) continue;
    const header = headers[index] ?? '';
    if (header === '') return `Column ${index + 1} has no header, so it cannot be read as ${FIELD_LABEL[field]}: name it in the file, or ignore it.`;
    if (field.length + 1 + header.length > MAP_ENTRY_MAX) return `The header of column ${index + 1} is too long to be chosen as ${FIELD_LABEL[field]}: shorten it in the file.`;
  }
  const { map, problems: parsed } = parseColumnMap(mapEntries(headers, fields));
  const { fields: applied, problems } = matchColumns(headers, map);
  const problem = [...parsed, ...problems][0];
  if (problem) return `The column mapping does not fit the file: ${problem.message}.`;
  const differs = applied.findIndex((field, index) => field !== fields[index]);
  if (differs >= 0) {
    const field = fields[differs] ?? applied[differs]!;
    return `Two columns are named “${headers[differs]}”: only the first of them can be read as ${FIELD_LABEL[field]}. Rename one in the file.`;
  }
  if (!hasNameColumn(fields)) return 'Choose the column that holds each lead’s name (Name, or First name and Last name).';
  return null;
}

/** A new choice for one column: a field chosen here is taken from the column that had it. */
export function chooseField(fields: ReadonlyArray<ImportField | null>, index: number, field: ImportField | null): Array<ImportField | null> {
  return fields.map((current, i) => (i === index ? field : field !== null && current === field ? null : current));
}

export interface RowProblem {
  row: number;
  problems: Array<{ field: string; message: string }>;
}

/** The import's errors, one entry per row, in row order. */
export function groupByRow(errors: ReadonlyArray<{ row: number; field: string; message: string }>): RowProblem[] {
  const byRow = new Map<number, RowProblem>();
  for (const { row, field, message } of errors) {
    let entry = byRow.get(row);
    if (!entry) {
      entry = { row, problems: [] };
      byRow.set(row, entry);
    }
    entry.problems.push({ field, message });
  }
  return [...byRow.values()].sort((a, b) => a.row - b.row);
}

/** Rows of a file picked by number: CSV rows as their cells, JSON leads (numbered from 0) as they are. */
export type FileRows =
  | { format: 'csv'; delimiter: CsvDelimiter; header: string[]; rows: Map<number, string[]> }
  | { format: 'json'; rows: Map<number, unknown> };

/**
 * The rows `wanted` of a whole file's text, in one pass that stops once they are all found. The CSV header comes
 * with them, as the file has it. Throws for a file the server refuses as a whole (it then answered no rows).
 */
export function pickRows(text: string, format: ImportFormat, wanted: ReadonlySet<number>): FileRows {
  if (format === 'json') {
    const leads = (JSON.parse(text) as { leads?: unknown } | null)?.leads;
    const rows = new Map<number, unknown>();
    if (Array.isArray(leads)) for (const index of wanted) if (index < leads.length) rows.set(index, leads[index]);
    return { format, rows };
  }
  const delimiter = csvDelimiterOf(text);
  let header: string[] = [];
  const rows = new Map<number, string[]>();
  try {
    let headerRead = false;
    readCsvRecords(parse, text, delimiter, ({ cells, row }) => {
      if (!headerRead) {
        header = cells;
        headerRead = true;
        return;
      }
      if (wanted.has(row)) rows.set(row, cells);
      if (rows.size === wanted.size) throw new Enough();
    });
  } catch (error) {
    if (!(error instanceof Enough)) throw error;
  }
  return { format, delimiter, header, rows };
}

/** A CSV cell as written back: quoted when it holds the delimiter, a quote or a line end. */
function csvCell(cell: string, delimiter: string): string {
  return cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/**
 * A file of the bad rows, to fix and import again: for CSV the header and the rows, in the file's delimiter, with a
 * byte order mark so that a spreadsheet opens it as UTF-8; for JSON `{"leads": […]}`.
 */
export function badRowsFile(rows: FileRows, order: readonly number[]): { text: string; type: string; extension: string } {
  if (rows.format === 'json') {
    const leads = order.filter((row) => rows.rows.has(row)).map((row) => rows.rows.get(row));
    return { text: `${JSON.stringify({ leads }, null, 2)}\n`, type: 'application/json', extension: 'json' };
  }
  const records = [rows.header, ...order.flatMap((row) => { const cells = rows.rows.get(row); return cells ? [cells] : []; })];
  const lines = records.map((cells) => cells.map((cell) => csvCell(cell, rows.delimiter)).join(rows.delimiter));
  return { text: `\uFEFF${lines.join('\r\n')}\r\n`, type: 'text/csv;charset=utf-8', extension: 'csv' };
}

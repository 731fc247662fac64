// Reading a CSV file of leads record by record with csv-parse, the same way on the server (its Node build, in a CPU
// pool thread) and in the web UI's import page (its browser build): the delimiter, the options, the row numbers and
// the cell bounds are decided here once, so that the preview, the bad rows and the import agree. The parse function
// is passed in, and nothing else is imported, so that either side can load this file as it is.
import type { CsvError, InfoRecord, Options } from 'csv-parse';
import { IMPORT_MAX_COLUMNS } from './lead-import-format.ts';

export type CsvDelimiter = ',' | ';' | '\t';

/** csv-parse's `parse` of `csv-parse/sync` or `csv-parse/browser/esm/sync`. */
export type CsvParse = (input: string | Uint8Array, options: Options) => unknown;

/** A record as read: its cells, its row as a spreadsheet numbers it (the header is row 1), and its cell count. */
export interface CsvRecord {
  cells: string[];
  row: number;
  width: number;
}

/**
 * The delimiter of the file: the one of comma, semicolon and tab that the header row holds most often outside
 * quotes (a comma when none is there).
 */
export function csvDelimiterOf(text: string): CsvDelimiter {
  const counts: Record<CsvDelimiter, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (!quoted) {
      if (c === 10 || c === 13) break;
      if (c === 44) counts[','] += 1;
      else if (c === 59) counts[';'] += 1;
      else if (c === 9) counts['\t'] += 1;
    }
  }
  return (Object.keys(counts) as CsvDelimiter[]).reduce((best, d) => (counts[d] > counts[best] ? d : best), ',');
}

/**
 * The most cells csv-parse separates in a record: past them, the rest of the record is left in its last cell,
 * delimiters and all (its `ignore_last_delimiters`), so that a row of ten million cells costs the strings of a
 * thousand. One more than a header may have columns, to tell a header that has too many.
 */
export const CELLS_SPLIT = IMPORT_MAX_COLUMNS + 1;

/** What makes the last cell of a record split at CELLS_SPLIT more than white space and delimiters. */
const TEXT_IN_REST: Record<CsvDelimiter, RegExp> = { ',': /[^\s,]/, ';': /[^\s;]/, '\t': /\S/ };

/** How many cells a record has: those of its last cell too when the record was split at CELLS_SPLIT. */
export function widthOf(cells: readonly string[], delimiter: CsvDelimiter): number {
  if (cells.length < CELLS_SPLIT) return cells.length;
  const rest = cells[CELLS_SPLIT - 1]!;
  let width = CELLS_SPLIT;
  for (let at = rest.indexOf(delimiter); at >= 0; at = rest.indexOf(delimiter, at + 1)) width += 1;
  return width;
}

/** Whether any cell of the record from `from` on holds more than white space. */
export function holdsText(cells: readonly string[], from: number, delimiter: CsvDelimiter): boolean {
  for (let i = from; i < cells.length; i++) {
    if ((i === CELLS_SPLIT - 1 ? TEXT_IN_REST[delimiter] : /\S/).test(cells[i]!)) return true;
  }
  return false;
}

/** The row at which csv-parse stopped with this error: the records before it, the empty lines passed over, and 1. */
export function rowOfCsvError(error: CsvError): number {
  return Number(error.records) + Number(error.empty_lines) + 1;
}

/** csv-parse's error, from either of its builds (each has a CsvError class of its own): a code, and where it stopped. */
export function isCsvError(error: unknown): error is CsvError {
  const fields = error as { code?: unknown; records?: unknown; empty_lines?: unknown } | null;
  return error instanceof Error && typeof fields?.code === 'string' && typeof fields.records === 'number' && typeof fields.empty_lines === 'number';
}

/**
 * Reads `input` record by record into `onRecord`, each handled and dropped (the file is never held as records).
 * `onRecord` may throw to stop. Throws csv-parse's CsvError where the file's quotes cannot be read.
 */
export function readCsvRecords(parse: CsvParse, input: string | Uint8Array, delimiter: CsvDelimiter, onRecord: (record: CsvRecord) => void): void {
  parse(input, {
    bom: true,
    delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    // Rows may have fewer or more cells than the header; the import tells which matter.
    relax_column_count: true,
    // A quote inside an unquoted cell, or text after a closing quote, is refused with its row rather than kept:
    // csv-parse keeps the latter by copying the whole of its cell buffer, as large as the largest cell read so far,
    // so that rows of `"x"y` after a 4 MiB cell would take it minutes.
    relax_quotes: false,
    // An empty line is a blank row, passed over by the parser itself: it costs no record.
    skip_empty_lines: true,
    ignore_last_delimiters: CELLS_SPLIT,
    on_record: (cells: string[], info: InfoRecord) => {
      // The row as a spreadsheet numbers it: the records before (the header is the first) and the empty lines.
      onRecord({ cells, row: info.records + info.empty_lines, width: widthOf(cells, delimiter) });
      return null;
    },
  } as Options);
}

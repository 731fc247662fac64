// Reading CSV text record by record, in time linear in its length whatever it holds. (csv-parse builds an error
// object, with a stack trace and copies of its state, for every record whose cell count differs from the first
// record's, even when told to accept them: about 8 µs a record, so that 10 MiB of short ragged rows took it some
// 40 s. Here each character is looked at once and a record costs its cells.) It imports nothing, so that the web UI's
// import page reads a file's first rows, and finds its bad rows, exactly as the server does.

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** The text ends inside a quoted cell, which opened on record `row`. */
export class CsvQuoteNotClosed extends Error {
  readonly row: number;
  constructor(row: number) {
    super(`the quoted cell opened on row ${row} is never closed`);
    this.name = 'CsvQuoteNotClosed';
    this.row = row;
  }
}

export interface CsvRecord {
  /** The record's cells, at most `maxCells` of them. */
  cells: string[];
  /** The record's number, from 1: a quoted cell over several lines leaves it one record, as a spreadsheet shows it. */
  row: number;
  /** How many cells the record has, those not kept included. */
  width: number;
  /** Whether a cell beyond `maxCells` holds more than white space. */
  droppedText: boolean;
}

/**
 * Calls `onRecord` with each record of `text`: cells separated by `delimiter`, records ended by CRLF, LF or CR. A cell
 * in double quotes may hold delimiters, line ends and doubled quotes (`""`). Forgiving as spreadsheets are: a quote
 * inside an unquoted cell is an ordinary character, and text after a closing quote is kept. An empty line is a
 * record of one empty cell; a line end at the very end of the text starts no record. Only the first `maxCells` cells
 * of a record are kept, so that a record of millions of cells costs no more memory than one of `maxCells`.
 * Throws CsvQuoteNotClosed when the text ends inside a quoted cell.
 */
export function readCsvRecords(text: string, delimiter: string, maxCells: number, onRecord: (record: CsvRecord) => void): void {
  const separator = delimiter.charCodeAt(0);
  const length = text.length;
  /** Where the next delimiter or line end is, from `from` on (the text's length when there is none). */
  const boundary = (from: number): number => {
    for (let j = from; j < length; j++) {
      const c = text.charCodeAt(j);
      if (c === separator || c === LF || c === CR) return j;
    }
    return length;
  };
  let record: CsvRecord = { cells: [], row: 1, width: 0, droppedText: false };
  const add = (cell: string): void => {
    record.width += 1;
    if (record.cells.length < maxCells) record.cells.push(cell);
    else if (!record.droppedText && cell.trim() !== '') record.droppedText = true;
  };
  let i = 0;
  while (i < length) {
    let cell: string;
    if (text.charCodeAt(i) === QUOTE) {
      const parts: string[] = [];
      let start = i + 1;
      for (;;) {
        const quote = text.indexOf('"', start);
        if (quote < 0) throw new CsvQuoteNotClosed(record.row);
        if (text.charCodeAt(quote + 1) !== QUOTE) {
          parts.push(text.slice(start, quote));
          i = quote + 1;
          break;
        }
        // A doubled quote: the text up to it, with one quote.
        parts.push(text.slice(start, quote + 1));
        start = quote + 2;
      }
      const end = boundary(i);
      parts.push(text.slice(i, end));
      cell = parts.join('');
      i = end;
    } else {
      const end = boundary(i);
      cell = text.slice(i, end);
      i = end;
    }
    add(cell);
    if (i >= length) break;
    const c = text.charCodeAt(i);
    if (c === separator) {
      i += 1;
      // A delimiter at the very end of the text is followed by one more, empty, cell.
      if (i === length) add('');
      continue;
    }
    i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
    onRecord(record);
    record = { cells: [], row: record.row + 1, width: 0, droppedText: false };
  }
  if (record.width > 0) onRecord(record);
}

export type CsvDelimiter = ',' | ';' | '\t';

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

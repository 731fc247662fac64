// A suppression list's CSV file (DESIGN §15), read in a CPU pool thread (src/cpu/tasks.ts): csv-parse, bounded in
// size and rows. The column named `email` (or `domain`) is read; a file without such a header is one address or
// domain per row. A cell with an @ is an address, one without a domain.
import { parse } from 'csv-parse/sync';
import { csvDelimiterOf } from '../csv-records.ts';
import { emailProblem } from '../validation.ts';

export const SUPPRESSION_IMPORT_MAX_BYTES = 2 * 1024 * 1024;
export const SUPPRESSION_IMPORT_MAX_ROWS = 50_000;

export interface SuppressionFile {
  emails: string[];
  domains: string[];
  /** Rows naming neither. */
  invalid: number;
  /** Rows past the most one import takes. */
  tooMany: boolean;
  /** JSON that is not `{"entries": [...]}`. */
  malformed: boolean;
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** What one cell names: an address, a domain, or nothing. */
export function entryOf(cell: string): { email: string } | { domain: string } | null {
  const value = cell.trim().toLowerCase().replace(/^mailto:/, '');
  if (value.includes('@')) return emailProblem(value) === null ? { email: value } : null;
  const domain = value.replace(/^\*?\.|\.$/g, '');
  return DOMAIN.test(domain) ? { domain } : null;
}

/** A file as sent: CSV, or JSON `{"entries": ["ada@example.com", "example.org"]}`. The task `readSuppressionFile`. */
export function readSuppressionFile({ format, bytes }: { format: 'csv' | 'json'; bytes: Uint8Array }): SuppressionFile {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/^\uFEFF/, '');
  return format === 'csv' ? readCsv(text) : readJson(text);
}

function readJson(text: string): SuppressionFile {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { emails: [], domains: [], invalid: 0, tooMany: false, malformed: true };
  }
  const entries = (body as { entries?: unknown } | null)?.entries ?? [];
  if (!Array.isArray(entries)) return { emails: [], domains: [], invalid: 0, tooMany: false, malformed: true };
  return collect(entries.slice(0, SUPPRESSION_IMPORT_MAX_ROWS + 1).map((entry) => [typeof entry === 'string' ? entry : '']), [0]);
}

function readCsv(text: string): SuppressionFile {
  let records: string[][];
  try {
    records = parse(text.slice(0, SUPPRESSION_IMPORT_MAX_BYTES), {
      delimiter: csvDelimiterOf(text), relax_column_count: true, skip_empty_lines: true, to: SUPPRESSION_IMPORT_MAX_ROWS + 2,
    }) as string[][];
  } catch {
    // An unclosed quote, a stray one inside a cell: csv-parse says where; the file as a whole is refused.
    return { emails: [], domains: [], invalid: 0, tooMany: false, malformed: true };
  }
  const header = (records[0] ?? []).map((cell) => cell.trim().toLowerCase());
  const emailColumn = header.findIndex((cell) => cell === 'email' || cell === 'e-mail' || cell === 'address');
  const domainColumn = header.indexOf('domain');
  // Without a header naming one, every row is an entry in its first cell; an export has both columns.
  if (emailColumn < 0 && domainColumn < 0) return collect(records, [0]);
  return collect(records.slice(1), [emailColumn, domainColumn].filter((c) => c >= 0));
}

/** The addresses and domains of the rows (the first of `columns` with text in each), each once. */
function collect(rows: string[][], columns: number[]): SuppressionFile {
  const file: SuppressionFile = { emails: [], domains: [], invalid: 0, tooMany: rows.length > SUPPRESSION_IMPORT_MAX_ROWS, malformed: false };
  const emails = new Set<string>();
  const domains = new Set<string>();
  for (const row of rows.slice(0, SUPPRESSION_IMPORT_MAX_ROWS)) {
    const cell = columns.map((c) => row[c]?.trim() ?? '').find((text) => text !== '') ?? '';
    const entry = entryOf(cell);
    if (!entry) file.invalid += 1;
    else if ('email' in entry) emails.add(entry.email);
    else domains.add(entry.domain);
  }
  file.emails = [...emails];
  file.domains = [...domains];
  return file;
}

// The file being imported: what its start says (a preview, or why the server will refuse it), the rows picked from it
// by a worker thread, and the files the page offers to download.
import type { ResponseOf } from '../../api/client';
import {
  formatOf, isUtf8Start, PREVIEW_BYTES, previewCsv, type CsvPreview, type FileRows, type ImportFormat,
} from '../../lib/leadImport';
import type { PickAnswer, PickRequest } from '../../lib/importRows.worker';

export type ImportResult = ResponseOf<'post', '/api/v1/leads/import'>;

/** A status value of the file that is not a lead status, as a check answered it, and how many rows hold it. */
export interface UnknownStatus {
  value: string;
  rows: number;
}

/** Bad rows shown on the page; the download holds every one the answer lists. */
export const SHOWN_BAD_ROWS = 200;

export interface Chosen {
  file: File;
  format: ImportFormat;
  /** CSV: the header and first rows. */
  csv: CsvPreview | null;
  /** JSON: the first leads, and how many there are. */
  json: { leads: unknown[]; count: number } | null;
  /** What the server will refuse the whole file for, as far as its start tells. */
  problem: string | null;
}

export type Progress = { dryRun: boolean; sent: number; total: number; uploaded: boolean };

export interface Outcome {
  result: ImportResult;
  /** The file's bad rows, read from it after the answer; null while they are read. */
  rows: FileRows | null;
  rowsError: string | null;
}

export async function readChosen(file: File): Promise<Chosen> {
  const format = formatOf(file)!;
  if (format === 'csv') {
    const bytes = new Uint8Array(await file.slice(0, PREVIEW_BYTES).arrayBuffer());
    if (!isUtf8Start(bytes)) {
      return { file, format, csv: null, json: null, problem: 'The file is not UTF-8 text. Save it from your spreadsheet as “CSV UTF-8” and choose it again.' };
    }
    // The decoder drops a byte order mark, as the server's does.
    const csv = previewCsv(new TextDecoder('utf-8').decode(bytes), file.size <= PREVIEW_BYTES);
    return { file, format, csv, json: null, problem: csv.problem };
  }
  // JSON is read whole (the browser's parser is native and linear); it is at most 10 MiB.
  try {
    const body = JSON.parse(await file.text()) as { leads?: unknown } | null;
    if (!body || !Array.isArray(body.leads)) {
      return { file, format, csv: null, json: null, problem: 'The file is not of the form {"leads": [ … ]}.' };
    }
    return { file, format, csv: null, json: { leads: body.leads.slice(0, 10), count: body.leads.length }, problem: null };
  } catch {
    return { file, format, csv: null, json: null, problem: 'The file is not valid JSON.' };
  }
}

/** The rows of `file` numbered `rows`, read by a worker thread. */
export function pickRowsInWorker(request: PickRequest, signal: AbortSignal): Promise<FileRows> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('../../lib/importRows.worker.ts', import.meta.url), { type: 'module' });
    const done = () => worker.terminate();
    signal.addEventListener('abort', done, { once: true });
    worker.onmessage = ({ data }: MessageEvent<PickAnswer>) => {
      done();
      if (data.ok) resolve(data.rows);
      else reject(new Error(data.message));
    };
    worker.onerror = (event) => {
      done();
      reject(new Error(event.message || 'The file could not be read.'));
    };
    worker.postMessage(request);
  });
}

export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function stem(name: string): string {
  return name.replace(/\.[^.]*$/, '') || 'leads';
}

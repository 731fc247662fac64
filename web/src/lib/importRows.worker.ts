// Reads a whole file of leads (up to 10 MiB) off the page's thread and sends back the rows asked for by number: the
// bad rows an import reported, to show and to download.
import { pickRows, type FileRows, type ImportFormat } from './leadImport.ts';

export interface PickRequest {
  file: Blob;
  format: ImportFormat;
  rows: number[];
}

export type PickAnswer = { ok: true; rows: FileRows } | { ok: false; message: string };

const scope = self as unknown as { onmessage: ((event: MessageEvent<PickRequest>) => void) | null; postMessage(answer: PickAnswer): void };

scope.onmessage = async ({ data }) => {
  try {
    // A byte order mark is dropped, as the server drops it.
    const text = new TextDecoder('utf-8').decode(await data.file.arrayBuffer());
    scope.postMessage({ ok: true, rows: pickRows(text, data.format, new Set(data.rows)) });
  } catch (error) {
    scope.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
};

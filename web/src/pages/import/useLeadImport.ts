// The import page's state as one reducer: the file chosen and what its start says, the column mapping, the options,
// the upload under way, and the answer with the bad rows picked from the file. Every change of the file, the mapping
// or the options forgets the answer of an earlier check (and stops an upload under way).
import { useEffect, useReducer, useRef } from 'react';
import { upload } from '../../api/client';
import { LEAD_STATUSES, type LeadStatus } from '../../api/types';
import { initialFields, mapEntries, mappingProblem, refusalOf, type ImportField } from '../../lib/leadImport';
import { pickRowsInWorker, readChosen, type Chosen, type Outcome, type Progress, type UnknownStatus } from './chosenFile';

export interface ImportState {
  chosen: Chosen | null;
  reading: boolean;
  /** Why the file chosen cannot be imported at all (its name or size). */
  refusal: string | null;
  fields: Array<ImportField | null>;
  dedupe: boolean;
  /**
   * The file's status values that are not lead statuses, from the answers to checks (a value once mapped is no longer
   * in an answer's warnings, and stays listed), and the status chosen for each: sent as statusMap=VALUE:STATUS.
   */
  unknownStatuses: UnknownStatus[];
  statusMap: Record<string, LeadStatus>;
  progress: Progress | null;
  error: unknown;
  outcome: Outcome | null;
}

const INITIAL: ImportState = {
  chosen: null, reading: false, refusal: null, fields: [], dedupe: false, unknownStatuses: [], statusMap: {},
  progress: null, error: null, outcome: null,
};

/** No answer, no error, no upload: what a changed file, mapping or option starts from. */
const FORGOTTEN = { outcome: null, error: null, progress: null } as const;

type Action =
  | { type: 'choose'; refusal: string | null }
  | { type: 'read'; chosen: Chosen | null }
  | { type: 'fields'; fields: Array<ImportField | null> }
  | { type: 'dedupe'; dedupe: boolean }
  | { type: 'statusMap'; statusMap: Record<string, LeadStatus> }
  | { type: 'progress'; progress: Progress | null }
  | { type: 'failed'; error: unknown }
  | { type: 'answered'; outcome: Outcome };

function reduce(state: ImportState, action: Action): ImportState {
  switch (action.type) {
    case 'choose': return {
      ...state, ...FORGOTTEN, chosen: null, unknownStatuses: [], statusMap: {}, refusal: action.refusal, reading: action.refusal === null,
    };
    case 'read': return {
      ...state, reading: false, chosen: action.chosen,
      fields: action.chosen?.csv ? initialFields(action.chosen.csv, LEAD_STATUSES) : [],
    };
    case 'fields': return { ...state, ...FORGOTTEN, fields: action.fields };
    case 'dedupe': return { ...state, ...FORGOTTEN, dedupe: action.dedupe };
    case 'statusMap': return { ...state, ...FORGOTTEN, statusMap: action.statusMap };
    case 'progress': return { ...state, progress: action.progress };
    case 'failed': return { ...state, progress: null, error: action.error };
    case 'answered': {
      const unknown = action.outcome.result.warnings.filter((w) => w.field === 'status');
      const known = state.unknownStatuses;
      return {
        ...state, progress: null, outcome: action.outcome,
        unknownStatuses: [
          ...known,
          ...unknown.filter((w) => !known.some((k) => k.value === w.value)).map(({ value, rows }) => ({ value, rows })),
        ],
      };
    }
  }
}

export function useLeadImport() {
  const [state, dispatch] = useReducer(reduce, INITIAL);
  const work = useRef<AbortController | null>(null);
  useEffect(() => () => work.current?.abort(), []);
  const stop = () => {
    work.current?.abort();
    work.current = null;
  };

  const { chosen, fields, dedupe, statusMap } = state;
  const headers = chosen?.csv?.headers ?? [];
  const mapping = chosen?.csv && !chosen.problem ? mappingProblem(headers, fields) : null;
  const blocked = !chosen || chosen.problem !== null || mapping !== null;

  const choose = async (file: File | undefined) => {
    if (!file) return;
    stop();
    const refusal = refusalOf(file);
    dispatch({ type: 'choose', refusal });
    if (refusal) return;
    let read: Chosen | null = null;
    try {
      read = await readChosen(file);
    } finally {
      dispatch({ type: 'read', chosen: read });
    }
  };

  /** Sends the file, as a check (`dryRun`) or the import; then the file's bad rows are read for the answer. */
  const send = async (dryRun: boolean) => {
    if (!chosen || blocked) return;
    stop();
    const controller = new AbortController();
    work.current = controller;
    dispatch({ type: 'progress', progress: { dryRun, sent: 0, total: chosen.file.size, uploaded: false } });
    let result: Outcome['result'];
    try {
      ({ body: result } = await upload('/api/v1/leads/import', chosen.file, {
        contentType: chosen.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json',
        query: {
          dryRun,
          dedupe: dedupe ? 'email' : undefined,
          map: chosen.format === 'csv' ? mapEntries(headers, fields) : undefined,
          statusMap: chosen.format === 'csv'
            ? Object.entries(statusMap).map(([value, status]) => `${value}:${status}`)
            : undefined,
        },
        signal: controller.signal,
        onProgress: (sent, total) => dispatch({ type: 'progress', progress: { dryRun, sent, total, uploaded: sent >= total } }),
      }));
    } catch (caught) {
      if (!controller.signal.aborted) dispatch({ type: 'failed', error: caught });
      return;
    }
    if (controller.signal.aborted) return;
    dispatch({ type: 'answered', outcome: { result, rows: null, rowsError: null } });
    if (result.errors.length === 0) return;
    const rows = [...new Set(result.errors.map((e) => e.row))];
    try {
      const picked = await pickRowsInWorker({ file: chosen.file, format: chosen.format, rows }, controller.signal);
      if (!controller.signal.aborted) dispatch({ type: 'answered', outcome: { result, rows: picked, rowsError: null } });
    } catch (caught) {
      if (!controller.signal.aborted) {
        dispatch({ type: 'answered', outcome: { result, rows: null, rowsError: caught instanceof Error ? caught.message : String(caught) } });
      }
    }
  };

  const change = (action: Action) => {
    stop();
    dispatch(action);
  };
  return {
    ...state, headers, mapping, blocked, busy: state.progress !== null, choose, send,
    setFields: (next: Array<ImportField | null>) => change({ type: 'fields', fields: next }),
    setDedupe: (next: boolean) => change({ type: 'dedupe', dedupe: next }),
    setStatusMap: (next: Record<string, LeadStatus>) => change({ type: 'statusMap', statusMap: next }),
  };
}

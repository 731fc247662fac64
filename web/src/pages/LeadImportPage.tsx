// Import leads from a file: choose or drop a CSV (as a spreadsheet saves it) or JSON file, see its first rows and how
// each column will be read, change that, check the file without writing anything, import it, and see each bad row
// with what is wrong with it, with a file of the bad rows to fix and import again. The preview reads only the start of
// the file, with the server's own CSV reader; the column mapping shown is sent with the file, so it is the one applied.
import { useEffect, useId, useRef, useState, type ChangeEvent, type CSSProperties, type DragEvent } from 'react';
import { ApiError, upload, type ResponseOf } from '../api/client';
import { Icon } from '../components/Icon';
import { Alert, Button, Card, ErrorAlert, PageHeader, Spinner } from '../components/ui';
import { LEAD_STATUSES, type LeadStatus } from '../api/types';
import { formatNumber, LEAD_STATUS_LABEL, plural } from '../lib/format';
import {
  badRowsFile, chooseField, fieldLabel, FIELD_LABEL, formatBytes, formatOf, groupByRow, IMPORT_FIELDS, IMPORT_MAX_BYTES,
  initialFields, isUtf8Start, mapEntries, mappingProblem, PREVIEW_BYTES, previewCsv,
  type CsvPreview, type FileRows, type ImportField, type ImportFormat, refusalOf,
} from '../lib/leadImport';
import type { PickAnswer, PickRequest } from '../lib/importRows.worker';
import { Link } from '../lib/router';
import { useTitle } from '../lib/query';
import '../styles/import.css';

type ImportResult = ResponseOf<'post', '/api/v1/leads/import'>;

/** A status value of the file that is not a lead status, as a check answered it, and how many rows hold it. */
interface UnknownStatus {
  value: string;
  rows: number;
}

/** Bad rows shown on the page; the download holds every one the answer lists. */
const SHOWN_BAD_ROWS = 200;

interface Chosen {
  file: File;
  format: ImportFormat;
  /** CSV: the header and first rows. */
  csv: CsvPreview | null;
  /** JSON: the first leads, and how many there are. */
  json: { leads: unknown[]; count: number } | null;
  /** What the server will refuse the whole file for, as far as its start tells. */
  problem: string | null;
}

type Progress = { dryRun: boolean; sent: number; total: number; uploaded: boolean };

interface Outcome {
  result: ImportResult;
  /** The file's bad rows, read from it after the answer; null while they are read. */
  rows: FileRows | null;
  rowsError: string | null;
}

async function readChosen(file: File): Promise<Chosen> {
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
function pickRowsInWorker(request: PickRequest, signal: AbortSignal): Promise<FileRows> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('../lib/importRows.worker.ts', import.meta.url), { type: 'module' });
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

function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function stem(name: string): string {
  return name.replace(/\.[^.]*$/, '') || 'leads';
}

export function LeadImportPage() {
  useTitle('Import leads');
  const inputId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [chosen, setChosen] = useState<Chosen | null>(null);
  const [reading, setReading] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [fields, setFields] = useState<Array<ImportField | null>>([]);
  const [dedupe, setDedupe] = useState(false);
  // The file's status values that are not lead statuses, from the answers to checks (a value once mapped is no longer
  // in an answer's warnings, and stays listed), and the status chosen for each: sent as statusMap=VALUE:STATUS.
  const [unknownStatuses, setUnknownStatuses] = useState<UnknownStatus[]>([]);
  const [statusMap, setStatusMap] = useState<Record<string, LeadStatus>>({});
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [dragging, setDragging] = useState(false);
  const work = useRef<AbortController | null>(null);

  useEffect(() => () => work.current?.abort(), []);

  /** Forgets the answer of an earlier check: the file, the mapping or the options changed. */
  const reset = () => {
    work.current?.abort();
    work.current = null;
    setOutcome(null);
    setError(null);
    setProgress(null);
  };

  const choose = async (file: File | undefined) => {
    if (!file) return;
    reset();
    setChosen(null);
    setUnknownStatuses([]);
    setStatusMap({});
    const refused = refusalOf(file);
    setRefusal(refused);
    if (refused) return;
    setReading(true);
    try {
      const read = await readChosen(file);
      setChosen(read);
      setFields(read.csv ? initialFields(read.csv, LEAD_STATUSES) : []);
    } finally {
      setReading(false);
    }
  };

  const onInput = (event: ChangeEvent<HTMLInputElement>) => {
    void choose(event.target.files?.[0]);
    // Choosing the same file again (after fixing it) is a new choice.
    event.target.value = '';
  };
  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault();
    setDragging(false);
    void choose(event.dataTransfer.files[0]);
  };

  const headers = chosen?.csv?.headers ?? [];
  const mapping = chosen?.csv && !chosen.problem ? mappingProblem(headers, fields) : null;
  const blocked = !chosen || chosen.problem !== null || mapping !== null;
  const busy = progress !== null;

  const send = async (dryRun: boolean) => {
    if (!chosen || blocked) return;
    reset();
    const controller = new AbortController();
    work.current = controller;
    setProgress({ dryRun, sent: 0, total: chosen.file.size, uploaded: false });
    let result: ImportResult;
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
        onProgress: (sent, total) => setProgress({ dryRun, sent, total, uploaded: sent >= total }),
      }));
    } catch (caught) {
      if (controller.signal.aborted) return;
      setError(caught);
      setProgress(null);
      return;
    }
    if (controller.signal.aborted) return;
    setProgress(null);
    setOutcome({ result, rows: null, rowsError: null });
    const unknown = result.warnings.filter((w) => w.field === 'status');
    if (unknown.length > 0) {
      setUnknownStatuses((known) => [
        ...known,
        ...unknown.filter((w) => !known.some((k) => k.value === w.value)).map(({ value, rows }) => ({ value, rows })),
      ]);
    }
    if (result.errors.length === 0) return;
    const rows = [...new Set(result.errors.map((e) => e.row))];
    try {
      const picked = await pickRowsInWorker({ file: chosen.file, format: chosen.format, rows }, controller.signal);
      if (!controller.signal.aborted) setOutcome({ result, rows: picked, rowsError: null });
    } catch (caught) {
      if (!controller.signal.aborted) setOutcome({ result, rows: null, rowsError: caught instanceof Error ? caught.message : String(caught) });
    }
  };

  const imported = outcome !== null && !outcome.result.dryRun;

  return (
    <>
      <Link to="/leads" className="back-link"><Icon name="chevronLeft" /> Leads</Link>
      <PageHeader
        title="Import leads"
        description={`Bring in leads from a spreadsheet: save it as CSV (comma or semicolon, UTF-8), or use a JSON file. Up to ${formatBytes(IMPORT_MAX_BYTES)} and 50,000 rows.`}
      />

      <Card title="File" titleId="import-file-title">
        <div
          className={`import-drop${dragging ? ' import-drop-over' : ''}`}
          onDragOver={(event) => { event.preventDefault(); setDragging(true); }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <Icon name="doc" size={22} />
          <div className="import-drop-text">
            {chosen || reading
              ? <>
                  <p className="import-file-name">{chosen?.file.name ?? 'Reading the file…'}</p>
                  {chosen && <p className="muted small">{formatBytes(chosen.file.size)} · {chosen.format === 'csv' ? 'CSV' : 'JSON'}</p>}
                </>
              : <>
                  <p className="import-file-name">Drop a .csv or .json file here</p>
                  <p className="muted small">or choose one; up to {formatBytes(IMPORT_MAX_BYTES)}</p>
                </>}
          </div>
          <label htmlFor={inputId} className="button button-secondary button-medium import-choose">
            {chosen ? 'Choose another file' : 'Choose a file'}
          </label>
          <input
            ref={input}
            id={inputId}
            className="visually-hidden"
            type="file"
            accept=".csv,.json,text/csv,application/json"
            onChange={onInput}
            disabled={busy}
          />
        </div>
        {refusal && <div className="import-gap"><Alert tone="error" title="This file cannot be imported">{refusal}</Alert></div>}
        {chosen?.problem && <div className="import-gap"><Alert tone="error" title="This file cannot be imported as it is">{chosen.problem}</Alert></div>}
      </Card>

      {chosen?.csv && !chosen.problem && (
        <>
          <CsvPreviewCard preview={chosen.csv} fields={fields} />
          <Card title="Columns" titleId="import-columns-title">
            <p className="import-lead-in">Each column of the file is read as a field of the lead, or ignored. They are matched by their headers; change any that are wrong.</p>
            <div className="import-mapping">
              {headers.map((header, index) => {
                const id = `${inputId}-column-${index}`;
                const sample = chosen.csv!.rows.map((row) => row.cells[index]?.trim() ?? '').find((cell) => cell !== '');
                return (
                  <div className="import-mapping-row" key={index}>
                    <div className="import-mapping-column">
                      <label htmlFor={id} className="field-label">{header || `Column ${index + 1} (no header)`}</label>
                      {sample !== undefined && <span className="import-sample" title={sample}>{sample}</span>}
                    </div>
                    <Icon name="chevronRight" />
                    <select
                      id={id}
                      className="input select"
                      value={fields[index] ?? ''}
                      disabled={busy}
                      onChange={(event) => {
                        reset();
                        setFields(chooseField(fields, index, (event.target.value || null) as ImportField | null));
                      }}
                    >
                      <option value="">Ignore</option>
                      {IMPORT_FIELDS.map((field) => <option key={field} value={field}>{FIELD_LABEL[field]}</option>)}
                    </select>
                  </div>
                );
              })}
            </div>
            {mapping && <div className="import-gap"><Alert tone="warning">{mapping}</Alert></div>}
          </Card>
        </>
      )}

      {chosen?.csv && !chosen.problem && unknownStatuses.length > 0 && !imported && (
        <Card title="Statuses" titleId="import-statuses-title">
          <p className="import-lead-in">
            These values of the status column are not lead statuses. Their rows are imported as
            {' '}{LEAD_STATUS_LABEL.DISCOVERY} unless you choose a status for them.
          </p>
          <div className="import-mapping">
            {unknownStatuses.map(({ value, rows }, index) => {
              const id = `${inputId}-status-${index}`;
              return (
                <div className="import-mapping-row" key={value}>
                  <div className="import-mapping-column">
                    <label htmlFor={id} className="field-label">{value}</label>
                    <span className="import-sample">{plural(rows, 'row')}</span>
                  </div>
                  <Icon name="chevronRight" />
                  <select
                    id={id}
                    className="input select"
                    value={statusMap[value.toUpperCase()] ?? ''}
                    disabled={busy}
                    onChange={(event) => {
                      reset();
                      const { [value.toUpperCase()]: _dropped, ...others } = statusMap;
                      const status = event.target.value as LeadStatus | '';
                      setStatusMap(status ? { ...others, [value.toUpperCase()]: status } : others);
                    }}
                  >
                    <option value="">Default ({LEAD_STATUS_LABEL.DISCOVERY})</option>
                    {LEAD_STATUSES.map((status) => (
                      <option key={status} value={status}>{LEAD_STATUS_LABEL[status]}</option>
                    ))}
                  </select>
                </div>
              );
            })}
          </div>
        </Card>
      )}

      {chosen?.json && !chosen.problem && <JsonPreviewCard leads={chosen.json.leads} count={chosen.json.count} />}

      {chosen && !chosen.problem && (
        <Card title={imported ? 'Imported' : 'Import'} titleId="import-run-title">
          {!imported && (
            <>
              <label className="checkbox import-option">
                <input type="checkbox" checked={dedupe} disabled={busy} onChange={(event) => { reset(); setDedupe(event.target.checked); }} />
                <span>
                  <span className="scope-name">Update existing leads with the same e-mail</span>
                  <span className="checkbox-help">A row whose e-mail (in any case) is a lead’s already here updates that lead instead of adding a second one; rows of the file with one e-mail make one lead.</span>
                </span>
              </label>
              <div className="import-actions">
                <Button icon="check" onClick={() => void send(true)} disabled={blocked || busy} busy={progress?.dryRun === true}>Check file</Button>
                <Button variant="primary" icon="plus" onClick={() => void send(false)} disabled={blocked || busy} busy={progress?.dryRun === false}>Import</Button>
                <span className="muted small">Checking reads every row and writes nothing.</span>
              </div>
            </>
          )}
          {progress && <ProgressMeter progress={progress} />}
          {error ? <div className="import-gap"><ImportError error={error} /></div> : null}
          {outcome && <ResultView outcome={outcome} chosen={chosen} fields={fields} />}
          {imported && (
            <div className="import-actions">
              <Link to="/leads" className="button button-primary button-medium"><Icon name="leads" /> Go to leads</Link>
              <Button onClick={() => input.current?.click()}>Import another file</Button>
            </div>
          )}
        </Card>
      )}
    </>
  );
}

function CsvPreviewCard({ preview, fields }: { preview: CsvPreview; fields: ReadonlyArray<ImportField | null> }) {
  const { headers, rows, more } = preview;
  return (
    <Card title="First rows" titleId="import-preview-title">
      {rows.length === 0
        ? <p className="card-empty">The file has a header row and no rows of leads {more ? 'in its first 64 KiB' : ''}.</p>
        : <div className="table-card import-preview">
            <div className="table-scroll">
              <table className="table table-stack" style={{ '--columns': headers.length } as CSSProperties}>
                <caption className="visually-hidden">The header and the first {plural(rows.length, 'row')} of the file</caption>
                <thead>
                  <tr>
                    <th scope="col" className="align-right import-row-col">Row</th>
                    {headers.map((header, index) => (
                      <th scope="col" key={index}>
                        {header || `Column ${index + 1}`}
                        <span className="import-read-as">{fields[index] ? FIELD_LABEL[fields[index]] : 'Ignored'}</span>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map(({ row, cells }) => (
                    <tr key={row}>
                      <td className="align-right muted cell-wide import-row-number" data-label="Row">{row}</td>
                      {headers.map((header, index) => (
                        <td key={index} data-label={header || `Column ${index + 1}`} className={fields[index] ? undefined : 'import-ignored'}>
                          {cells[index] ?? ''}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>}
      <p className="muted small import-gap">
        {more ? `The first ${plural(rows.length, 'row')} of leads; the rest of the file is read when it is checked or imported.` : `The whole file: ${plural(rows.length, 'row')} of leads.`}
        {' '}Separated by {preview.delimiter === ';' ? 'semicolons' : preview.delimiter === ',' ? 'commas' : 'tabs'}.
      </p>
    </Card>
  );
}

const JSON_FIELDS = ['name', 'email', 'companyName', 'companyWebsite', 'status'] as const;

function jsonCell(lead: unknown, field: string): string {
  const value = lead && typeof lead === 'object' ? (lead as Record<string, unknown>)[field] : undefined;
  return value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
}

function JsonPreviewCard({ leads, count }: { leads: unknown[]; count: number }) {
  return (
    <Card title="First leads" titleId="import-preview-title">
      {leads.length === 0 ? <p className="card-empty">The file holds no leads.</p> : (
        <div className="table-card import-preview">
          <div className="table-scroll">
            <table className="table table-stack">
              <caption className="visually-hidden">The first leads of the file</caption>
              <thead>
                <tr>
                  <th scope="col" className="align-right">#</th>
                  {JSON_FIELDS.map((field) => <th scope="col" key={field}>{FIELD_LABEL[field]}</th>)}
                </tr>
              </thead>
              <tbody>
                {leads.map((lead, index) => (
                  <tr key={index}>
                    <td className="align-right muted cell-wide import-row-number" data-label="#">{index}</td>
                    {JSON_FIELDS.map((field) => <td key={field} data-label={FIELD_LABEL[field]}>{jsonCell(lead, field)}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
      <p className="muted small import-gap">{plural(count, 'lead')} in the file, numbered from 0 as the import numbers them.</p>
    </Card>
  );
}

function ProgressMeter({ progress }: { progress: Progress }) {
  const percent = progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0;
  const label = progress.uploaded
    ? progress.dryRun ? 'Checking every row…' : 'Checking and writing every row…'
    : `Uploading the file: ${percent}%`;
  return (
    <div className="import-progress" aria-live="polite">
      <div className="meter" role="progressbar" aria-label="Upload" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent} aria-valuetext={label}>
        <span className={`meter-fill${progress.uploaded ? ' import-meter-working' : ''}`} style={{ width: `${progress.uploaded ? 100 : percent}%` }} />
      </div>
      <p className="import-progress-label"><Spinner /> {label}</p>
    </div>
  );
}

function ImportError({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || ![400, 413, 415].includes(error.status)) return <ErrorAlert error={error} />;
  const title = error.status === 413 ? 'The file is too large' : error.status === 415 ? 'The file is not in a form leadrun reads' : 'The file was refused';
  return (
    <Alert tone="error" title={title}>
      <p>{error.detail}</p>
      {error.errors.length > 1 && (
        <ul className="import-problems">
          {error.errors.slice(0, 10).map((e, i) => <li key={i}><strong>{fieldLabel(e.field)}</strong> {e.message}</li>)}
        </ul>
      )}
    </Alert>
  );
}

function ResultView({ outcome, chosen, fields }: { outcome: Outcome; chosen: Chosen; fields: ReadonlyArray<ImportField | null> }) {
  const { result, rows, rowsError } = outcome;
  const bad = groupByRow(result.errors);
  const csvHeader = rows?.format === 'csv' ? rows.header : null;
  const verb = result.dryRun ? 'would be' : 'were';
  const columnOf = (field: string): string | null => {
    const index = fields.indexOf(field as ImportField);
    return index >= 0 && chosen.csv ? chosen.csv.headers[index] ?? null : null;
  };
  const save = () => {
    if (!rows) return;
    const file = badRowsFile(rows, bad.map((b) => b.row));
    download(`${stem(chosen.file.name)}-bad-rows.${file.extension}`, file.text, file.type);
  };
  return (
    <div className="import-result" aria-live="polite">
      <Alert tone={result.skipped > 0 ? 'warning' : 'success'} title={result.dryRun ? 'The file was checked; nothing was written' : 'The file was imported'}>
        {result.dryRun
          ? `${plural(result.rows, 'row')} of leads read. Import the file to write them.`
          : `${plural(result.created + result.updated, 'lead')} written.`}
        {result.skipped > 0 && ` ${plural(result.skipped, 'row')} ${result.skipped === 1 ? 'has' : 'have'} a problem and ${result.skipped === 1 ? 'is' : 'are'} left out.`}
      </Alert>
      {result.warnings.length > 0 && (
        <Alert tone="warning" title="Some values were not read as written">
          <ul className="import-problems">
            {result.warnings.map((w) => (
              <li key={`${w.field}:${w.value}`}>
                <strong>{fieldLabel(w.field)}</strong> “{w.value}” ({plural(w.rows, 'row')})
                {' '}{w.message.replace(/; choose one with .*$/, '')}
                {result.dryRun && w.field === 'status' ? '; choose a status for it under Statuses above.' : '.'}
              </li>
            ))}
          </ul>
        </Alert>
      )}
      <dl className="stat-strip import-counts" aria-label="Rows of the file">
        <div><dt>Created</dt><dd>{formatNumber(result.created)}<span className="stat-sub">new leads {verb} added</span></dd></div>
        <div><dt>Updated</dt><dd>{formatNumber(result.updated)}<span className="stat-sub">leads {verb} updated</span></dd></div>
        <div><dt>Skipped</dt><dd>{formatNumber(result.skipped)}<span className="stat-sub">rows with a problem</span></dd></div>
      </dl>
      {bad.length > 0 && (
        <>
          <div className="section-bar">
            <h3 className="import-subtitle">{plural(bad.length, 'row')} with a problem</h3>
            <div className="section-bar-actions">
              <Button icon="doc" onClick={save} disabled={!rows} busy={!rows && !rowsError}>Download bad rows</Button>
            </div>
          </div>
          <p className="muted small import-lead-in">
            Fix them in the downloaded file (the header and these rows{chosen.format === 'csv' ? ', as the file has them' : ''}), then import it.
            {result.errorCount > result.errors.length && ` The answer lists the first ${formatNumber(result.errors.length)} of ${formatNumber(result.errorCount)} problems; check the file again once these are fixed.`}
          </p>
          {rowsError && <Alert tone="error" title="The bad rows could not be read from the file">{rowsError}</Alert>}
          <div className="table-card">
            <div className="table-scroll">
              <table className="table table-stack import-bad-rows">
                <caption className="visually-hidden">Rows with a problem</caption>
                <thead>
                  <tr>
                    <th scope="col" className="align-right">{chosen.format === 'csv' ? 'Row' : 'Lead'}</th>
                    <th scope="col">Problem</th>
                    <th scope="col">Values in the file</th>
                  </tr>
                </thead>
                <tbody>
                  {bad.slice(0, SHOWN_BAD_ROWS).map(({ row, problems }) => (
                    <tr key={row}>
                      <th scope="row" className="align-right nowrap import-row-number" data-label={chosen.format === 'csv' ? 'Row' : 'Lead'}>{row}</th>
                      <td className="cell-wide">
                        <ul className="import-problems">
                          {problems.map((p, i) => {
                            const column = columnOf(p.field);
                            return (
                              <li key={i}>
                                <strong>{fieldLabel(p.field)}</strong>
                                {column && column !== fieldLabel(p.field) && <span className="muted"> (column “{column}”)</span>}
                                {' '}{p.message}
                              </li>
                            );
                          })}
                        </ul>
                      </td>
                      <td className="cell-wide">
                        <RowValues rows={rows} header={csvHeader} row={row} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
          {bad.length > SHOWN_BAD_ROWS && <p className="muted small import-gap">The first {formatNumber(SHOWN_BAD_ROWS)} are shown; the download holds all {formatNumber(bad.length)}.</p>}
        </>
      )}
      {result.dryRun ? null : <p className="import-gap"><Link to="/leads">See the leads</Link></p>}
    </div>
  );
}

function RowValues({ rows, header, row }: { rows: FileRows | null; header: string[] | null; row: number }) {
  if (!rows) return <span className="muted">…</span>;
  if (rows.format === 'json') {
    const lead = rows.rows.get(row);
    return <code className="import-json">{lead === undefined ? '' : JSON.stringify(lead)}</code>;
  }
  const cells = rows.rows.get(row) ?? [];
  const names = header ?? [];
  const width = Math.max(names.length, cells.length);
  return (
    <dl className="import-values">
      {Array.from({ length: width }, (_, i) => (
        <div key={i}>
          <dt>{names[i]?.trim() || `Column ${i + 1}`}</dt>
          <dd>{cells[i]?.trim() ? cells[i] : <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

// The parts of the import page: the previews of a CSV or JSON file, the upload's progress, a refused file, and the
// result with each bad row and what is wrong with it.
import type { CSSProperties } from 'react';
import { ApiError } from '../../api/client';
import { Alert, Button, Card, ErrorAlert, Spinner } from '../../components/ui';
import { formatNumber, plural } from '../../lib/format';
import { badRowsFile, fieldLabel, FIELD_LABEL, groupByRow, type CsvPreview, type FileRows, type ImportField } from '../../lib/leadImport';
import { Link } from '../../lib/router';
import { download, SHOWN_BAD_ROWS, stem, type Chosen, type Outcome, type Progress } from './chosenFile';

export function CsvPreviewCard({ preview, fields }: { preview: CsvPreview; fields: ReadonlyArray<ImportField | null> }) {
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

export function JsonPreviewCard({ leads, count }: { leads: unknown[]; count: number }) {
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

export function ProgressMeter({ progress }: { progress: Progress }) {
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

export function ImportError({ error }: { error: unknown }) {
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

export function ResultView({ outcome, chosen, fields }: { outcome: Outcome; chosen: Chosen; fields: ReadonlyArray<ImportField | null> }) {
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

export function RowValues({ rows, header, row }: { rows: FileRows | null; header: string[] | null; row: number }) {
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

// Import leads from a file: choose or drop a CSV (as a spreadsheet saves it) or JSON file, see its first rows and how
// each column will be read, change that, check the file without writing anything, import it, and see each bad row
// with what is wrong with it, with a file of the bad rows to fix and import again. The preview reads only the start of
// the file, with the server's own CSV reader; the column mapping shown is sent with the file, so it is the one applied.
import { useId, useRef, useState, type ChangeEvent, type DragEvent } from 'react';
import { Icon } from '../components/Icon';
import { Alert, Button, Card, PageHeader } from '../components/ui';
import { LEAD_STATUSES, type LeadStatus } from '../api/types';
import { LEAD_STATUS_LABEL, plural } from '../lib/format';
import { chooseField, FIELD_LABEL, formatBytes, IMPORT_FIELDS, IMPORT_MAX_BYTES, type ImportField } from '../lib/leadImport';
import { Link } from '../lib/router';
import { useTitle } from '../lib/query';
import '../styles/import.css';
import { CsvPreviewCard, ImportError, JsonPreviewCard, ProgressMeter, ResultView } from './import/ImportViews';
import { useLeadImport } from './import/useLeadImport';

export function LeadImportPage() {
  useTitle('Import leads');
  const inputId = useId();
  const input = useRef<HTMLInputElement>(null);
  const {
    chosen, reading, refusal, fields, setFields, dedupe, setDedupe, unknownStatuses, statusMap, setStatusMap, progress, error,
    outcome, headers, mapping, blocked, busy, choose, send,
  } = useLeadImport();
  const [dragging, setDragging] = useState(false);

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
                <input type="checkbox" checked={dedupe} disabled={busy} onChange={(event) => setDedupe(event.target.checked)} />
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

// Erasure from the lead page: a lead with everything that holds its data, or one call with its runs. Each dialog
// first counts what will go (every page of the calls and runs, not a guess) and says it, and only a button that
// names it deletes. A call whose run is still in the pipeline cannot be deleted (the API's 409), and the dialog
// says why and which run.
import { useState } from 'react';
import { api, ApiError } from '../api/client';
import type { Call, Lead, Run } from '../api/types';
import { Dialog } from '../components/Dialog';
import { Alert, Button, ErrorAlert, LoadingBlock } from '../components/ui';
import { inPipeline } from '../lib/batch';
import { everyPage } from '../lib/concurrent';
import { callTitle, plural, RUN_STATUS_LABEL } from '../lib/format';
import { Link } from '../lib/router';
import { useApiQuery } from '../lib/query';

const PAGE = 100;

function leadRuns(leadId: string, signal: AbortSignal): Promise<Run[]> {
  return everyPage((cursor) => api.get('/api/v1/runs', { query: { leadId, limit: PAGE, cursor }, signal }));
}

/** "3 runs, with their drafts and history" / "1 run, with its draft and history" */
function runsWithHistory(runs: readonly Run[]): string {
  return `${plural(runs.length, 'run')}, with ${runs.length === 1 ? 'its draft' : 'their drafts'} and history (steps and events)`;
}

export interface ErasedLead {
  name: string;
  calls: number;
  runs: number;
}

export function DeleteLeadDialog({ lead, onClose, onDeleted }: { lead: Lead; onClose(): void; onDeleted(erased: ErasedLead): void }) {
  const found = useApiQuery(['lead', lead.id, 'erasure'], async (signal) => {
    const [calls, runs] = await Promise.all([
      everyPage((cursor) => api.get('/api/v1/leads/{leadId}/calls', { params: { leadId: lead.id }, query: { limit: PAGE, cursor }, signal })),
      leadRuns(lead.id, signal),
    ]);
    return { calls, runs };
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const counts = found.data;

  const erase = async () => {
    if (!counts) return;
    setBusy(true);
    setError(null);
    try {
      await api.delete('/api/v1/leads/{id}', { params: { id: lead.id } });
      onDeleted({ name: lead.name, calls: counts.calls.length, runs: counts.runs.length });
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };

  const working = counts?.runs.filter((run) => inPipeline(run.status)).length ?? 0;
  const label = counts
    ? `Delete the lead, ${plural(counts.calls.length, 'call')} and ${plural(counts.runs.length, 'run')}`
    : 'Delete the lead';
  return (
    <Dialog
      title={`Delete ${lead.name}?`}
      size="small"
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Keep the lead</Button>
        <Button variant="danger" icon="trash" busy={busy} disabled={!counts} onClick={() => void erase()}>{label}</Button>
      </>}
    >
      {error ? <ErrorAlert error={error} /> : null}
      {found.error ? <ErrorAlert error={found.error} retry={found.reload} /> : null}
      {!counts && !found.error && <LoadingBlock label="Counting the calls and runs" />}
      {counts && (
        <>
          <p>This removes at once, for good:</p>
          <ul className="consequences" aria-label="What will be removed">
            <li>the lead {lead.name}: name, e-mail, company and website</li>
            <li>{plural(counts.calls.length, 'call')}{counts.calls.length > 0 && `, with ${counts.calls.length === 1 ? 'its transcript' : 'their transcripts'}`}</li>
            <li>{runsWithHistory(counts.runs)}</li>
          </ul>
          {working > 0 && (
            <Alert tone="warning">{plural(working, 'run is', 'runs are')} still being worked on: {working === 1 ? 'it stops' : 'they stop'} and {working === 1 ? 'is' : 'are'} removed too.</Alert>
          )}
          <p className="small muted">The audit log keeps only the ids of what was removed, never the lead's details. This cannot be undone.</p>
        </>
      )}
    </Dialog>
  );
}

export function DeleteCallDialog({ lead, call, onClose, onDeleted }: { lead: Lead; call: Call; onClose(): void; onDeleted(runs: number): void }) {
  const found = useApiQuery(['lead', lead.id, 'erasure', call.id], async (signal) => (await leadRuns(lead.id, signal)).filter((run) => run.callId === call.id));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const runs = found.data;

  const erase = async () => {
    if (!runs) return;
    setBusy(true);
    setError(null);
    try {
      await api.delete('/api/v1/leads/{leadId}/calls/{id}', { params: { leadId: lead.id, id: call.id } });
      onDeleted(runs.length);
    } catch (e) {
      setError(e);
      setBusy(false);
      // A run that started since the count: count again, to name it.
      if (e instanceof ApiError && e.code === 'invalid_state') void found.reload();
    }
  };

  const title = callTitle(call);
  const busyRun = runs?.find((run) => inPipeline(run.status));
  const refused = error instanceof ApiError && error.code === 'invalid_state';
  const status = busyRun?.status ?? (refused ? String(error.problem.runStatus ?? '') : '');
  const statusText = status === 'QUEUED' || status === 'RUNNING' ? RUN_STATUS_LABEL[status].toLowerCase() : 'in progress';
  return (
    <Dialog
      title={`Delete “${title}”?`}
      size="small"
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Keep the call</Button>
        <Button variant="danger" icon="trash" busy={busy} disabled={!runs || Boolean(busyRun)} onClick={() => void erase()}>
          {runs ? `Delete the call and ${plural(runs.length, 'run')}` : 'Delete the call'}
        </Button>
      </>}
    >
      {(refused || busyRun) && (
        <Alert tone="warning" title={`A run of this call is ${statusText}`}
          action={busyRun && <Link to="/runs/$id" params={{ id: busyRun.id }} className="button button-secondary button-small">Open the run</Link>}>
          The call can be deleted once the run has finished or been cancelled. Nothing was removed.
        </Alert>
      )}
      {error && !refused ? <ErrorAlert error={error} /> : null}
      {found.error ? <ErrorAlert error={found.error} retry={found.reload} /> : null}
      {!runs && !found.error && <LoadingBlock label="Counting the runs" />}
      {runs && (
        <>
          <p>This removes at once, for good:</p>
          <ul className="consequences" aria-label="What will be removed">
            <li>the call “{title}”, with its transcript</li>
            <li>{runsWithHistory(runs)}</li>
          </ul>
          <p className="small muted">{lead.name} and their other calls stay. The audit log keeps only the ids of what was removed.</p>
        </>
      )}
    </Dialog>
  );
}

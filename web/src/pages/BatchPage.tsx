// A batch of runs (POST /api/v1/runs/batch) as it is worked: how many are queued, running, awaiting approval, failed
// and done, and each run with its lead. The batch's id is in the address, so a reload shows it again. While a run
// is in the pipeline the batch is read every 2 seconds (one small request, /ui/api/batches/{id}); reading stops once
// every run has settled, and waits while the tab is hidden.
import { getRouteApi } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import { Icon } from '../components/Icon';
import { ErrorAlert, LoadingBlock, PageHeader, RelativeTime, RunStatusBadge } from '../components/ui';
import { groupOf, inPipeline, type BatchGroup, type BatchRun } from '../lib/batch';
import { formatNumber, plural } from '../lib/format';
import { Link } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';

const POLL_MS = 2000;

const GROUPS: { group: BatchGroup; label: string; hint?: string }[] = [
  { group: 'QUEUED', label: 'Queued' },
  { group: 'RUNNING', label: 'Running' },
  { group: 'AWAITING_APPROVAL', label: 'Awaiting approval' },
  { group: 'FAILED', label: 'Failed' },
  { group: 'DONE', label: 'Done', hint: 'approved, rejected or cancelled' },
];

const route = getRouteApi('/_app/runs/batches/$id');

export function BatchPage() {
  const { id } = route.useParams();
  // Read again every POLL_MS while a run is in the pipeline (a hidden tab waits), and no more once all have settled.
  const batch = useApiQuery(['batch', id], (signal) => api.get('/ui/api/batches/{id}', { params: { id }, signal }).then((r) => r.body.data), {
    refetchInterval: (runs) => (runs?.some((run) => inPipeline(run.status)) ? POLL_MS : false),
  });
  const { data: runs, error } = batch;

  const counts = new Map<BatchGroup, number>(GROUPS.map(({ group }) => [group, 0]));
  for (const run of runs ?? []) counts.set(groupOf(run.status), (counts.get(groupOf(run.status)) ?? 0) + 1);
  const total = runs?.length ?? 0;
  const working = (counts.get('QUEUED') ?? 0) + (counts.get('RUNNING') ?? 0);
  const awaiting = counts.get('AWAITING_APPROVAL') ?? 0;
  const failed = counts.get('FAILED') ?? 0;
  const settled = total - working;
  useTitle(runs ? `Batch of ${plural(total, 'run')}` : 'Batch');

  // Read out once, when the last run settles while the page is open.
  const [announcement, setAnnouncement] = useState('');
  const wasWorking = useRef<boolean | null>(null);
  useEffect(() => {
    if (!runs) return;
    if (wasWorking.current && working === 0) {
      setAnnouncement(`Every run has finished: ${formatNumber(awaiting)} awaiting approval, ${formatNumber(failed)} failed.`);
    }
    wasWorking.current = working > 0;
  }, [runs, working, awaiting, failed]);

  if (error && !runs) return <ErrorAlert error={error} retry={batch.reload} />;
  if (!runs) return <LoadingBlock label="Loading the batch" />;

  const startedAt = runs.reduce((first, run) => (run.startedAt < first ? run.startedAt : first), runs[0]!.startedAt);
  return (
    <>
      <Link to="/runs" className="back-link"><Icon name="chevronLeft" /> Runs</Link>
      <PageHeader
        eyebrow={<>Batch · started <RelativeTime iso={startedAt} /></>}
        title={`${plural(total, 'run')} started together`}
        description={working > 0
          ? `${formatNumber(settled)} of ${formatNumber(total)} finished; the rest are being worked on.`
          : 'Every run of the batch has finished.'}
        actions={awaiting > 0 && (
          <Link to="/runs/review" search={{ batch: id }} className="button button-primary button-medium">
            <Icon name="check" /> Review {plural(awaiting, 'draft')}
          </Link>
        )}
      />
      <div className="visually-hidden" aria-live="polite" aria-atomic="true">{announcement}</div>
      {error ? <ErrorAlert error={error} retry={batch.reload} /> : null}

      <div className="batch-progress">
        <div className="meter" role="progressbar" aria-label="Runs finished" aria-valuemin={0} aria-valuemax={total} aria-valuenow={settled}
          aria-valuetext={`${formatNumber(settled)} of ${formatNumber(total)} finished`}>
          <span className="meter-fill" style={{ width: `${total ? (settled / total) * 100 : 0}%` }} />
        </div>
        {working > 0 && <p className="stepper-live"><span className="live-dot" aria-hidden="true" /> Updating every 2 seconds</p>}
      </div>

      <dl className="stat-strip batch-counts" aria-label="Runs by status">
        {GROUPS.map(({ group, label, hint }) => (
          <div key={group} data-group={group}>
            <dt>{label}</dt>
            <dd>{formatNumber(counts.get(group) ?? 0)}{hint && <span className="stat-sub">{hint}</span>}</dd>
          </div>
        ))}
      </dl>

      <div className="table-card">
        <div className="table-scroll">
          <table className="table table-stack">
            <caption className="visually-hidden">The runs of the batch, by lead name</caption>
            <thead>
              <tr>
                <th scope="col">Lead</th>
                <th scope="col">Draft</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <tr key={run.id}>
                  <td className="cell-main">
                    <Link to="/runs/$id" params={{ id: run.id }} className="row-title">{run.leadName}</Link>
                    {run.companyName && <div className="row-sub">{run.companyName}</div>}
                  </td>
                  <td className="cell-subject cell-wide" data-label="Draft">
                    {run.subject ?? (run.status === 'FAILED' ? <span className="muted">{run.error ?? 'No draft was written.'}</span> : <span className="muted">—</span>)}
                  </td>
                  <td className="cell-end"><RunStatusBadge status={run.status} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </>
  );
}

// Runs: every run of the workspace, newest first, with the lead it was for and its draft's subject.
import { getRouteApi } from '@tanstack/react-router';
import { useState } from 'react';
import { api } from '../api/client';
import type { Lead, RunStatus } from '../api/types';
import { Icon } from '../components/Icon';
import { Button, EmptyState, ErrorAlert, LoadingBlock, PageHeader, RelativeTime, RunStatusBadge } from '../components/ui';
import { formatDuration, plural, RUN_STATUS_LABEL } from '../lib/format';
import { PIPELINE_TIME_HELP, pipelineMs } from '../lib/pipeline';
import { Link, useSearchUpdate } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';

const route = getRouteApi('/_app/runs');
const PAGE_SIZE = 25;
const STATUSES = Object.keys(RUN_STATUS_LABEL) as RunStatus[];

export function RunsPage() {
  useTitle('Runs');
  const status = route.useSearch().status ?? null;
  const setSearch = useSearchUpdate();
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;

  const page = useApiQuery(['runs', status, cursor], async (signal) => {
    const result = await api.get('/api/v1/runs', { query: { limit: PAGE_SIZE, status, cursor }, signal });
    // The names of the leads on this page (a run carries only the lead's id).
    const ids = [...new Set(result.body.data.map((r) => r.leadId))];
    const leads = await Promise.all(ids.map((id) => api.get('/api/v1/leads/{id}', { params: { id }, signal }).then((r) => r.body.data, () => null)));
    return { runs: result.body.data, next: result.next, leads: new Map(leads.filter((l): l is Lead => l !== null).map((l) => [l.id, l])) };
  });

  return (
    <>
      <PageHeader title="Runs" description="Every draft the agent has worked on, newest first. Those awaiting approval need a person." />
      <div className="toolbar">
        <div className="toolbar-field">
          <label htmlFor="run-status" className="toolbar-label">Status</label>
          <select id="run-status" className="input select" value={status ?? ''} onChange={(e) => { setCursors([null]); setSearch({ status: e.target.value || null }); }}>
            <option value="">All statuses</option>
            {STATUSES.map((s) => <option key={s} value={s}>{RUN_STATUS_LABEL[s]}</option>)}
          </select>
        </div>
      </div>
      {page.error ? <ErrorAlert error={page.error} retry={page.reload} /> : null}
      {!page.data && !page.error && <LoadingBlock label="Loading runs" />}
      {page.data?.runs.length === 0 && (
        <EmptyState icon="runs" title={status ? `No ${RUN_STATUS_LABEL[status].toLowerCase()} runs` : 'No runs yet'}
          action={!status && <Link to="/leads" className="button button-primary button-medium">Go to leads</Link>}>
          {status ? 'Try another status.' : 'Open a lead, add a call and choose “Draft follow-up”.'}
        </EmptyState>
      )}
      {page.data && page.data.runs.length > 0 && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-stack" aria-busy={page.loading}>
              <caption className="visually-hidden">Runs, page {cursors.length}</caption>
              <thead>
                <tr>
                  <th scope="col">Lead</th>
                  <th scope="col">Draft</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="align-right"><abbr title={PIPELINE_TIME_HELP}>Pipeline time</abbr></th>
                  <th scope="col" className="align-right">Started</th>
                </tr>
              </thead>
              <tbody>
                {page.data.runs.map((run) => {
                  const lead = page.data!.leads.get(run.leadId);
                  return (
                    <tr key={run.id}>
                      <td className="cell-main">
                        <Link to="/runs/$id" params={{ id: run.id }} className="row-title">{lead?.name ?? 'Unknown lead'}</Link>
                        {lead?.companyName && <div className="row-sub">{lead.companyName}</div>}
                      </td>
                      <td className="cell-subject cell-wide">{run.emailDraft?.subject ?? <span className="muted">—</span>}</td>
                      <td data-col="status"><RunStatusBadge status={run.status} /></td>
                      <td className="align-right nowrap muted" data-label="Pipeline time" data-col="took" title={PIPELINE_TIME_HELP}>
                        {run.status === 'QUEUED' || run.status === 'RUNNING' ? '—' : formatDuration(pipelineMs(run.steps))}
                      </td>
                      <td className="align-right nowrap muted" data-label="Started" data-col="started"><RelativeTime iso={run.startedAt} /></td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of runs">
            <span className="pager-info">Page {cursors.length} · {plural(page.data.runs.length, 'run')}</span>
            <div className="pager-buttons">
              <Button size="small" icon="chevronLeft" disabled={cursors.length < 2 || page.loading} onClick={() => setCursors((c) => c.slice(0, -1))}>Newer</Button>
              <Button size="small" disabled={!page.data.next || page.loading} onClick={() => setCursors((c) => [...c, page.data!.next])}>Older<Icon name="chevronRight" /></Button>
            </div>
          </nav>
        </div>
      )}
    </>
  );
}

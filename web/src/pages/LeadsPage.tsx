// Leads: the workspace's leads, newest first, filtered by status on the server and paged by the Link cursor.
// Search filters the loaded page in the browser (the API has no text search), and says so.
import { useMemo, useState } from 'react';
import { api } from '../api/client';
import { LEAD_STATUSES, type LeadStatus } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Button, EmptyState, ErrorAlert, LeadStatusBadge, LoadingBlock, PageHeader, RelativeTime } from '../components/ui';
import { hostOf, LEAD_STATUS_LABEL, plural } from '../lib/format';
import { Link, useRouter, useSearchParams } from '../lib/router';
import { useAsync, useTitle } from '../lib/useAsync';
import { NewLeadDialog } from './LeadForm';

const PAGE_SIZE = 25;

export function LeadsPage() {
  useTitle('Leads');
  const { navigate } = useRouter();
  const toast = useToast();
  const [params, setParams] = useSearchParams();
  const status = (LEAD_STATUSES as readonly string[]).includes(params.get('status') ?? '') ? params.get('status') as LeadStatus : null;
  const [query, setQuery] = useState(params.get('q') ?? '');
  // The cursors of the pages before this one; the last is this page's (null: the first page).
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const [creating, setCreating] = useState(false);

  const page = useAsync((signal) => api.get('/api/v1/leads', { query: { limit: PAGE_SIZE, status, cursor }, signal }), [status, cursor]);
  const leads = page.data?.body.data;
  const shown = useMemo(() => {
    const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (!leads || words.length === 0) return leads;
    return leads.filter((lead) => {
      const text = [lead.name, lead.email, lead.companyName, lead.companyWebsite].filter(Boolean).join(' ').toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [leads, query]);

  const setStatus = (value: string) => {
    setCursors([null]);
    setParams({ status: value || null });
  };
  const pageNumber = cursors.length;

  return (
    <>
      <PageHeader
        title="Leads"
        description="Everyone your team is talking to. Open a lead to add a call and draft a follow-up."
        actions={<Button variant="primary" icon="plus" onClick={() => setCreating(true)}>New lead</Button>}
      />
      <div className="toolbar" role="search">
        <div className="search-box">
          <Icon name="search" />
          <label htmlFor="lead-search" className="visually-hidden">Search leads on this page</label>
          <input
            id="lead-search"
            className="input"
            type="search"
            placeholder="Search name, e-mail or company"
            value={query}
            onChange={(e) => { setQuery(e.target.value); setParams({ q: e.target.value || null }); }}
            aria-describedby="lead-search-note"
          />
        </div>
        <div className="toolbar-field">
          <label htmlFor="lead-status" className="toolbar-label">Status</label>
          <select id="lead-status" className="input select" value={status ?? ''} onChange={(e) => setStatus(e.target.value)}>
            <option value="">All statuses</option>
            {LEAD_STATUSES.map((s) => <option key={s} value={s}>{LEAD_STATUS_LABEL[s]}</option>)}
          </select>
        </div>
      </div>
      <p id="lead-search-note" className="toolbar-note" aria-live="polite">
        {leads && query.trim()
          ? `${plural(shown?.length ?? 0, 'match', 'matches')} among the ${plural(leads.length, 'lead')} on this page. Search looks at the loaded page only.`
          : 'Search looks at the leads on this page.'}
      </p>

      {page.error ? <ErrorAlert error={page.error} retry={page.reload} /> : null}
      {!leads && !page.error && <LoadingBlock label="Loading leads" />}
      {leads && leads.length === 0 && (
        status || cursor
          ? <EmptyState icon="leads" title={`No ${status ? LEAD_STATUS_LABEL[status].toLowerCase() : ''} leads`}>Try another status, or clear the filter.</EmptyState>
          : <EmptyState icon="leads" title="No leads yet" action={<Button variant="primary" icon="plus" onClick={() => setCreating(true)}>Add your first lead</Button>}>
              Add a lead, paste the transcript of a call with them, and leadrun drafts the follow-up e-mail.
            </EmptyState>
      )}
      {shown && leads && leads.length > 0 && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-stack" aria-busy={page.loading}>
              <caption className="visually-hidden">Leads{status ? `, status ${LEAD_STATUS_LABEL[status]}` : ''}, page {pageNumber}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Company</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="align-right">Added</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((lead) => (
                  <tr key={lead.id}>
                    <td className="cell-main">
                      <Link to={`/leads/${lead.id}`} className="row-title">{lead.name}</Link>
                      {lead.email && <div className="row-sub">{lead.email}</div>}
                    </td>
                    <td>
                      <div>{lead.companyName ?? <span className="muted">—</span>}</div>
                      {lead.companyWebsite && <div className="row-sub">{hostOf(lead.companyWebsite)}</div>}
                    </td>
                    <td><LeadStatusBadge status={lead.status} /></td>
                    <td className="align-right nowrap muted" data-label="Added"><RelativeTime iso={lead.createdAt} /></td>
                  </tr>
                ))}
                {shown.length === 0 && (
                  <tr><td colSpan={4} className="table-empty">No lead on this page matches “{query}”.</td></tr>
                )}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of leads">
            <span className="pager-info">Page {pageNumber} · {plural(leads.length, 'lead')}</span>
            <div className="pager-buttons">
              <Button size="small" icon="chevronLeft" disabled={cursors.length < 2 || page.loading} onClick={() => setCursors((c) => c.slice(0, -1))}>Newer</Button>
              <Button size="small" disabled={!page.data?.next || page.loading} onClick={() => setCursors((c) => [...c, page.data!.next])}>
                Older<Icon name="chevronRight" />
              </Button>
            </div>
          </nav>
        </div>
      )}
      {creating && (
        <NewLeadDialog
          onClose={() => setCreating(false)}
          onCreated={(lead) => {
            setCreating(false);
            toast(`${lead.name} was added.`);
            navigate(`/leads/${lead.id}`);
          }}
        />
      )}
    </>
  );
}

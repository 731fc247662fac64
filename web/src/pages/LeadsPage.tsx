// Leads: the workspace's leads, newest first. The search, the status and the owner are filters of the API, so they
// look at every lead, not the page on screen: the search is sent as one types (once typing pauses), the total is
// the API's count with the same filters, and search, filters and page are kept in the address. Leads are selected
// to be assigned to someone or to have runs started for their latest calls; the list downloads as CSV.
import { getRouteApi } from '@tanstack/react-router';
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError } from '../api/client';
import { LEAD_STATUSES, type Lead, type LeadStatus } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Alert, Button, DoNotContactBadge, EmptyState, ErrorAlert, LeadStatusBadge, LoadingBlock, PageHeader, RelativeTime } from '../components/ui';
import { displayName, formatNumber, hostOf, LEAD_STATUS_LABEL, plural } from '../lib/format';
import {
  exportPath, hasFilters, leadFilters, leadSearch, LEADS_PAGE_SIZE, previousPage, readLeadView, rememberPreviousPage,
  SEARCH_MAX_LENGTH, withFilters, type LeadView,
} from '../lib/leadList';
import { ownerName, useMembers } from '../lib/members';
import { Link } from '../lib/router';
import { useSignedIn } from '../lib/session';
import { useApiQuery, useTitle } from '../lib/query';
import { AssignLeadsDialog, StartRunsDialog } from './LeadBulkDialogs';
import { NewLeadDialog } from './LeadForm';

const route = getRouteApi('/_app/leads');

/** How long typing pauses before the search is sent. */
const SEARCH_DELAY_MS = 250;

type Acting = 'new' | 'assign' | 'runs' | null;

export function LeadsPage() {
  useTitle('Leads');
  const navigate = route.useNavigate();
  /** Shows a view of the list: a new entry of history, or (`replace`) the same entry, as a search typed is. */
  const show = (next: LeadView<LeadStatus>, replace = false) => void navigate({ to: '/leads', search: leadSearch(next), replace, resetScroll: !replace });
  const search = route.useSearch();
  const toast = useToast();
  const session = useSignedIn();
  const me = session.user.id;
  const members = useMembers();
  const view = useMemo(() => readLeadView(new URLSearchParams(search).toString(), LEAD_STATUSES), [search]);
  const filters = useMemo(() => leadFilters(view, me), [view, me]);
  const filterKey = JSON.stringify(filters);
  const [acting, setActing] = useState<Acting>(null);

  // The search box. What is typed goes to the address (replacing the entry: a search is not a page of history) once
  // typing pauses, or at once on Enter; a search that comes from the address (Back, Forward, a link) fills the box.
  const [text, setText] = useState(view.q);
  const typing = useRef<number | undefined>(undefined);
  const applied = useRef(view.q);
  const current = useRef(view);
  current.current = view;
  useEffect(() => {
    if (view.q === applied.current) return;
    window.clearTimeout(typing.current);
    applied.current = view.q;
    setText(view.q);
  }, [view.q]);
  useEffect(() => () => window.clearTimeout(typing.current), []);
  const searchFor = (value: string) => {
    window.clearTimeout(typing.current);
    const q = value.trim().slice(0, SEARCH_MAX_LENGTH);
    if (q === current.current.q) return;
    applied.current = q;
    show(withFilters(current.current, { q }), true);
  };
  const onType = (value: string) => {
    setText(value);
    window.clearTimeout(typing.current);
    typing.current = window.setTimeout(() => searchFor(value), SEARCH_DELAY_MS);
  };
  /** A new status or owner: a new entry of history, on page 1, with whatever is typed in the box. */
  const filterBy = (change: Partial<Pick<LeadView<LeadStatus>, 'status' | 'owner'>>) => {
    window.clearTimeout(typing.current);
    const q = text.trim().slice(0, SEARCH_MAX_LENGTH);
    applied.current = q;
    show(withFilters(view, { ...change, q }));
  };

  // One page of leads and the count of all of them, shown together: the count is asked again only when the filters
  // change, and while the next answer is awaited the last one stays on screen (dimmed), never a mix of both.
  const counted = useRef<{ key: string; count: number } | null>(null);
  const list = useApiQuery(['leads', filterKey, view.cursor, view.page], async (signal) => {
    const known = counted.current?.key === filterKey ? counted.current.count : null;
    const [page, count] = await Promise.all([
      api.get('/api/v1/leads', { query: { limit: LEADS_PAGE_SIZE, ...filters, cursor: view.cursor }, signal }),
      known ?? api.get('/api/v1/leads/count', { query: filters, signal }).then((r) => r.body.count),
    ]);
    counted.current = { key: filterKey, count };
    return { leads: page.body.data, next: page.next, count, page: view.page };
  });
  const refresh = () => {
    counted.current = null;
    void list.reload();
  };
  const data = list.data;

  // Selected leads, kept across pages of the same filters; new filters start a new selection.
  const [selected, setSelected] = useState<ReadonlyMap<string, Lead>>(new Map());
  useEffect(() => setSelected(new Map()), [filterKey]);
  const onPage = data?.leads ?? [];
  const selectedHere = onPage.filter((lead) => selected.has(lead.id)).length;
  const allHere = onPage.length > 0 && selectedHere === onPage.length;
  const selectAll = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (selectAll.current) selectAll.current.indeterminate = selectedHere > 0 && !allHere;
  }, [selectedHere, allHere]);
  const toggle = (lead: Lead) => setSelected((old) => {
    const next = new Map(old);
    if (next.has(lead.id)) next.delete(lead.id);
    else next.set(lead.id, lead);
    return next;
  });
  const togglePage = () => setSelected((old) => {
    const next = new Map(old);
    for (const lead of onPage) {
      if (allHere) next.delete(lead.id);
      else next.set(lead.id, lead);
    }
    return next;
  });

  // Pages: "Older" follows the API's cursor; "Newer" goes back to the page remembered before it.
  const previous = view.cursor ? previousPage(window.sessionStorage, filters, view.cursor) : null;
  const older = () => {
    if (!data?.next) return;
    rememberPreviousPage(window.sessionStorage, filters, data.next, view.cursor);
    show({ ...view, page: view.page + 1, cursor: data.next });
  };
  const newer = () => show(previous ? { ...view, page: view.page - 1, cursor: previous } : { ...view, page: 1, cursor: null });
  const pages = data ? Math.max(1, Math.ceil(data.count / LEADS_PAGE_SIZE)) : 1;
  // Said of the leads on screen, which until the next answer are the last page's.
  const shownPage = data?.page ?? view.page;
  const first = (shownPage - 1) * LEADS_PAGE_SIZE + 1;

  const ownerKnown = !view.owner || view.owner === 'me' || view.owner === 'none' || members.data?.some((m) => m.id === view.owner);
  const ownerText = (userId: string | null) => ownerName(userId, members.data, me);
  const filtered = hasFilters(view);

  return (
    <>
      <PageHeader
        title="Leads"
        description="Everyone your team is talking to. Open a lead to add a call and draft a follow-up."
        actions={<>
          <Link to="/leads/import" className="button button-secondary button-medium"><Icon name="upload" />Import</Link>
          <Button variant="primary" icon="plus" onClick={() => setActing('new')}>New lead</Button>
        </>}
      />
      <form className="toolbar" role="search" aria-label="Leads" onSubmit={(e) => { e.preventDefault(); searchFor(text); }}>
        <div className="search-box">
          <Icon name="search" />
          <label htmlFor="lead-search" className="visually-hidden">Search leads</label>
          <input
            id="lead-search"
            className="input"
            type="search"
            placeholder="Search name, e-mail or company"
            value={text}
            maxLength={SEARCH_MAX_LENGTH}
            onChange={(e) => onType(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <div className="toolbar-field">
          <label htmlFor="lead-status" className="toolbar-label">Status</label>
          <select id="lead-status" className="input select" value={view.status ?? ''}
            onChange={(e) => filterBy({ status: (e.target.value || null) as LeadStatus | null })}>
            <option value="">All statuses</option>
            {LEAD_STATUSES.map((s) => <option key={s} value={s}>{LEAD_STATUS_LABEL[s]}</option>)}
          </select>
        </div>
        <div className="toolbar-field">
          <label htmlFor="lead-owner" className="toolbar-label">Owner</label>
          <select id="lead-owner" className="input select" value={view.owner ?? ''} onChange={(e) => filterBy({ owner: e.target.value || null })}>
            <option value="">Everyone</option>
            <option value="me">My leads</option>
            <option value="none">Unassigned</option>
            <optgroup label="Members">
              {members.data?.map((m) => <option key={m.id} value={m.id}>{displayName(m)}{m.id === me ? ' (you)' : ''}</option>)}
              {!ownerKnown && <option value={view.owner!}>{members.data ? 'A former member' : 'Loading…'}</option>}
            </optgroup>
          </select>
        </div>
      </form>

      <div className="results-bar">
        <p className="results-count" aria-live="polite" aria-atomic="true">{data ? plural(data.count, 'lead') : '\u00a0'}</p>
        {data && data.count > 0 && (
          <a href={exportPath(filters)} download className="button button-secondary button-small">
            <Icon name="download" />Export CSV
          </a>
        )}
      </div>

      {list.error ? (
        // A cursor from an old or hand-edited link is refused (400): the first page is the way on.
        view.cursor && list.error instanceof ApiError && list.error.status === 400
          ? <Alert tone="warning" title="This page cannot be shown"
              action={<Button size="small" onClick={() => show({ ...view, page: 1, cursor: null })}>Go to the first page</Button>}>
              {list.error.detail}
            </Alert>
          : <ErrorAlert error={list.error} retry={refresh} />
      ) : null}
      {!data && !list.error && <LoadingBlock label="Loading leads" />}
      {data && !list.error && data.leads.length === 0 && (
        view.cursor
          ? <EmptyState icon="leads" title="This page is empty" action={<Button onClick={() => show({ ...view, page: 1, cursor: null })}>Go to the first page</Button>}>
              The leads that were here have moved or been removed.
            </EmptyState>
          : filtered
            ? <EmptyState icon="search" title={view.q ? `No leads match “${view.q}”` : 'No leads match these filters'}
                action={<Button onClick={() => { setText(''); applied.current = ''; void navigate({ to: '/leads' }); }}>Clear search and filters</Button>}>
                {describeSearch(view, ownerText(filters.assignedToUserId))}
              </EmptyState>
            : <EmptyState icon="leads" title="No leads yet" action={<Button variant="primary" icon="plus" onClick={() => setActing('new')}>Add your first lead</Button>}>
                Add a lead, paste the transcript of a call with them, and leadrun drafts the follow-up e-mail.
              </EmptyState>
      )}
      {data && !list.error && data.leads.length > 0 && (
        <div className="table-card">
          {selected.size > 0 && (
            <div className="selection-bar" role="region" aria-label="Selected leads">
              <p className="selection-count" aria-live="polite" aria-atomic="true">
                {plural(selected.size, 'lead')} selected
                {selected.size > selectedHere && <span className="muted"> · {formatNumber(selected.size - selectedHere)} on other pages</span>}
              </p>
              <div className="selection-actions">
                <Button size="small" icon="members" onClick={() => setActing('assign')}>Assign to…</Button>
                <Button size="small" variant="primary" icon="sparkle" onClick={() => setActing('runs')}>Start runs</Button>
                <Button size="small" variant="ghost" onClick={() => setSelected(new Map())}>Clear selection</Button>
              </div>
            </div>
          )}
          <div className="table-scroll">
            <table className={`table table-stack leads-table${list.loading ? ' is-loading' : ''}`} aria-busy={list.loading}>
              <caption className="visually-hidden">
                Leads{view.q ? ` matching “${view.q}”` : ''}{view.status ? `, status ${LEAD_STATUS_LABEL[view.status]}` : ''}, page {shownPage} of {pages}
              </caption>
              <thead>
                <tr>
                  <th scope="col" className="cell-select">
                    <label className="select-all">
                      <input ref={selectAll} type="checkbox" className="row-check" checked={allHere} onChange={togglePage}
                        aria-label="Select all leads on this page" />
                      <span className="select-all-text" aria-hidden="true">Select all</span>
                    </label>
                  </th>
                  <th scope="col">Name</th>
                  <th scope="col">Company</th>
                  <th scope="col">Owner</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="nowrap">Last contact</th>
                  <th scope="col" className="nowrap">Last reply</th>
                  <th scope="col" className="align-right">Added</th>
                </tr>
              </thead>
              <tbody>
                {data.leads.map((lead) => (
                  <tr key={lead.id} className={selected.has(lead.id) ? 'row-selected' : undefined}>
                    <td className="cell-select">
                      <input type="checkbox" className="row-check" checked={selected.has(lead.id)} onChange={() => toggle(lead)}
                        aria-label={`Select ${lead.name}`} />
                    </td>
                    <td className="cell-main">
                      <Link to="/leads/$id" params={{ id: lead.id }} className="row-title">{lead.name}</Link>
                      {lead.email && <div className="row-sub lead-cell-sub">{lead.email}</div>}
                    </td>
                    <td>
                      <div>{lead.companyName ?? <span className="muted">—</span>}</div>
                      {lead.companyWebsite && (
                        <div className="row-sub lead-cell-sub">{hostOf(lead.companyWebsite)}</div>
                      )}
                    </td>
                    <td data-label="Owner" className={lead.assignedToUserId ? undefined : 'muted'}>{ownerText(lead.assignedToUserId)}</td>
                    <td><LeadStatusBadge status={lead.status} /> <DoNotContactBadge show={lead.doNotContact} /></td>
                    <td className="nowrap" data-label="Last contact"><RelativeTime iso={lead.lastContactedAt} fallback="Never" /></td>
                    <td className="nowrap" data-label="Last reply"><RelativeTime iso={lead.lastReplyAt} fallback="None" /></td>
                    <td className="align-right nowrap muted" data-label="Added"><RelativeTime iso={lead.createdAt} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of leads">
            <span className="pager-info">
              Page {formatNumber(shownPage)} of {formatNumber(pages)}
              <span className="muted"> · {formatNumber(first)}–{formatNumber(first + data.leads.length - 1)} of {formatNumber(data.count)}</span>
            </span>
            <div className="pager-buttons">
              <Button size="small" icon="chevronLeft" disabled={!view.cursor || list.loading} onClick={newer}>
                {previous === undefined ? 'First page' : 'Newer'}
              </Button>
              <Button size="small" disabled={!data.next || list.loading} onClick={older}>
                Older<Icon name="chevronRight" />
              </Button>
            </div>
          </nav>
        </div>
      )}

      {acting === 'new' && (
        <NewLeadDialog
          onClose={() => setActing(null)}
          onCreated={(lead) => {
            setActing(null);
            toast(`${lead.name} was added.`);
            void navigate({ to: '/leads/$id', params: { id: lead.id } });
          }}
        />
      )}
      {acting === 'assign' && (
        <AssignLeadsDialog
          leads={[...selected.values()]}
          onClose={() => setActing(null)}
          onFinished={({ assigned, failed, to }) => {
            setActing(null);
            // Those that failed stay selected, to try again.
            setSelected(new Map(failed.map((lead) => [lead.id, lead])));
            if (assigned > 0) toast(`${plural(assigned, 'lead')} ${to === null ? 'unassigned' : `assigned to ${to}`}.`);
            refresh();
          }}
        />
      )}
      {acting === 'runs' && <StartRunsDialog leads={[...selected.values()]} onClose={() => setActing(null)} />}
    </>
  );
}

/** What an empty search looked for, in a sentence. */
function describeSearch(view: LeadView<LeadStatus>, owner: string): string {
  const among = [
    view.status ? `${LEAD_STATUS_LABEL[view.status].toLowerCase()} leads` : 'leads',
    view.owner === 'none' ? 'assigned to nobody' : view.owner ? `assigned to ${owner === 'You' ? 'you' : owner}` : null,
  ].filter(Boolean).join(' ');
  return view.q
    ? `Searched the names, e-mails and companies of all ${among} for every word of “${view.q}”. Try fewer or shorter words, or clear the filters.`
    : `No ${among} yet. Try another status or owner, or clear the filters.`;
}

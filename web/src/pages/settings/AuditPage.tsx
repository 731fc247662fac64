// Settings / Audit log (admins only): every change made through the API, the UI or the command line, filtered
// by source, actor, action and outcome; older entries load through the Link cursor.
import { getRouteApi } from '@tanstack/react-router';
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../../api/client';
import type { AuditEntry } from '../../api/types';
import { Badge, Button, EmptyState, ErrorAlert, LoadingBlock, type Tone } from '../../components/ui';
import { displayName, formatDateTime, formatRelative, shortId } from '../../lib/format';
import { Link, useSearchUpdate } from '../../lib/router';
import { useApiQuery } from '../../lib/query';
import { AdminOnly } from './AdminOnly';

const route = getRouteApi('/_app/_admin/settings/audit');

const SOURCES = [['api', 'API key'], ['ui', 'Web app'], ['cli', 'Command line'], ['system', 'System']] as const;
const OUTCOMES = [['success', 'Success'], ['failure', 'Failure'], ['denied', 'Denied'], ['replayed', 'Replayed']] as const;
const OUTCOME_TONE: Record<AuditEntry['outcome'], Tone> = { success: 'green', failure: 'red', denied: 'amber', replayed: 'blue' };
const SOURCE_LABEL: Record<AuditEntry['source'], string> = Object.fromEntries(SOURCES) as Record<AuditEntry['source'], string>;
const PAGE_SIZE = 50;
const KNOWN_ACTIONS = ['lead.created', 'lead.updated', 'lead.imported', 'lead.deleted', 'call.created', 'call.deleted', 'run.created', 'run.batch_created', 'run.approved', 'run.approval_undone', 'run.rejected', 'run.regenerated', 'run.cancelled', 'draft.sent', 'draft.saved_to_mailbox', 'draft.delivery_failed', 'draft.delivery_retried', 'draft.edited', 'reply.classified', 'reply.sequence_stopped', 'reply.sequence_paused', 'reply.sequence_resumed', 'reply.address_suppressed', 'reply.lead_qualified', 'reply.response_requested', 'reply.next_action_set', 'reply_settings.updated', 'mail_settings.updated', 'mail_settings.smtp_checked', 'mail_settings.imap_checked', 'mail_settings.test_sent', 'sending_settings.updated', 'draft.delivery_sent_now', 'draft.delivery_cancelled', 'sequence.created', 'sequence.updated', 'sequence.deleted', 'sequence.stopped', 'sequence.paused', 'sequence.resumed', 'touch.approved', 'touch.rejected', 'touch.draft_edited', 'suppression.created', 'suppression.deleted', 'suppression.imported', 'recipient.unsubscribed', 'draft.suppressed', 'draft.bounced', 'key.created', 'key.revoked', 'member.created', 'member.removed', 'member.role_changed', 'member.password_reset_link_created', 'user.updated', 'user.password_changed', 'session.created'];

/** Admins only: the header and the guard are the route's (AdminGate). */
export function AuditPage() {
  const search = route.useSearch();
  const filters = { source: search.source ?? '', actor: search.actor ?? '', action: search.action ?? '', outcome: search.outcome ?? '' };
  const setParams = useSearchUpdate();
  const [actionText, setActionText] = useState(filters.action);
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<unknown>(null);

  // Who can be an actor: the workspace's people and keys (a member list for everyone, keys for admins).
  const actors = useApiQuery(['audit', 'actors'], async (signal) => {
    const [members, keys] = await Promise.all([
      api.get('/ui/api/members', { signal }).then((r) => r.body.data),
      api.get('/ui/api/keys', { signal }).then((r) => r.body.data, () => []),
    ]);
    return { members, keys };
  });

  const load = useCallback(async (cursor: string | null, signal?: AbortSignal) => {
    const { body, next: following } = await api.get('/ui/api/audit', {
      query: {
        source: (filters.source || null) as AuditEntry['source'] | null,
        actor: filters.actor || null,
        action: filters.action || null,
        outcome: (filters.outcome || null) as AuditEntry['outcome'] | null,
        limit: PAGE_SIZE,
        cursor,
      },
      signal,
    });
    return { data: body.data, next: following };
  }, [filters.source, filters.actor, filters.action, filters.outcome]);

  useEffect(() => {
    const controller = new AbortController();
    setEntries(null);
    setError(null);
    load(null, controller.signal).then(
      (page) => { setEntries(page.data); setNext(page.next); },
      (e: unknown) => { if (!controller.signal.aborted) setError(e); },
    );
    return () => controller.abort();
  }, [load]);

  // The action box filters as you stop typing.
  useEffect(() => {
    const timer = window.setTimeout(() => { if (actionText.trim() !== filters.action) setParams({ action: actionText.trim() || null }); }, 350);
    return () => window.clearTimeout(timer);
  }, [actionText, filters.action, setParams]);

  const loadMore = async () => {
    if (!next) return;
    setLoadingMore(true);
    try {
      const page = await load(next);
      setEntries((list) => [...(list ?? []), ...page.data]);
      setNext(page.next);
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  };

  if (error instanceof ApiError && error.status === 403) return <AdminOnly what="the audit log" />;
  const filtered = Object.values(filters).some(Boolean);

  return (
    <>
      <form className="filters" role="search" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
        <div className="toolbar-field">
          <label htmlFor="audit-source" className="toolbar-label">Source</label>
          <select id="audit-source" className="input select" value={filters.source} onChange={(e) => setParams({ source: e.target.value })}>
            <option value="">Any source</option>
            {SOURCES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </div>
        <div className="toolbar-field">
          <label htmlFor="audit-actor" className="toolbar-label">Actor</label>
          <select id="audit-actor" className="input select" value={filters.actor} onChange={(e) => setParams({ actor: e.target.value })}>
            <option value="">Anyone</option>
            {actors.data && actors.data.members.length > 0 && (
              <optgroup label="People">
                {actors.data.members.map((m) => <option key={m.id} value={m.id}>{displayName(m)}</option>)}
              </optgroup>
            )}
            {actors.data && actors.data.keys.length > 0 && (
              <optgroup label="API keys">
                {actors.data.keys.map((k) => <option key={k.id} value={k.id}>{k.name} ({k.prefix}…)</option>)}
              </optgroup>
            )}
          </select>
        </div>
        <div className="toolbar-field">
          <label htmlFor="audit-action" className="toolbar-label">Action</label>
          <input id="audit-action" className="input" list="audit-actions" placeholder="e.g. lead.created" value={actionText}
            onChange={(e) => setActionText(e.target.value)} autoComplete="off" />
          <datalist id="audit-actions">{KNOWN_ACTIONS.map((a) => <option key={a} value={a} />)}</datalist>
        </div>
        <div className="toolbar-field">
          <label htmlFor="audit-outcome" className="toolbar-label">Outcome</label>
          <select id="audit-outcome" className="input select" value={filters.outcome} onChange={(e) => setParams({ outcome: e.target.value })}>
            <option value="">Any outcome</option>
            {OUTCOMES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </div>
        {filtered && (
          <Button variant="ghost" size="small" className="filters-clear"
            onClick={() => { setActionText(''); setParams({ source: null, actor: null, action: null, outcome: null }); }}>
            Clear filters
          </Button>
        )}
      </form>

      {error ? <ErrorAlert error={error} /> : null}
      {!entries && !error && <LoadingBlock label="Loading the audit log" />}
      {entries?.length === 0 && (
        <EmptyState icon="audit" title={filtered ? 'No entries match' : 'Nothing recorded yet'}>
          {filtered ? 'Try fewer filters.' : 'Changes made through the API, the web app or the command line appear here.'}
        </EmptyState>
      )}
      {entries && entries.length > 0 && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-compact table-stack audit-table">
              <caption className="visually-hidden">Audit log entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Source</th>
                  <th scope="col">IP</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((entry) => (
                  <tr key={entry.id}>
                    <td className="nowrap"><time dateTime={entry.occurredAt} title={formatDateTime(entry.occurredAt)}>{formatRelative(entry.occurredAt)}</time></td>
                    <td><Actor entry={entry} /></td>
                    <td className="cell-main"><code className="action">{entry.action}</code></td>
                    <td><Target target={entry.target} /></td>
                    <td className="nowrap">
                      <Badge tone={OUTCOME_TONE[entry.outcome]}>{entry.outcome}</Badge>
                      {entry.status !== null && <span className="muted small"> {entry.status}</span>}
                    </td>
                    <td className="nowrap">{SOURCE_LABEL[entry.source] ?? entry.source}</td>
                    <td className="mono small nowrap" data-label="IP">{entry.ip ?? '—'}</td>
                    <td className="mono small nowrap" data-label="Request" title={entry.userAgent ?? undefined}>{entry.requestId ? shortId(entry.requestId) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="pager">
            <span className="pager-info">{entries.length} entries{next ? '' : ' · the end'}</span>
            {next && <Button size="small" busy={loadingMore} onClick={() => void loadMore()}>Load older entries</Button>}
          </div>
        </div>
      )}
    </>
  );
}

function Actor({ entry }: { entry: AuditEntry }) {
  if (entry.user) return <span title={entry.user.email ?? undefined}>{displayName(entry.user)}{entry.user.removed && <span className="removed-tag"> (removed)</span>}</span>;
  if (entry.key) return <span>{entry.key.name} <code className="key-prefix">{entry.key.prefix}…</code></span>;
  if (entry.source === 'cli') return <span className="muted">Command line</span>;
  return <span className="muted">{entry.keyId ? `Key ${shortId(entry.keyId)}` : entry.source === 'system' ? 'System' : 'Unknown'}</span>;
}

function Target({ target }: { target: AuditEntry['target'] }) {
  if (!target) return <span className="muted">—</span>;
  const label = <><span className="muted">{target.type}</span> <span className="mono">{shortId(target.id)}</span></>;
  if (target.type === 'lead') return <Link to="/leads/$id" params={{ id: target.id }}>{label}</Link>;
  if (target.type === 'run') return <Link to="/runs/$id" params={{ id: target.id }}>{label}</Link>;
  if (target.type === 'batch') return <Link to="/runs/batches/$id" params={{ id: target.id }}>{label}</Link>;
  return <span>{label}</span>;
}

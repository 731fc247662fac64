// One lead: who they are and who owns them (edit every field), the calls held with them (add one by pasting its
// transcript, start a run from one, delete one) and the runs made for them; and the lead's erasure.
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { api, ApiError } from '../api/client';
import { LEAD_STATUSES, type Call, type LeadStatus } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Alert, Badge, Button, Card, DoNotContactBadge, EmptyState, ErrorAlert, LoadingBlock, PageHeader, RelativeTime, RunStatusBadge } from '../components/ui';
import {
  callTitle, formatDate, formatDateTime, hostOf, LEAD_STATUS_LABEL, plural, TRANSCRIPT_FORMAT_LABEL,
} from '../lib/format';
import { ownerName, useMembers } from '../lib/members';
import { Link } from '../lib/router';
import { useSignedIn } from '../lib/session';
import { useApiQuery, useTitle } from '../lib/query';
import { AddCallDialog } from './CallForm';
import { DeleteCallDialog, DeleteLeadDialog } from './LeadErasureDialogs';
import { EditLeadDialog } from './LeadForm';
import { ReplyPanel } from './run/ReplyPanel';

function minutes(seconds: number | null): string | null {
  if (seconds === null) return null;
  return seconds < 60 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

const route = getRouteApi('/_app/leads/$id');

export function LeadPage() {
  const { id } = route.useParams();
  const navigate = useNavigate();
  const toast = useToast();
  const lead = useApiQuery(['lead', id], (signal) => api.get('/api/v1/leads/{id}', { params: { id }, signal }).then((r) => r.body.data));
  const calls = useApiQuery(['lead', id, 'calls'], (signal) => api.get('/api/v1/leads/{leadId}/calls', { params: { leadId: id }, query: { limit: 50 }, signal }).then((r) => r.body.data));
  const runs = useApiQuery(['lead', id, 'runs'], (signal) => api.get('/api/v1/runs', { query: { leadId: id, limit: 20 }, signal }).then((r) => r.body.data));
  useTitle(lead.data?.name ?? 'Lead');
  const [adding, setAdding] = useState(false);
  const [starting, setStarting] = useState<string | null>(null);
  const [startError, setStartError] = useState<unknown>(null);
  const [savingStatus, setSavingStatus] = useState(false);
  const [acting, setActing] = useState<{ kind: 'edit' | 'delete' } | { kind: 'delete-call'; call: Call } | null>(null);
  const session = useSignedIn();
  const members = useMembers();

  // A lead that is not there (deleted, or a mistyped link) will not appear by trying again: say so and lead back.
  if (lead.error instanceof ApiError && (lead.error.status === 404 || lead.error.status === 400)) {
    return (
      <>
        <BackLink />
        <EmptyState
          icon="search"
          title="This lead does not exist"
          action={<Link to="/leads" className="button button-primary button-medium">Back to leads</Link>}>
          It may have been deleted, or the link is mistyped.
        </EmptyState>
      </>
    );
  }
  if (lead.error) return <><BackLink /><ErrorAlert error={lead.error} retry={lead.reload} /></>;
  if (!lead.data) return <LoadingBlock label="Loading lead" />;
  const person = lead.data;

  const startRun = async (call: Call) => {
    setStarting(call.id);
    setStartError(null);
    try {
      const { body } = await api.post('/api/v1/runs', { body: { leadId: person.id, callId: call.id } });
      void navigate({ to: '/runs/$id', params: { id: body.id } });
    } catch (error) {
      setStartError(error);
      setStarting(null);
    }
  };

  const changeStatus = async (status: LeadStatus) => {
    setSavingStatus(true);
    try {
      const { body } = await api.patch('/api/v1/leads/{id}', { params: { id: person.id }, body: { status } });
      lead.set(body.data);
      toast(`${person.name} is now ${LEAD_STATUS_LABEL[status].toLowerCase()}.`);
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'The status could not be changed.', 'error');
    } finally {
      setSavingStatus(false);
    }
  };

  const limitReached = startError instanceof ApiError && startError.code === 'run_limit_reached';
  // The newest reply across the lead's runs: each run in the list carries its own newest one.
  const replied = (runs.data ?? []).filter((r) => r.reply).sort((a, b) => b.reply!.receivedAt.localeCompare(a.reply!.receivedAt))[0];
  return (
    <>
      <BackLink />
      <PageHeader
        title={person.name}
        description={[person.companyName, person.email].filter(Boolean).join(' · ') || undefined}
        actions={<>
          <DoNotContactBadge show={person.doNotContact} />
          <div className="toolbar-field">
            <label htmlFor="lead-status-change" className="toolbar-label">Status</label>
            <select id="lead-status-change" className="input select" value={person.status} disabled={savingStatus}
              onChange={(e) => void changeStatus(e.target.value as LeadStatus)}>
              {LEAD_STATUSES.map((s) => <option key={s} value={s}>{LEAD_STATUS_LABEL[s]}</option>)}
            </select>
          </div>
          <Button icon="edit" onClick={() => setActing({ kind: 'edit' })}>Edit</Button>
          <Button variant="ghost" icon="trash" className="danger-text" onClick={() => setActing({ kind: 'delete' })}>Delete</Button>
        </>}
      />

      <dl className="facts-strip facts-strip-8">
        <div>
          <dt>E-mail</dt>
          <dd>{person.email
            ? <a href={`mailto:${person.email}`} title={person.email}><span className="truncate">{person.email}</span></a>
            : <span className="muted">Not known</span>}</dd>
        </div>
        <div><dt>Company</dt><dd title={person.companyName ?? undefined}>{person.companyName ?? <span className="muted">Not known</span>}</dd></div>
        <div>
          <dt>Website</dt>
          <dd>{person.companyWebsite
            ? <a href={person.companyWebsite} target="_blank" rel="noopener noreferrer" title={person.companyWebsite}>
                <span className="truncate">{hostOf(person.companyWebsite)}</span> <Icon name="external" size={12} />
              </a>
            : <span className="muted">None — research will be skipped</span>}</dd>
        </div>
        <div><dt>Added</dt><dd><time dateTime={person.createdAt}>{formatDate(person.createdAt)}</time></dd></div>
        <div><dt>Owner</dt><dd className={person.assignedToUserId ? undefined : 'muted'}>{ownerName(person.assignedToUserId, members.data, session.user.id)}</dd></div>
        <div><dt>Last contact</dt><dd><RelativeTime iso={person.lastContactedAt} fallback="Never" /></dd></div>
        <div><dt>Last reply</dt><dd><RelativeTime iso={person.lastReplyAt} fallback="None" /></dd></div>
        <div><dt>Time zone</dt><dd className={person.timeZone ? undefined : 'muted'}>{person.timeZone ?? 'The workspace\'s'}</dd></div>
        {person.nextActionAt && <div><dt>Next action</dt><dd><time dateTime={person.nextActionAt}>{formatDate(person.nextActionAt)}</time></dd></div>}
      </dl>

      {replied?.reply && <ReplyPanel reply={replied.reply} runId={replied.id} title="Last reply" />}

      {startError ? (
        limitReached ? (
          <Alert tone="warning" title="This month's runs are used up"
            action={<Link to="/settings/usage" className="button button-secondary button-small">See usage</Link>}>
            Your Free plan allows {String(startError.problem.limit ?? '')} runs a month. New runs can start again on {formatDate(String(startError.problem.resetsAt ?? ''))}.
          </Alert>
        ) : <ErrorAlert error={startError} />
      ) : null}

      <div className="split">
        <Card title="Calls" titleId="calls-title" actions={<Button icon="plus" size="small" onClick={() => setAdding(true)}>Add call</Button>}>
          {calls.error ? <ErrorAlert error={calls.error} retry={calls.reload} /> : null}
          {!calls.data && !calls.error && <LoadingBlock label="Loading calls" />}
          {calls.data?.length === 0 && (
            <EmptyState icon="phone" title="No calls yet" action={<Button variant="primary" icon="plus" onClick={() => setAdding(true)}>Add a call</Button>}>
              Paste the transcript of a conversation with {person.name} to draft a follow-up.
            </EmptyState>
          )}
          {calls.data && calls.data.length > 0 && (
            <ul className="call-list">
              {calls.data.map((call) => (
                <li key={call.id} className="call">
                  <div className="call-head">
                    <div>
                      <h3 className="call-title">{callTitle(call)}</h3>
                      <p className="call-meta">
                        {call.occurredAt ? formatDateTime(call.occurredAt) : <>Added <RelativeTime iso={call.createdAt} /></>}
                        {minutes(call.durationSeconds) && <> · {minutes(call.durationSeconds)}</>}
                        {' · '}{plural(call.transcript.split('\n').filter((l) => l.trim()).length, 'line')}
                        {' · '}<span className="call-format" title="The transcript's format, as detected">
                          {TRANSCRIPT_FORMAT_LABEL[call.format] ?? call.format}
                        </span>
                      </p>
                    </div>
                    <div className="call-actions">
                      <Button variant="primary" size="small" icon="sparkle" busy={starting === call.id} disabled={starting !== null}
                        onClick={() => void startRun(call)} aria-label={`Draft a follow-up from ${callTitle(call)}`}>
                        Draft follow-up
                      </Button>
                      <Button variant="ghost" size="small" icon="trash" onClick={() => setActing({ kind: 'delete-call', call })}
                        aria-label={`Delete ${callTitle(call)}`} title="Delete the call" />
                    </div>
                  </div>
                  <blockquote className="call-excerpt">{call.transcript.split('\n').filter((l) => l.trim()).slice(0, 3).join('\n')}</blockquote>
                  {call.transcript.split('\n').filter((l) => l.trim()).length > 3 && (
                    <details className="call-details">
                      <summary>Show the whole transcript</summary>
                      <pre className="transcript">{call.transcript}</pre>
                    </details>
                  )}
                </li>
              ))}
            </ul>
          )}
        </Card>

        <Card title="Runs" titleId="runs-title">
          {runs.error ? <ErrorAlert error={runs.error} retry={runs.reload} /> : null}
          {!runs.data && !runs.error && <LoadingBlock label="Loading runs" />}
          {runs.data?.length === 0 && <p className="card-empty">No runs yet. Start one from a call: it researches the company, reads the call and drafts an e-mail.</p>}
          {runs.data && runs.data.length > 0 && (
            <ul className="run-list">
              {runs.data.map((run) => (
                <li key={run.id}>
                  <Link to="/runs/$id" params={{ id: run.id }} className="run-item">
                    <span className="run-item-top">
                      <span className="run-item-badges">
                        <RunStatusBadge status={run.status} />
                        {run.reply && <Badge tone="green">Replied</Badge>}
                      </span>
                      <span className="muted small"><RelativeTime iso={run.startedAt} /></span>
                    </span>
                    <span className="run-item-subject">{run.emailDraft?.subject ?? (run.status === 'FAILED' ? 'No draft: the run failed' : run.status === 'CANCELLED' ? 'Cancelled before a draft' : 'Drafting…')}</span>
                  </Link>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>

      {adding && (
        <AddCallDialog
          leadId={person.id}
          leadName={person.name}
          onClose={() => setAdding(false)}
          onAdded={(call) => {
            setAdding(false);
            calls.set((list) => [call, ...(list ?? [])]);
            toast('Call added. Draft a follow-up from it when you are ready.');
          }}
        />
      )}
      {acting?.kind === 'edit' && (
        <EditLeadDialog
          lead={person}
          onClose={() => setActing(null)}
          onSaved={(saved) => {
            setActing(null);
            lead.set(saved);
            toast(`${saved.name} was saved.`);
          }}
        />
      )}
      {acting?.kind === 'delete' && (
        <DeleteLeadDialog
          lead={person}
          onClose={() => setActing(null)}
          onDeleted={(erased) => {
            toast(`${erased.name} was deleted, with ${plural(erased.calls, 'call')} and ${plural(erased.runs, 'run')}.`);
            void navigate({ to: '/leads' });
          }}
        />
      )}
      {acting?.kind === 'delete-call' && (
        <DeleteCallDialog
          lead={person}
          call={acting.call}
          onClose={() => setActing(null)}
          onDeleted={(removedRuns) => {
            setActing(null);
            calls.set((list) => (list ?? []).filter((c) => c.id !== acting.call.id));
            if (removedRuns > 0) void runs.reload();
            toast(`“${callTitle(acting.call)}” was deleted${removedRuns > 0 ? `, with ${plural(removedRuns, 'run')}` : ''}.`);
          }}
        />
      )}
    </>
  );
}

function BackLink() {
  return <Link to="/leads" className="back-link"><Icon name="chevronLeft" /> Leads</Link>;
}

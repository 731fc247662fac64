// What is done to the leads selected on the Leads page: assign them to someone (one PATCH each, a few at a time,
// with progress and what failed), or start a run for each one's latest call in one batch (leads without a call are
// named as skipped).
import { useEffect, useState } from 'react';
import { api, ApiError, errorMessage } from '../api/client';
import type { Call, Lead } from '../api/types';
import { Dialog } from '../components/Dialog';
import { Alert, Button, ErrorAlert, Field, LoadingBlock } from '../components/ui';
import { MAX_BATCH_RUNS, useStartBatch, type BatchItem } from '../lib/batch';
import { eachAtMost } from '../lib/concurrent';
import { callTitle, displayName, formatDate, formatNumber, plural } from '../lib/format';
import { useMembers } from '../lib/members';
import { Link } from '../lib/router';
import { useSignedIn } from '../lib/session';

/** Requests in flight at once for a selection: quick for a hundred leads, gentle on the rate limit. */
const AT_ONCE = 4;

interface Failure { lead: Lead; message: string }

/** A lead deleted since it was selected. */
const isGone = (error: unknown) => error instanceof ApiError && error.status === 404;
const GONE = 'it was deleted since you selected it.';

function Progress({ label, done, total }: { label: string; done: number; total: number }) {
  return (
    <div className="bulk-progress">
      <p>{label} {formatNumber(done)} of {formatNumber(total)}…</p>
      <div className="meter" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={done}
        aria-valuetext={`${formatNumber(done)} of ${formatNumber(total)}`}>
        <span className="meter-fill" style={{ width: `${total ? (done / total) * 100 : 0}%` }} />
      </div>
    </div>
  );
}

function Failures({ failures }: { failures: readonly Failure[] }) {
  return (
    <ul className="bulk-list">
      {failures.map(({ lead, message }) => <li key={lead.id}><strong>{lead.name}</strong>: {message}</li>)}
    </ul>
  );
}

export interface AssignOutcome {
  /** How many leads were assigned. */
  assigned: number;
  /** The leads that could not be and still exist, to try again. */
  failed: Lead[];
  /** The name of the person they went to; null when they were unassigned. */
  to: string | null;
}

export function AssignLeadsDialog({ leads, onClose, onFinished }: { leads: readonly Lead[]; onClose(): void; onFinished(outcome: AssignOutcome): void }) {
  const session = useSignedIn();
  const members = useMembers();
  const [to, setTo] = useState('');
  const [missing, setMissing] = useState<string | undefined>();
  const [done, setDone] = useState<number | null>(null);
  const [outcome, setOutcome] = useState<(AssignOutcome & { failures: Failure[] }) | null>(null);
  const busy = done !== null && outcome === null;
  const nameOf = (id: string) => {
    const member = members.data?.find((m) => m.id === id);
    return member ? displayName(member) : 'the chosen person';
  };

  const assign = async () => {
    if (!to) {
      setMissing('Choose who the leads go to.');
      return;
    }
    setMissing(undefined);
    setDone(0);
    const assignedToUserId = to === 'none' ? null : to;
    const results = await eachAtMost(
      leads, AT_ONCE,
      (lead) => api.patch('/api/v1/leads/{id}', { params: { id: lead.id }, body: { assignedToUserId } }),
      setDone,
    );
    const failures = results.flatMap((r, i) => (r.ok ? [] : [{ lead: leads[i]!, gone: isGone(r.error), message: isGone(r.error) ? GONE : errorMessage(r.error) }]));
    const result = {
      assigned: leads.length - failures.length,
      failed: failures.filter((f) => !f.gone).map((f) => f.lead),
      to: assignedToUserId ? nameOf(assignedToUserId) : null,
    };
    if (failures.length === 0) onFinished(result);
    else setOutcome({ ...result, failures });
  };

  if (outcome) {
    return (
      <Dialog title={`${plural(outcome.failures.length, 'lead')} could not be ${outcome.to === null ? 'unassigned' : 'assigned'}`}
        onClose={() => onFinished(outcome)}
        footer={<Button variant="primary" onClick={() => onFinished(outcome)}>Done</Button>}>
        <Alert tone="warning" title={`${formatNumber(outcome.assigned)} of ${plural(leads.length, 'lead')} ${outcome.to === null ? 'unassigned' : `assigned to ${outcome.to}`}`}>
          {outcome.failed.length > 0 ? 'These were not changed; those that still exist stay selected:' : 'These were not changed:'}
          <Failures failures={outcome.failures} />
        </Alert>
      </Dialog>
    );
  }
  return (
    <Dialog
      title={`Assign ${plural(leads.length, 'lead')}`}
      description="Each selected lead goes to the person you choose, whoever had it before."
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy}>Cancel</Button>
        <Button type="submit" form="assign-leads" variant="primary" busy={busy}>{to === 'none' ? 'Unassign' : 'Assign'}</Button>
      </>}
    >
      <form id="assign-leads" className="form" noValidate onSubmit={(e) => { e.preventDefault(); void assign(); }}>
        {members.error ? <ErrorAlert error={members.error} retry={members.reload} /> : null}
        <Field label="Assign to" error={missing}>
          {(p) => (
            <select {...p} className="input select" value={to} onChange={(e) => setTo(e.target.value)} disabled={busy} autoFocus>
              <option value="" disabled>{members.data ? 'Choose a person…' : 'Loading members…'}</option>
              {members.data?.map((m) => <option key={m.id} value={m.id}>{displayName(m)}{m.id === session.user.id ? ' (you)' : ''}</option>)}
              <option value="none">Nobody (unassign)</option>
            </select>
          )}
        </Field>
        {done !== null && <Progress label={to === 'none' ? 'Unassigning' : 'Assigning'} done={done} total={leads.length} />}
      </form>
    </Dialog>
  );
}

type Found = { lead: Lead; call: Call | null } | { lead: Lead; error: unknown };

/** "runs[3].callId" → 3: the item of the batch a problem names. */
function itemOf(field: string): number | null {
  const match = /^\/?runs[[/.](\d+)/.exec(field);
  return match ? Number(match[1]) : null;
}

export function StartRunsDialog({ leads: selected, onClose }: { leads: readonly Lead[]; onClose(): void }) {
  const startBatch = useStartBatch();
  // The selection when the dialog opened: what it looks up, lists and starts.
  const [leads] = useState(selected);
  const [looked, setLooked] = useState(0);
  const [found, setFound] = useState<Found[] | null>(null);
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);

  // Each lead's latest call: its calls are listed newest first, so the first of a one-item page.
  useEffect(() => {
    const controller = new AbortController();
    void eachAtMost(
      leads, AT_ONCE,
      (lead) => api.get('/api/v1/leads/{leadId}/calls', { params: { leadId: lead.id }, query: { limit: 1 }, signal: controller.signal }).then((r) => r.body.data[0] ?? null),
      (n) => { if (!controller.signal.aborted) setLooked(n); },
    ).then((results) => {
      if (controller.signal.aborted) return;
      setFound(results.map((r, i) => (r.ok ? { lead: leads[i]!, call: r.value } : { lead: leads[i]!, error: r.error })));
    });
    return () => controller.abort();
  }, [leads]);

  const ready = (found ?? []).flatMap((f) => ('call' in f && f.call ? [{ lead: f.lead, call: f.call }] : []));
  const withoutCall = (found ?? []).filter((f) => 'call' in f && !f.call).map((f) => f.lead);
  const unreadable = (found ?? []).flatMap((f) => ('error' in f ? [{ lead: f.lead, message: errorMessage(f.error) }] : []));
  const tooMany = ready.length > MAX_BATCH_RUNS;

  const start = async () => {
    setStarting(true);
    setError(null);
    try {
      const items: BatchItem[] = ready.map(({ lead, call }) => ({ leadId: lead.id, callId: call.id }));
      await startBatch(items); // opens the batch's page
    } catch (e) {
      setError(e);
      setStarting(false);
    }
  };

  const limitReached = error instanceof ApiError && error.code === 'run_limit_reached';
  const named = error instanceof ApiError
    ? error.errors.flatMap((e) => {
      const index = itemOf(e.field);
      const item = index === null ? undefined : ready[index];
      return item ? [{ lead: item.lead, message: e.message }] : [];
    })
    : [];
  return (
    <Dialog
      title={found && ready.length > 0 ? `Start ${plural(ready.length, 'run')}` : found ? 'No run to start' : 'Start runs'}
      description="Each lead's latest call is researched and analysed, and a follow-up is drafted for you to review."
      onClose={onClose}
      busy={starting}
      size="medium"
      footer={<>
        <Button onClick={onClose} disabled={starting}>Cancel</Button>
        <Button variant="primary" icon="sparkle" busy={starting} disabled={!found || ready.length === 0 || tooMany} onClick={() => void start()}>
          {found && ready.length > 0 ? `Start ${plural(ready.length, 'run')}` : 'Start runs'}
        </Button>
      </>}
    >
      {!found && (leads.length > AT_ONCE
        ? <Progress label="Finding the latest calls:" done={looked} total={leads.length} />
        : <LoadingBlock label="Finding the latest calls" />)}
      {limitReached && (
        <Alert tone="warning" title={Number(error.problem.used) >= Number(error.problem.limit) ? "This month's runs are used up" : "Not enough runs are left this month"}
          action={<Link to="/settings/usage" className="button button-secondary button-small">See usage</Link>}>
          {error.detail}
        </Alert>
      )}
      {error && !limitReached ? (
        named.length > 0
          ? <Alert tone="error" title="No run was started">The batch was refused because of these leads:<Failures failures={named} /></Alert>
          : <ErrorAlert error={error} />
      ) : null}
      {found && tooMany && (
        <Alert tone="error" title={`At most ${formatNumber(MAX_BATCH_RUNS)} runs start together`}>
          {plural(ready.length, 'selected lead has', 'selected leads have')} a call. Select at most {formatNumber(MAX_BATCH_RUNS)} and start the rest afterwards.
        </Alert>
      )}
      {found && withoutCall.length > 0 && (
        <Alert tone="info" title={`${plural(withoutCall.length, 'lead has', 'leads have')} no call and will be skipped`}>
          {withoutCall.map((lead) => lead.name).join(', ')}. Add a call on a lead's page to draft a follow-up for them.
        </Alert>
      )}
      {found && unreadable.length > 0 && (
        <Alert tone="warning" title={`${plural(unreadable.length, 'lead')} could not be read and will be skipped`}>
          <Failures failures={unreadable} />
        </Alert>
      )}
      {found && ready.length > 0 && (
        <div className="bulk-runs">
          <p className="field-label" id="bulk-runs-title">{ready.length === 1 ? 'The run' : 'The runs'}, each from the lead's latest call</p>
          <ul className="bulk-list" aria-labelledby="bulk-runs-title">
            {ready.map(({ lead, call }) => (
              <li key={lead.id}>
                <strong>{lead.name}</strong>
                <span className="muted"> · {callTitle(call)}{call.title ? `, ${formatDate(call.occurredAt ?? call.createdAt)}` : ''}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </Dialog>
  );
}

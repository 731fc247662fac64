// The approval queue: the drafts awaiting approval, oldest first (or those of one batch: ?batch=…), one at a time,
// each with its lead, recipient, subject, body and grounding verdict. A decision moves on to the next draft.
// Everything is a button; the keyboard shortcuts (shown beside the draft) never fire while a field or a dialog has
// the focus.
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { api, ApiError } from '../api/client';
import type { Lead, Run, WriterOutput } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Alert, Badge, Button, DoNotContactBadge, EmptyState, ErrorAlert, LoadingBlock, PageHeader, RelativeTime } from '../components/ui';
import {
  approveChoices, APPROVE_KEY_LABEL, APPROVE_LABEL, useApprove, useMailCapabilities, type Deliver,
} from '../lib/delivery';
import { formatNumber, plural } from '../lib/format';
import { Link } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';
import { RejectDialog } from './run/RejectDialog';
import { SendTimePicker, type SendAt } from './run/SendTimePicker';
import { SequencePicker } from './run/SequencePicker';
import { ThreadReviewQueue } from './run/ThreadReviewQueue';
import { RepliesToAnswer } from './review/RepliesToAnswer';

const route = getRouteApi('/_app/runs/review');
/** While nothing awaits, the queue looks for new drafts this often. */
const EMPTY_POLL_MS = 5000;

type Action = 'approve' | 'reject' | 'edit' | 'next' | 'previous';

const SHORTCUTS: Record<string, Action> = { a: 'approve', r: 'reject', e: 'edit', j: 'next', ArrowRight: 'next', k: 'previous', ArrowLeft: 'previous' };
/** The keys explained; A's label says what it does with the e-mail (the workspace's default delivery). */
const legend = (approve: Deliver): { keys: string[]; label: string }[] => [
  { keys: ['A'], label: APPROVE_KEY_LABEL[approve] },
  { keys: ['R'], label: 'Reject or regenerate' },
  { keys: ['E'], label: 'Edit (opens the run)' },
  { keys: ['J', '→'], label: 'Next draft' },
  { keys: ['K', '←'], label: 'Previous draft' },
];

/** Whether a key press belongs to what has the focus: a field being typed in, or an open dialog. */
function typingIn(target: EventTarget | null): boolean {
  return target instanceof Element && target.closest('input, textarea, select, [contenteditable], dialog') !== null;
}

export function ReviewPage() {
  useTitle('Review drafts');
  const batch = route.useSearch().batch ?? null;
  const navigate = useNavigate();
  const toast = useToast();

  const [queue, setQueue] = useState<Run[] | null>(null);
  const [index, setIndex] = useState(0);
  const indexRef = useRef(0);
  indexRef.current = index;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const choices = approveChoices(useMailCapabilities());
  const [rejecting, setRejecting] = useState(false);
  const [decided, setDecided] = useState(0);
  const [announcement, setAnnouncement] = useState('');
  const [leads, setLeads] = useState<Record<string, Lead | null>>({});
  // The follow-ups and the send time of the draft on screen, as the run page offers them (DESIGN §13, §14): the
  // workspace's default sequence and "now" until the person picks otherwise, afresh for each draft.
  const [sequenceId, setSequenceId] = useState<string | null | undefined>(undefined);
  const [sendAt, setSendAt] = useState<SendAt>(undefined);
  const asked = useRef(new Set<string>());
  const heading = useRef<HTMLHeadingElement>(null);
  const moved = useRef(false);

  // The drafts awaiting approval, oldest first. The queue on screen is taken from them when it is empty (at first, and
  // once every draft is decided); while it is empty they are read again now and then, for runs that finish meanwhile.
  const awaiting = useApiQuery(['runs', 'AWAITING_APPROVAL', batch], async (signal) => {
    const { body } = await api.get('/api/v1/runs', { query: { status: 'AWAITING_APPROVAL', order: 'oldest', limit: 100, batchId: batch }, signal });
    return body.data;
  }, { refetchInterval: (runs) => (runs?.length === 0 ? EMPTY_POLL_MS : false) });
  const empty = queue?.length === 0;
  useEffect(() => {
    if (!awaiting.data || (queue && !(empty && awaiting.data.length))) return;
    setQueue(awaiting.data);
    setIndex(0);
  }, [awaiting.data]); // eslint-disable-line react-hooks/exhaustive-deps
  const reload = awaiting.reload;

  const current = queue && index < queue.length ? queue[index] : undefined;
  useEffect(() => {
    setSequenceId(undefined);
    setSendAt(undefined);
  }, [current?.id]);
  const lead = current ? leads[current.leadId] : undefined;

  // The lead of the draft on show, and of the next one, each read once.
  useEffect(() => {
    for (const run of [current, queue?.[index + 1]]) {
      if (!run || asked.current.has(run.leadId)) continue;
      asked.current.add(run.leadId);
      api.get('/api/v1/leads/{id}', { params: { id: run.leadId } }).then(
        ({ body }) => setLeads((known) => ({ ...known, [run.leadId]: body.data })),
        () => setLeads((known) => ({ ...known, [run.leadId]: null })),
      );
    }
  }, [current, queue, index]);

  // After a decision or a move, the focus goes to the draft now on show (or to the page's end state).
  useEffect(() => {
    if (!moved.current) return;
    moved.current = false;
    heading.current?.focus();
  }, [current?.id, index, queue?.length]);

  const go = (to: number) => {
    if (!queue) return;
    const next = Math.max(0, Math.min(queue.length, to));
    if (next === index) return;
    moved.current = true;
    setIndex(next);
    setAnnouncement(next < queue.length ? `Draft ${next + 1} of ${queue.length}.` : 'You have been through every draft.');
  };

  /** Takes the decided draft out of the queue; the next one slides into its place. */
  const settle = async (run: Run, message: string) => {
    moved.current = true;
    setDecided((n) => n + 1);
    const rest = (queue ?? []).filter((r) => r.id !== run.id);
    setQueue(rest);
    setAnnouncement(`${message} ${index < rest.length ? `Draft ${index + 1} of ${rest.length}.` : rest.length ? 'You have been through every draft.' : ''}`);
    // The last one decided: more may be waiting beyond the first hundred, or may have arrived meanwhile.
    if (rest.length === 0) await reload();
  };

  const nameOf = (run: Run) => leads[run.leadId]?.name ?? 'this lead';

  /** An approval undone: the draft comes back where the reviewer is, to be decided again. */
  const restore = (run: Run) => {
    moved.current = true;
    setDecided((n) => Math.max(0, n - 1));
    setQueue((list) => {
      const rest = (list ?? []).filter((r) => r.id !== run.id);
      const at = Math.min(indexRef.current, rest.length);
      return [...rest.slice(0, at), run, ...rest.slice(at)];
    });
    setAnnouncement(`The draft for ${nameOf(run)} is back; it awaits approval.`);
  };

  // `A` approves with the workspace's default delivery (its label says which); the other choices are buttons beside
  // it. A delivering approval waits on the server for a few seconds, with Undo in the toast (useApprove).
  const approveWithUndo = useApprove();
  const approve = async (deliver: Deliver = choices[0]!) => {
    // "At…" with no time yet: nothing to approve with (the buttons say so by being disabled; `A` too).
    if (!current || busy || (deliver !== 'none' && sendAt === null)) return;
    setBusy(true);
    setError(null);
    try {
      await approveWithUndo(current.id, deliver, `Approved the draft for ${nameOf(current)}.`, restore,
        deliver === 'none' ? undefined : sequenceId, deliver === 'none' ? undefined : sendAt ?? undefined);
      await settle(current, `Approved the draft for ${nameOf(current)}.`);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'invalid_state') await settle(current, 'That draft was already decided elsewhere.');
      else setError(e);
    } finally {
      setBusy(false);
    }
  };

  const act = (action: Action) => {
    if (!queue || busy || rejecting) return;
    switch (action) {
      case 'approve': return void approve();
      case 'reject': if (current) setRejecting(true); return;
      // Draft editing arrives with another change (PATCH /api/v1/runs/{id}/draft); until then `e` opens the run.
      case 'edit': if (current) void navigate({ to: '/runs/$id', params: { id: current.id } }); return;
      case 'next': return go(index + 1);
      case 'previous': return go(index - 1);
    }
  };
  const latest = useRef(act);
  latest.current = act;

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat || event.ctrlKey || event.metaKey || event.altKey || typingIn(event.target)) return;
      const action = SHORTCUTS[event.key.length === 1 ? event.key.toLowerCase() : event.key];
      if (!action) return;
      event.preventDefault();
      latest.current(action);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const pageHeader = (
    <PageHeader
      eyebrow="Approval queue"
      title="Review drafts"
      description={batch ? "This batch's drafts awaiting approval, oldest first." : 'Every draft awaiting approval, oldest first.'}
      actions={batch ? <Link to="/runs/batches/$id" params={{ id: batch }} className="button button-secondary button-medium">Back to the batch</Link> : undefined}
    />
  );
  // The replies waiting for an answer and the follow-ups waiting for review sit above the drafts, except in one batch's review.
  const header = <>{pageHeader}{!batch && <><RepliesToAnswer /><ThreadReviewQueue /></>}</>;
  const live = <div className="visually-hidden" aria-live="polite" aria-atomic="true">{announcement}</div>;

  if (!queue) return <>{header}{awaiting.error ? <ErrorAlert error={awaiting.error} retry={() => void reload()} /> : <LoadingBlock label="Loading the drafts" />}</>;

  if (queue.length === 0) {
    return (
      <>
        {header}{live}
        {error ? <ErrorAlert error={error} /> : null}
        <div ref={heading} tabIndex={-1} className="review-end">
          <EmptyState icon="check" title="Nothing awaits approval"
            action={batch ? <Link to="/runs/batches/$id" params={{ id: batch }} className="button button-secondary button-medium">Back to the batch</Link> : <Link to="/runs" className="button button-secondary button-medium">See all runs</Link>}>
            {decided > 0 ? `You decided on ${plural(decided, 'draft')}. ` : ''}Drafts appear here as runs finish.
          </EmptyState>
        </div>
      </>
    );
  }

  if (!current) {
    return (
      <>
        {header}{live}
        <div ref={heading} tabIndex={-1} className="review-end">
          <EmptyState icon="check" title="You have been through every draft"
            action={<>
              <Button onClick={() => go(0)}>Back to the first skipped</Button>
              <Button variant="ghost" icon="refresh" onClick={() => void reload()}>Check for new drafts</Button>
            </>}>
            {plural(queue.length, 'draft')} you skipped {queue.length === 1 ? 'still awaits' : 'still await'} approval. Press K or ← to go back.
          </EmptyState>
        </div>
      </>
    );
  }

  const draft = current.emailDraft;
  const writer = current.steps.find((s) => s.node === 'WRITER');
  const grounding = writer?.status === 'COMPLETED' ? (writer.output as WriterOutput | null)?.grounding : undefined;

  return (
    <>
      {header}{live}
      {error ? <ErrorAlert error={error} /> : null}
      <p className="review-position" aria-hidden="true">
        Draft {formatNumber(index + 1)} of {formatNumber(queue.length)}
        <span className="meter review-meter"><span className="meter-fill" style={{ width: `${((index + 1) / queue.length) * 100}%` }} /></span>
      </p>
      <div className="review-layout">
        <section className="card draft-card draft-review" aria-labelledby="review-lead">
          <header className="card-header review-head">
            <div>
              <h2 id="review-lead" ref={heading} tabIndex={-1} className="card-title">
                <span className="visually-hidden">Draft {index + 1} of {queue.length}: </span>
                {lead === undefined ? 'Loading the lead…' : lead ? lead.name : 'Unknown lead'}
              </h2>
              <DoNotContactBadge show={lead?.doNotContact} />
              <p className="row-sub">
                {lead?.companyName ? `${lead.companyName} · ` : ''}started <RelativeTime iso={current.startedAt} />
              </p>
            </div>
            <div className="card-actions">
              {draft && draft.version > 1 && <Badge tone="violet">Version {draft.version}</Badge>}
              <Link to="/runs/$id" params={{ id: current.id }} className="button button-ghost button-small">Open run <Icon name="chevronRight" /></Link>
            </div>
          </header>

          <div className="review-bar" role="group" aria-label="Decide on the draft">
            <div className="review-actions">
              <Button variant="primary" icon={choices[0] === 'none' ? 'check' : 'mail'} busy={busy} onClick={() => act('approve')} aria-keyshortcuts="a"
                disabled={choices[0] !== 'none' && sendAt === null}>
                {APPROVE_LABEL[choices[0]!]} <kbd className="kbd" aria-hidden="true">A</kbd>
              </Button>
              {choices.slice(1).map((choice) => (
                <Button key={choice} disabled={busy || (choice !== 'none' && sendAt === null)} onClick={() => void approve(choice)}>{APPROVE_LABEL[choice]}</Button>
              ))}
              <Button disabled={busy} onClick={() => act('reject')} aria-keyshortcuts="r">Reject… <kbd className="kbd" aria-hidden="true">R</kbd></Button>
              <Button variant="ghost" disabled={busy} onClick={() => act('edit')} aria-keyshortcuts="e">Edit <kbd className="kbd" aria-hidden="true">E</kbd></Button>
            </div>
            {choices[0] !== 'none' && (
              <div className="review-actions" key={current.id}>
                <SequencePicker value={sequenceId} onChange={setSequenceId} disabled={busy} />
                <SendTimePicker onChange={setSendAt} disabled={busy} />
              </div>
            )}
            <div className="review-actions">
              <Button size="small" icon="chevronLeft" disabled={busy || index === 0} onClick={() => act('previous')} aria-keyshortcuts="k ArrowLeft">Previous</Button>
              <Button size="small" disabled={busy} onClick={() => act('next')} aria-keyshortcuts="j ArrowRight">Next <Icon name="chevronRight" /></Button>
            </div>
          </div>

          {draft ? (
            <div className="email">
              <dl className="email-head">
                <div><dt>To</dt><dd>{draft.to ?? <span className="muted">No e-mail address on the lead</span>}</dd></div>
                <div><dt>Subject</dt><dd className="email-subject">{draft.subject}</dd></div>
              </dl>
              <div className="email-body">{draft.body}</div>
            </div>
          ) : <p className="muted">This run has no draft.</p>}

          {grounding && grounding.unsupported.length > 0 && (
            <Alert tone="warning" title="Check these claims before sending">
              They could not be traced to the research or the call:
              <ul className="bullet-list">{grounding.unsupported.map((claim, i) => <li key={i}>{claim}</li>)}</ul>
            </Alert>
          )}
          {grounding && grounding.unsupported.length === 0 && (
            <p className="grounded review-grounded"><Icon name="check" size={14} /> Every specific claim is backed by the research or the call{grounding.rewritten ? ' (rewritten once to get there)' : ''}.</p>
          )}
        </section>

        <aside className="card shortcut-card" aria-labelledby="shortcuts-title">
          <h2 className="card-title" id="shortcuts-title">Keyboard</h2>
          <dl className="shortcuts">
            {legend(choices[0]!).map(({ keys, label }) => (
              <div key={label}>
                <dt>{keys.map((k, i) => <span key={k}>{i > 0 && ' or '}<kbd className="kbd">{k}</kbd></span>)}</dt>
                <dd>{label}</dd>
              </div>
            ))}
          </dl>
          <p className="muted small">Shortcuts rest while you type in a field.</p>
        </aside>
      </div>

      {rejecting && (
        <RejectDialog
          run={current}
          regenerate={false}
          choose
          leadName={nameOf(current)}
          onClose={() => setRejecting(false)}
          onDone={(_, regenerated) => {
            setRejecting(false);
            const message = regenerated ? `A new version of the draft for ${nameOf(current)} is being written.` : `Rejected the draft for ${nameOf(current)}.`;
            toast(message);
            void settle(current, message);
          }}
        />
      )}
    </>
  );
}

// A run: the four steps progressing live, what each found, and the e-mail draft to approve, reject or have
// written again with feedback.
import { getRouteApi } from '@tanstack/react-router';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { api, ApiError } from '../api/client';
import type { AnalysisOutput, EmailDraft, ResearchOutput, Run, RunEvent, Step, StepNode, StrategyOutput, WriterOutput } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Alert, Badge, Button, Card, CopyButton, ErrorAlert, LoadingBlock, PageHeader, RelativeTime, RunStatusBadge } from '../components/ui';
import { formatDateTime, formatDuration, formatNumber, RUN_STATUS_LABEL, STEP_DESCRIPTION, STEP_LABEL } from '../lib/format';
import { batchPath } from '../lib/batch';
import { useLiveRun, type Transport } from '../lib/liveRun';
import { PIPELINE_TIME_HELP, pipelineMs } from '../lib/pipeline';
import { Link } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';
import { approveChoices, APPROVE_LABEL, useApprove, useMailCapabilities, type Deliver } from '../lib/delivery';
import { DeliveryPanel } from './run/DeliveryPanel';
import { DraftEditor, GroundingVerdict } from './run/DraftEditor';
import { DraftVersions } from './run/DraftVersions';
import { RejectDialog } from './run/RejectDialog';
import { ReplyPanel } from './run/ReplyPanel';
import { AnalysisView, ResearchView, StepFooter, StrategyView } from './run/StepViews';

function stepOf(run: Run, node: StepNode): Step | undefined {
  return run.steps.find((s) => s.node === node);
}

/** What a screen reader hears as the run moves on. */
function announce(event: RunEvent): string | null {
  const step = event.node && event.node in STEP_LABEL ? STEP_LABEL[event.node as StepNode] : null;
  switch (event.type) {
    case 'step.started': return `${step} started.`;
    case 'step.completed': return `${step} done.`;
    case 'step.retrying': return event.deferred
      ? `${step} is waiting for the model provider, which asked to slow down; it will start again.`
      : `${step} failed on attempt ${event.attempt}; retrying.`;
    case 'step.failed': return `${step} failed.`;
    case 'run.awaiting_approval': return 'The draft is ready for your review.';
    case 'run.failed': return 'The run failed.';
    case 'run.cancelled': return 'The run was cancelled.';
    case 'run.approved': return 'The draft was approved.';
    case 'run.approval_undone': return 'The approval was undone; the draft awaits approval again.';
    case 'run.rejected': return 'The draft was rejected.';
    case 'run.regenerating': return 'Writing a new version of the draft.';
    case 'draft.delivery_retrying': return 'Sending failed for now; it will be tried again.';
    case 'draft.sent': return 'The e-mail was sent.';
    case 'draft.saved_to_mailbox': return 'The e-mail was saved to your mailbox.';
    case 'draft.delivery_failed': return 'The e-mail could not be delivered.';
    default: return null;
  }
}

const route = getRouteApi('/_app/runs/$id');

export function RunPage() {
  const { id } = route.useParams();
  const live = useLiveRun(id);
  const toast = useToast();
  const { run } = live;
  const lead = useApiQuery(['lead', run?.leadId], async (signal) => run
    ? (await api.get('/api/v1/leads/{id}', { params: { id: run.leadId }, signal })).body.data
    : undefined, { enabled: Boolean(run) });
  useTitle(lead.data ? `Run for ${lead.data.name}` : 'Run');
  // The call's transcript, for the lines each item of the analysis was read from (a lead's newest calls: the one run).
  const transcript = useApiQuery(['lead', run?.leadId, 'transcript', run?.callId], async (signal) => run
    ? (await api.get('/api/v1/leads/{leadId}/calls', { params: { leadId: run.leadId }, query: { limit: 100 }, signal }))
      .body.data.find((call) => call.id === run.callId)?.transcript ?? null
    : null, { enabled: Boolean(run) });
  const [cancelling, setCancelling] = useState(false);

  const lastEvent = live.events[live.events.length - 1];
  const [message, setMessage] = useState('');
  const announced = useRef<number | null>(null);
  useEffect(() => {
    // Only what happens while the page is open is read out, not the history loaded with it.
    if (!lastEvent) return;
    if (announced.current !== null && lastEvent.id > announced.current) setMessage(announce(lastEvent) ?? '');
    announced.current = lastEvent.id;
  }, [lastEvent]);

  if (live.error && !run) return <ErrorAlert error={live.error} retry={live.reload} />;
  if (!run) return <LoadingBlock label="Loading run" />;

  const cancel = async () => {
    setCancelling(true);
    try {
      const { body } = await api.post('/api/v1/runs/{id}/cancel', { params: { id: run.id } });
      live.update(body.data);
      toast('Run cancelled.');
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'The run could not be cancelled.', 'error');
      void live.reload();
    } finally {
      setCancelling(false);
    }
  };

  const research = stepOf(run, 'RESEARCH');
  const analysis = stepOf(run, 'ANALYSIS');
  const strategy = stepOf(run, 'STRATEGY');
  const writer = stepOf(run, 'WRITER');
  const inPipeline = run.status === 'QUEUED' || run.status === 'RUNNING';
  const decided = (next: Run, text: string | null) => {
    live.update(next);
    if (text) toast(text);
  };
  const draftCard = <DraftCard run={run} writer={writer} onDecided={decided} />;

  return (
    <>
      {lead.data
        ? <Link to={`/leads/${lead.data.id}`} className="back-link"><Icon name="chevronLeft" /> {lead.data.name}</Link>
        : <Link to="/runs" className="back-link"><Icon name="chevronLeft" /> Runs</Link>}
      <PageHeader
        eyebrow={<>Run · started <RelativeTime iso={run.startedAt} /></>}
        title={lead.data ? `Follow-up for ${lead.data.name}` : 'Follow-up draft'}
        description={lead.data?.companyName ?? undefined}
        actions={<>
          <RunStatusBadge status={run.status} />
          {/* The run is Approved whatever became of its e-mail; the header says that too, not only the draft. */}
          {run.emailDraft?.status === 'SENT' && <Badge tone="green">E-mail sent</Badge>}
          {run.emailDraft?.delivery?.status === 'FAILED' && <Badge tone="red">E-mail not sent</Badge>}
          <Link to={`/runs/${run.id}/trace`} className="button button-secondary button-medium"><Icon name="trace" /> Trace</Link>
          {inPipeline && <Button variant="danger" busy={cancelling} onClick={() => void cancel()}>Cancel run</Button>}
        </>}
      />

      <div className="visually-hidden" aria-live="polite" aria-atomic="true">{message}</div>
      <Stepper run={run} transport={live.transport} />

      {run.status === 'FAILED' && (
        <Alert tone="error" title="The run failed" action={<Link to={`/runs/${run.id}/trace`} className="button button-secondary button-small">See the trace</Link>}>
          {run.error ?? 'A step kept failing after its retries.'}
        </Alert>
      )}
      {run.status === 'CANCELLED' && <Alert tone="info" title="This run was cancelled">Steps that had not finished were skipped.</Alert>}
      {live.error ? <ErrorAlert error={live.error} retry={live.reload} /> : null}
      {run.reply && <ReplyPanel reply={run.reply} />}

      <div className="run-layout">
        <div className="run-main">
          {/* The draft leads once there is one; while the pipeline works, the steps read in the order they run. */}
          {run.emailDraft && draftCard}
          {run.emailDraft && <DraftVersions run={run} />}
          <StepCard step={research} title="Company research" icon="globe">
            {(output) => <ResearchView output={output as ResearchOutput} />}
          </StepCard>
          <StepCard step={analysis} title="What the call revealed" icon="phone">
            {(output) => <AnalysisView output={output as AnalysisOutput} transcript={transcript.data ?? null} />}
          </StepCard>
          <StepCard step={strategy} title="Strategy" icon="sparkle">
            {(output) => <StrategyView output={output as StrategyOutput} />}
          </StepCard>
          {!run.emailDraft && draftCard}
        </div>
        <aside className="run-aside" aria-label="Run details">
          <Card title="Details" titleId="run-details">
            <dl className="details">
              <div><dt>Status</dt><dd>{RUN_STATUS_LABEL[run.status]}</dd></div>
              <div><dt>Lead</dt><dd>{lead.data ? <Link to={`/leads/${lead.data.id}`}>{lead.data.name}</Link> : '…'}</dd></div>
              <div><dt>Started</dt><dd>{formatDateTime(run.startedAt)}</dd></div>
              <div><dt>Finished</dt><dd>{run.completedAt ? formatDateTime(run.completedAt) : inPipeline ? 'In progress' : '—'}</dd></div>
              <div title={PIPELINE_TIME_HELP}><dt>Pipeline time</dt><dd>{inPipeline ? '—' : formatDuration(pipelineMs(run.steps))}</dd></div>
              <div><dt>Engine</dt><dd>{engineOf(run)}</dd></div>
              <div><dt>Tokens</dt><dd>{formatNumber(run.tokensUsed)}</dd></div>
              {run.batchId && <div><dt>Batch</dt><dd><Link to={batchPath(run.batchId)}>Started with others</Link></dd></div>}
            </dl>
            <a className="details-link" href={run.traceUrl} target={isOurs(run.traceUrl) ? undefined : '_blank'} rel="noopener noreferrer">
              <Icon name="trace" /> Open the trace
            </a>
          </Card>
        </aside>
      </div>
    </>
  );
}

function isOurs(url: string): boolean {
  try {
    return new URL(url, window.location.href).origin === window.location.origin;
  } catch {
    return false;
  }
}

function engineOf(run: Run): string {
  const engines = new Set(run.steps.map((s) => s.engine).filter(Boolean));
  const models = new Set(run.steps.map((s) => s.model).filter(Boolean));
  if (models.size) return [...models].join(', ');
  if (engines.has('offline')) return 'Offline (rule-based)';
  return engines.size ? [...engines].join(', ') : '—';
}

function Stepper({ run, transport }: { run: Run; transport: Transport }) {
  const live = run.status === 'QUEUED' || run.status === 'RUNNING';
  return (
    <section className="stepper-card" aria-label="Progress">
      <ol className="stepper">
        {run.steps.map((step, i) => (
          <li key={step.node} className={`stepper-step step-${step.status.toLowerCase()}`} aria-current={step.status === 'RUNNING' ? 'step' : undefined}>
            <span className="stepper-marker" aria-hidden="true">
              {step.status === 'COMPLETED' ? <Icon name="check" size={15} />
                : step.status === 'FAILED' ? <Icon name="x" size={15} />
                : step.status === 'RUNNING' ? <span className="spinner spinner-small" />
                : i + 1}
            </span>
            <span className="stepper-text">
              <span className="stepper-label">{STEP_LABEL[step.node]}</span>
              <span className="stepper-sub">
                {step.status === 'COMPLETED' ? `Done in ${formatDuration(step.durationMs)}`
                  : step.status === 'RUNNING' ? (step.attempts > 1 ? `Retrying · attempt ${step.attempts}` : STEP_DESCRIPTION[step.node])
                  : step.status === 'FAILED' ? 'Failed'
                  : step.status === 'SKIPPED' ? 'Skipped'
                  : step.error ? 'Waiting to retry' : 'Waiting'}
              </span>
            </span>
            <span className="visually-hidden">: {step.status.toLowerCase()}</span>
          </li>
        ))}
      </ol>
      {live && (
        <p className="stepper-live">
          <span className="live-dot" aria-hidden="true" />
          {transport === 'stream' ? 'Live' : transport === 'polling' ? 'Updating every few seconds' : 'Connecting'}
          {run.status === 'QUEUED' && ' · waiting for a worker'}
        </p>
      )}
    </section>
  );
}

function StepCard({ step, title, icon, children }: { step: Step | undefined; title: string; icon: 'globe' | 'phone' | 'sparkle'; children(output: NonNullable<Step['output']>): ReactNode }) {
  if (!step) return null;
  const id = `step-${step.node.toLowerCase()}`;
  return (
    <Card className="step-card" title={<><Icon name={icon} size={17} /> {title}</>} titleId={id}
      actions={step.status !== 'COMPLETED' ? <StepState step={step} /> : undefined}>
      {step.status === 'COMPLETED' && step.output ? (
        <>
          {children(step.output)}
          <StepFooter step={step} />
        </>
      ) : step.status === 'FAILED' ? (
        <p className="callout callout-error"><Icon name="alert" /> {step.error ?? 'This step failed.'}</p>
      ) : step.status === 'SKIPPED' ? (
        <p className="muted small">Skipped: the run ended before this step.</p>
      ) : (
        <Skeleton lines={3} label={step.status === 'RUNNING' ? `${STEP_DESCRIPTION[step.node]}…` : 'Waiting for the steps before it.'} />
      )}
    </Card>
  );
}

function StepState({ step }: { step: Step }) {
  if (step.status === 'RUNNING') return <Badge tone="blue" dot pulse>Working</Badge>;
  if (step.status === 'FAILED') return <Badge tone="red">Failed</Badge>;
  if (step.status === 'SKIPPED') return <Badge tone="gray">Skipped</Badge>;
  return <Badge>Waiting</Badge>;
}

function Skeleton({ lines, label }: { lines: number; label: string }) {
  return (
    <div className="skeleton">
      <p className="muted small">{label}</p>
      {Array.from({ length: lines }, (_, i) => <span key={i} className="skeleton-line" aria-hidden="true" />)}
    </div>
  );
}

const DRAFT_BADGE: Record<EmailDraft['status'], { tone: 'amber' | 'green' | 'red' | 'gray'; label: string }> = {
  DRAFT: { tone: 'amber', label: 'Needs review' },
  APPROVED: { tone: 'green', label: 'Approved' },
  SENT: { tone: 'green', label: 'Sent' },
  REJECTED: { tone: 'red', label: 'Rejected' },
  SUPERSEDED: { tone: 'gray', label: 'Replaced' },
};

/** The draft and its decisions; `onDecided` gets the run as it now is, and a message for a toast unless one was shown. */
function DraftCard({ run, writer, onDecided }: {
  run: Run; writer: Step | undefined; onDecided(run: Run, message: string | null): void;
}) {
  const [decision, setDecision] = useState<'reject' | 'regenerate' | null>(null);
  const [approving, setApproving] = useState<Deliver | null>(null);
  const [error, setError] = useState<unknown>(null);
  const choices = approveChoices(useMailCapabilities());
  const [editing, setEditing] = useState(false);
  const draft = run.emailDraft;
  const writerOutput = writer?.status === 'COMPLETED' ? writer.output as WriterOutput | null : null;
  // An edited version carries its own verdict; WRITER's is about the text WRITER wrote. None is shown while editing.
  const grounding = draft?.origin === 'edited' || editing ? undefined : writerOutput?.grounding;
  const canDecide = run.status === 'AWAITING_APPROVAL' && draft?.status === 'DRAFT' && !editing;
  // After "regenerate" the run is queued again and the rejected version stays on show until WRITER is done.
  const regenerating = Boolean(draft) && (run.status === 'QUEUED' || run.status === 'RUNNING');

  const approveWithUndo = useApprove();
  const approve = async (deliver: Deliver) => {
    setApproving(deliver);
    setError(null);
    try {
      // The toast (with Undo) is useApprove's; an undo hands the run back, awaiting approval again.
      onDecided(await approveWithUndo(run.id, deliver, 'Draft approved.', (undone) => onDecided(undone, null)), null);
    } catch (e) {
      setError(e);
    } finally {
      setApproving(null);
    }
  };

  if (!draft) {
    const regenerating = writer?.status !== 'COMPLETED' && run.steps.slice(0, 3).every((s) => s.status === 'COMPLETED') && (run.status === 'QUEUED' || run.status === 'RUNNING');
    return (
      <Card className="draft-card draft-pending" title={<><Icon name="mail" size={17} /> E-mail draft</>} titleId="draft-title">
        {run.status === 'FAILED' || run.status === 'CANCELLED'
          ? <p className="muted">No draft was written.</p>
          : <Skeleton lines={5} label={regenerating ? 'Writing the next version…' : 'The draft appears here when the writer finishes.'} />}
      </Card>
    );
  }

  return (
    <Card
      className={`draft-card${canDecide ? ' draft-review' : ''}`}
      title={<><Icon name="mail" size={17} /> E-mail draft</>}
      titleId="draft-title"
      actions={<>
        {draft.version > 1 && <Badge tone="violet">Version {draft.version}</Badge>}
        <Badge tone={DRAFT_BADGE[draft.status].tone}>{DRAFT_BADGE[draft.status].label}</Badge>
      </>}
    >
      {canDecide && (
        <div className="review-bar" role="group" aria-label="Decide on the draft">
          <p className="review-text"><strong>Ready for your review.</strong> Approve it, or say what should change.</p>
          <div className="review-actions">
            {choices.map((choice, i) => (
              <Button key={choice} variant={i === 0 ? 'primary' : 'secondary'} icon={choice === 'none' ? 'check' : choice === 'send' ? 'mail' : 'inbox'}
                busy={approving === choice} disabled={approving !== null && approving !== choice} onClick={() => void approve(choice)}>
                {APPROVE_LABEL[choice]}
              </Button>
            ))}
            <Button icon="refresh" disabled={approving !== null} onClick={() => setDecision('regenerate')}>Regenerate…</Button>
            <Button icon="edit" disabled={approving !== null} onClick={() => setEditing(true)}>Edit</Button>
            <Button variant="ghost" disabled={approving !== null} onClick={() => setDecision('reject')}>Reject…</Button>
          </div>
        </div>
      )}
      {regenerating && (
        <div className="review-bar review-bar-working" role="status">
          <p className="review-text"><span className="spinner spinner-small" aria-hidden="true" /> Writing version {draft.version + 1}…</p>
        </div>
      )}
      {error ? <ErrorAlert error={error} /> : null}

      {editing && run.status === 'AWAITING_APPROVAL' ? (
        <DraftEditor run={run} draft={draft} onCancel={() => setEditing(false)} onSaved={(next, changed) => {
          setEditing(false);
          onDecided(next, changed ? `Saved as version ${next.emailDraft?.version}.` : 'Nothing changed.');
        }} />
      ) : <div className={`email${regenerating ? ' email-stale' : ''}`}>
        <dl className="email-head">
          <div><dt>To</dt><dd>{draft.to ?? <span className="muted">No e-mail address on the lead</span>}</dd></div>
          <div><dt>Subject</dt><dd className="email-subject">{draft.subject}</dd></div>
        </dl>
        <div className="email-body">{draft.body}</div>
      </div>}

      {draft.origin === 'edited' && !editing && <GroundingVerdict grounding={draft.grounding} />}
      {grounding && grounding.unsupported.length > 0 && (
        <Alert tone="warning" title="Check these claims before sending">
          They could not be traced to the research or the call:
          <ul className="bullet-list">{grounding.unsupported.map((claim, i) => <li key={i}>{claim}</li>)}</ul>
        </Alert>
      )}
      <div className="draft-foot">
        {grounding && grounding.unsupported.length === 0
          ? <p className="grounded"><Icon name="check" size={14} /> Every specific claim is backed by the research or the call{grounding.rewritten ? ' (rewritten once to get there)' : ''}.</p>
          : <span />}
        <CopyButton text={`Subject: ${draft.subject}\n\n${draft.body}`} label="Copy e-mail" />
      </div>
      {draft.status === 'APPROVED' && !draft.delivery && <p className="draft-note approved"><Icon name="check" size={14} /> Approved, not sent. Copy it into your mail client to send it.</p>}
      <DeliveryPanel run={run} onChanged={(next) => onDecided(next, 'Delivery queued again.')} />
      {draft.status === 'REJECTED' && !regenerating && <p className="draft-note">This draft was rejected.</p>}
      {writer && <StepFooter step={writer} />}

      {decision && (
        <RejectDialog
          run={run}
          regenerate={decision === 'regenerate'}
          onClose={() => setDecision(null)}
          onDone={(next) => {
            setDecision(null);
            onDecided(next, decision === 'regenerate' ? 'Writing a new version of the draft.' : 'Draft rejected.');
          }}
        />
      )}
    </Card>
  );
}

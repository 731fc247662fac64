// A run: the four steps progressing live, what each found, and the e-mail draft to approve, reject or have
// written again with feedback.
import { getRouteApi } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { api, ApiError } from '../api/client';
import type { AnalysisOutput, ResearchOutput, Run, RunEvent, Step, StepNode, StrategyOutput } from '../api/types';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Alert, Badge, Button, Card, DoNotContactBadge, ErrorAlert, LoadingBlock, PageHeader, RelativeTime, RunStatusBadge } from '../components/ui';
import { formatDateTime, formatDuration, formatNumber, RUN_STATUS_LABEL, STEP_LABEL } from '../lib/format';
import { useLiveRun } from '../lib/liveRun';
import { PIPELINE_TIME_HELP, pipelineMs } from '../lib/pipeline';
import { Link } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';
import { DraftCard } from './run/DraftCard';
import { ThreadCard } from './run/ThreadCard';
import { DraftVersions } from './run/DraftVersions';
import { ReplyPanel } from './run/ReplyPanel';
import { MarkAsMenu, ReplyClassBadge } from './run/ReplyClass';
import { StepCard, Stepper } from './run/Stepper';
import { AnalysisView, ResearchView, StrategyView } from './run/StepViews';

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
    case 'draft.delivery_scheduled': return 'The e-mail waits in the outbox for its time.';
    case 'draft.delivery_cancelled': return 'The e-mail was taken off the outbox.';
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
  const draftCard = <><DraftCard run={run} writer={writer} onDecided={decided} /><ThreadCard run={run} onChanged={(next) => decided(next, null)} /></>;

  return (
    <>
      {lead.data
        ? <Link to="/leads/$id" params={{ id: lead.data.id }} className="back-link"><Icon name="chevronLeft" /> {lead.data.name}</Link>
        : <Link to="/runs" className="back-link"><Icon name="chevronLeft" /> Runs</Link>}
      <PageHeader
        eyebrow={<>Run · started <RelativeTime iso={run.startedAt} /></>}
        title={lead.data ? `Follow-up for ${lead.data.name}` : 'Follow-up draft'}
        description={lead.data?.companyName ?? undefined}
        actions={<>
          <RunStatusBadge status={run.status} />
          <DoNotContactBadge show={lead.data?.doNotContact} />
          {/* The run is Approved whatever became of its e-mail; the header says that too, not only the draft. */}
          {run.emailDraft?.status === 'SENT' && <Badge tone="green">E-mail sent</Badge>}
          {run.emailDraft?.delivery?.status === 'FAILED' && <Badge tone="red">E-mail not sent</Badge>}
          <Link to="/runs/$id/trace" params={{ id: run.id }} className="button button-secondary button-medium"><Icon name="trace" /> Trace</Link>
          {inPipeline && <Button variant="danger" busy={cancelling} onClick={() => void cancel()}>Cancel run</Button>}
        </>}
      />

      <div className="visually-hidden" aria-live="polite" aria-atomic="true">{message}</div>
      <Stepper run={run} transport={live.transport} />

      {run.status === 'FAILED' && (
        <Alert tone="error" title="The run failed" action={<Link to="/runs/$id/trace" params={{ id: run.id }} className="button button-secondary button-small">See the trace</Link>}>
          {run.error ?? 'A step kept failing after its retries.'}
        </Alert>
      )}
      {run.status === 'CANCELLED' && <Alert tone="info" title="This run was cancelled">Steps that had not finished were skipped.</Alert>}
      {live.error ? <ErrorAlert error={live.error} retry={live.reload} /> : null}
      {/* Every reply, oldest first, each with what it says and "Mark as…" (DESIGN §16). */}
      {run.replies.map((reply) => (
        <ReplyPanel key={reply.id} reply={reply} title={run.replies.length > 1 ? `Reply ${run.replies.indexOf(reply) + 1} of ${run.replies.length}` : undefined}>
          <div className="reply-panel-class">
            <ReplyClassBadge reply={reply} />
            <MarkAsMenu reply={reply} onMarked={() => void live.reload()} />
          </div>
        </ReplyPanel>
      ))}

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
              <div><dt>Lead</dt><dd>{lead.data ? <Link to="/leads/$id" params={{ id: lead.data.id }}>{lead.data.name}</Link> : '…'}</dd></div>
              <div><dt>Started</dt><dd>{formatDateTime(run.startedAt)}</dd></div>
              <div><dt>Finished</dt><dd>{run.completedAt ? formatDateTime(run.completedAt) : inPipeline ? 'In progress' : '—'}</dd></div>
              <div title={PIPELINE_TIME_HELP}><dt>Pipeline time</dt><dd>{inPipeline ? '—' : formatDuration(pipelineMs(run.steps))}</dd></div>
              <div><dt>Engine</dt><dd>{engineOf(run)}</dd></div>
              <div><dt>Tokens</dt><dd>{formatNumber(run.tokensUsed)}</dd></div>
              {run.batchId && <div><dt>Batch</dt><dd><Link to="/runs/batches/$id" params={{ id: run.batchId }}>Started with others</Link></dd></div>}
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

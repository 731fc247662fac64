// The trace of a run (its default traceUrl): every step attempt on a timeline built from the run's events, with
// durations, retries and their errors, the engine, the model and the tokens spent.
import { getRouteApi } from '@tanstack/react-router';
import { useMemo } from 'react';
import type { Run, RunEvent, StepNode } from '../api/types';
import { Icon } from '../components/Icon';
import { Badge, Card, ErrorAlert, LoadingBlock, PageHeader, RunStatusBadge, type Tone } from '../components/ui';
import { draftVersionsOf } from '../lib/draftVersions';
import { formatDateTime, formatDuration, formatNumber, formatTime, STEP_LABEL } from '../lib/format';
import { useLiveRun } from '../lib/liveRun';
import { Link } from '../lib/router';
import { useTitle } from '../lib/query';

interface Attempt {
  node: StepNode;
  attempt: number;
  /** WRITER's attempts: the version of the draft they write (1, then 2 after a regeneration…); null for other steps. */
  version: number | null;
  start: number;
  end: number | null;
  outcome: 'running' | 'completed' | 'retrying' | 'failed' | 'interrupted';
  durationMs: number | null;
  engine: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  error: string | null;
}

/** Pairs each step.started with the completed, retrying or failed event of the same attempt. */
function attemptsOf(events: RunEvent[], runAtRest: boolean): Attempt[] {
  const attempts: Attempt[] = [];
  const open = new Map<string, Attempt>();
  const versions = draftVersionsOf(events);
  for (const event of events) {
    if (!event.node || !event.type.startsWith('step.')) continue;
    const version = event.node === 'WRITER' ? versions.get(event.id) ?? 1 : null;
    const key = `${event.node}#${event.attempt}`;
    const at = new Date(event.at).getTime();
    if (event.type === 'step.started') {
      // A step started again with the same attempt number (a regenerated WRITER) is a new row.
      const attempt: Attempt = {
        node: event.node as StepNode, attempt: event.attempt ?? attempts.length + 1, version, start: at, end: null, outcome: 'running',
        durationMs: null, engine: event.engine, model: event.model, inputTokens: null, outputTokens: null, error: null,
      };
      attempts.push(attempt);
      open.set(key, attempt);
      continue;
    }
    let attempt = open.get(key);
    if (!attempt) {
      // The end of an attempt whose start we did not see: place it by its duration.
      attempt = {
        node: event.node as StepNode, attempt: event.attempt ?? 0, version, start: at - (event.durationMs ?? 0), end: null, outcome: 'running',
        durationMs: null, engine: null, model: null, inputTokens: null, outputTokens: null, error: null,
      };
      attempts.push(attempt);
    }
    open.delete(key);
    attempt.end = at;
    attempt.outcome = event.type === 'step.completed' ? 'completed' : event.type === 'step.retrying' ? 'retrying' : 'failed';
    attempt.durationMs = event.durationMs ?? at - attempt.start;
    attempt.engine = event.engine ?? attempt.engine;
    attempt.model = event.model ?? attempt.model;
    attempt.inputTokens = event.usage?.inputTokens ?? null;
    attempt.outputTokens = event.usage?.outputTokens ?? null;
    attempt.error = event.error;
  }
  if (runAtRest) for (const attempt of open.values()) attempt.outcome = 'interrupted';
  return attempts;
}

/** "Research · attempt 2"; WRITER's by the draft it writes: "Draft · version 2 (regenerated)", "… · attempt 2". */
function attemptName(a: Pick<Attempt, 'node' | 'attempt' | 'version'>): string {
  if (a.version === null) return `${STEP_LABEL[a.node]} · attempt ${a.attempt}`;
  const draft = `${STEP_LABEL[a.node]} · version ${a.version}${a.version > 1 ? ' (regenerated)' : ''}`;
  return a.attempt > 1 ? `${draft} · attempt ${a.attempt}` : draft;
}

/** The short form the timeline has room for: "Draft v2", "Research · try 2". */
function attemptShortName(a: Pick<Attempt, 'node' | 'attempt' | 'version'>): string {
  const step = a.version === null ? STEP_LABEL[a.node] : `${STEP_LABEL[a.node]} v${a.version}`;
  return a.attempt > 1 ? `${step} · try ${a.attempt}` : step;
}

const OUTCOME: Record<Attempt['outcome'], { tone: Tone; label: string }> = {
  running: { tone: 'blue', label: 'Running' },
  completed: { tone: 'green', label: 'Completed' },
  retrying: { tone: 'amber', label: 'Failed · retried' },
  failed: { tone: 'red', label: 'Failed' },
  interrupted: { tone: 'gray', label: 'Interrupted' },
};

const RUN_EVENT_LABEL: Partial<Record<RunEvent['type'], string>> = {
  'run.queued': 'Run queued',
  'run.awaiting_approval': 'Draft ready for review',
  'run.failed': 'Run failed',
  'run.cancelled': 'Run cancelled',
  'run.approved': 'Draft approved',
  'run.approval_undone': 'Approval undone',
  'run.rejected': 'Draft rejected',
  'run.regenerating': 'Regeneration requested',
  'draft.edited': 'Draft edited',
};

const route = getRouteApi('/_app/runs/$id/trace');

export function TracePage() {
  const { id } = route.useParams();
  const live = useLiveRun(id);
  const { run, events } = live;
  useTitle('Trace');
  const atRest = run ? !['QUEUED', 'RUNNING'].includes(run.status) : false;
  const attempts = useMemo(() => attemptsOf(events, atRest), [events, atRest]);

  if (live.error && !run) return <ErrorAlert error={live.error} retry={live.reload} />;
  if (!run) return <LoadingBlock label="Loading trace" />;

  const first = events[0] ? new Date(events[0].at).getTime() : new Date(run.startedAt).getTime();
  const lastEventAt = events.length ? new Date(events[events.length - 1]!.at).getTime() : first;
  const end = Math.max(lastEventAt, ...attempts.map((a) => a.end ?? (atRest ? a.start : Date.now())));
  const span = Math.max(end - first, 1);
  const retries = attempts.filter((a) => a.outcome === 'retrying').length;
  const tokensIn = attempts.reduce((sum, a) => sum + (a.inputTokens ?? 0), 0);
  const tokensOut = attempts.reduce((sum, a) => sum + (a.outputTokens ?? 0), 0);
  const models = [...new Set(attempts.map((a) => a.model).filter(Boolean))];
  const engines = [...new Set(attempts.map((a) => a.engine).filter(Boolean))];

  return (
    <>
      <Link to="/runs/$id" params={{ id: run.id }} className="back-link"><Icon name="chevronLeft" /> Back to the run</Link>
      <PageHeader
        eyebrow={<>Trace · <span className="mono">{run.id}</span></>}
        title="Run trace"
        description={`Started ${formatDateTime(run.startedAt)}`}
        actions={<RunStatusBadge status={run.status} />}
      />

      <dl className="stat-strip">
        <div><dt>Wall time</dt><dd>{formatDuration(end - first)}</dd></div>
        <div><dt>Attempts</dt><dd>{attempts.length}</dd></div>
        <div><dt>Retries</dt><dd>{retries}</dd></div>
        <div><dt>Tokens</dt><dd>{formatNumber(run.tokensUsed)}{tokensIn + tokensOut > 0 && <span className="stat-sub"> {formatNumber(tokensIn)} in · {formatNumber(tokensOut)} out</span>}</dd></div>
        <div><dt>Engine</dt><dd>{models.length ? models.join(', ') : engines.length ? engines.join(', ') : '—'}</dd></div>
      </dl>

      <Card title="Timeline" titleId="timeline-title" className="trace-card">
        {attempts.length === 0 && <p className="card-empty">No step has started yet.</p>}
        {attempts.length > 0 && (
          <div className="waterfall" role="list" aria-label="Step attempts on a timeline">
            <div className="waterfall-axis" aria-hidden="true">
              <span>0 s</span><span>{formatDuration(span / 2)}</span><span>{formatDuration(span)}</span>
            </div>
            {attempts.map((a, i) => {
              const left = ((a.start - first) / span) * 100;
              const width = Math.max((((a.end ?? (atRest ? a.start : Date.now())) - a.start) / span) * 100, 0.6);
              return (
                <div className="waterfall-row" role="listitem" key={i}>
                  <span className="waterfall-label" title={attemptName(a)}>{attemptShortName(a)}</span>
                  <span className="waterfall-track">
                    <span className={`waterfall-bar bar-${a.outcome}`} style={{ left: `${Math.min(left, 99.4)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.4))}%` }} />
                  </span>
                  <span className="waterfall-value">{a.outcome === 'running' ? 'running…' : formatDuration(a.durationMs)}</span>
                </div>
              );
            })}
          </div>
        )}
      </Card>

      <Card title="Attempts" titleId="attempts-title">
        <ol className="attempts">
          {attempts.map((a, i) => (
            <li key={i} className={`attempt attempt-${a.outcome}`}>
              <div className="attempt-head">
                <span className="attempt-title">{attemptName(a)}</span>
                <Badge tone={OUTCOME[a.outcome].tone}>{OUTCOME[a.outcome].label}</Badge>
              </div>
              <dl className="attempt-meta">
                <div><dt>Started</dt><dd>{formatTime(new Date(a.start).toISOString())} <span className="muted">(+{formatDuration(a.start - first)})</span></dd></div>
                <div><dt>Took</dt><dd>{a.outcome === 'running' ? '…' : formatDuration(a.durationMs)}</dd></div>
                <div><dt>Engine</dt><dd>{a.engine ?? '—'}</dd></div>
                <div><dt>Model</dt><dd>{a.model ?? (a.engine === 'offline' ? 'rules (no model)' : '—')}</dd></div>
                <div><dt>Tokens</dt><dd>{a.inputTokens !== null || a.outputTokens !== null ? `${formatNumber(a.inputTokens ?? 0)} in · ${formatNumber(a.outputTokens ?? 0)} out` : '—'}</dd></div>
              </dl>
              {a.error && <p className="attempt-error"><Icon name="alert" size={14} /> {a.error}</p>}
            </li>
          ))}
        </ol>
        {attempts.length === 0 && <p className="card-empty">Nothing yet.</p>}
      </Card>

      <Card title="Events" titleId="events-title">
        <EventLog events={events} run={run} />
      </Card>
    </>
  );
}

function EventLog({ events, run }: { events: RunEvent[]; run: Run }) {
  if (events.length === 0) return <p className="card-empty">No events yet.</p>;
  const first = new Date(events[0]!.at).getTime();
  const versions = draftVersionsOf(events);
  return (
    <div className="table-scroll">
      <table className="table table-compact table-stack">
        <caption className="visually-hidden">Events of run {run.id}, oldest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Step</th><th scope="col">Detail</th></tr></thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td className="nowrap mono small">+{formatDuration(new Date(event.at).getTime() - first)}</td>
              <td className="nowrap">{RUN_EVENT_LABEL[event.type] ?? event.type.replace('step.', 'Step ')}</td>
              <td>
                {event.node && event.node in STEP_LABEL ? STEP_LABEL[event.node as StepNode] : '—'}
                {(event.node === 'WRITER' || event.type === 'draft.edited')
                  && <span className="muted"> v{versions.get(event.id)}</span>}
                {event.attempt ? <span className="muted"> #{event.attempt}</span> : null}
              </td>
              <td className="small cell-wide">{eventDetail(event)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function eventDetail(event: RunEvent): string {
  const parts: string[] = [];
  if (event.durationMs !== null) parts.push(formatDuration(event.durationMs));
  if (event.model) parts.push(event.model);
  else if (event.engine) parts.push(event.engine);
  if (event.usage) parts.push(`${formatNumber(event.usage.inputTokens + event.usage.outputTokens)} tokens`);
  if (event.error) parts.push(event.type.startsWith('run.') ? `Feedback: “${event.error}”` : event.error);
  return parts.join(' · ') || '—';
}

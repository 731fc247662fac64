// The run's progress: the stepper of the four steps (live while the run is in the pipeline) and the card of each
// step, which shows its output once done, or its state.
import type { ReactNode } from 'react';
import type { Run, Step } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Badge, Card } from '../../components/ui';
import { formatDuration, STEP_DESCRIPTION, STEP_LABEL } from '../../lib/format';
import type { Transport } from '../../lib/liveRun';
import { StepFooter } from './StepViews';

export function Stepper({ run, transport }: { run: Run; transport: Transport }) {
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

export function StepCard({ step, title, icon, children }: { step: Step | undefined; title: string; icon: 'globe' | 'phone' | 'sparkle'; children(output: NonNullable<Step['output']>): ReactNode }) {
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

export function Skeleton({ lines, label }: { lines: number; label: string }) {
  return (
    <div className="skeleton">
      <p className="muted small">{label}</p>
      {Array.from({ length: lines }, (_, i) => <span key={i} className="skeleton-line" aria-hidden="true" />)}
    </div>
  );
}

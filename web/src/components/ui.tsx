// The small building blocks every page is made of.
import { useEffect, useId, useState, type ButtonHTMLAttributes, type ReactNode } from 'react';
import type { LeadStatus, RunStatus, StepStatus } from '../api/types';
import { ApiError, errorMessage } from '../api/client';
import { formatDateTime, formatRelative, LEAD_STATUS_LABEL, RUN_STATUS_LABEL, STEP_STATUS_LABEL } from '../lib/format';
import { Icon, type IconName } from './Icon';

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  size?: 'small' | 'medium';
  icon?: IconName;
  /** Shows a spinner and disables the button while a request is in flight. */
  busy?: boolean;
};

export function Button({ variant = 'secondary', size = 'medium', icon, busy = false, disabled, children, className, type = 'button', ...rest }: ButtonProps) {
  return (
    <button
      type={type}
      className={`button button-${variant} button-${size}${className ? ` ${className}` : ''}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy ? <Spinner /> : icon ? <Icon name={icon} /> : null}
      {children}
    </button>
  );
}

export function Spinner({ label }: { label?: string }) {
  return <span className="spinner" role={label ? 'status' : undefined} aria-label={label} aria-hidden={label ? undefined : true} />;
}

export type Tone = 'neutral' | 'blue' | 'violet' | 'amber' | 'green' | 'red' | 'gray';

export function Badge({ tone = 'neutral', children, dot = false, pulse = false }: { tone?: Tone; children: ReactNode; dot?: boolean; pulse?: boolean }) {
  return (
    <span className={`badge badge-${tone}`}>
      {dot && <span className={`badge-dot${pulse ? ' pulse' : ''}`} aria-hidden="true" />}
      {children}
    </span>
  );
}

const LEAD_TONE: Record<LeadStatus, Tone> = {
  DISCOVERY: 'neutral', CONTACTED: 'blue', QUALIFIED: 'violet', PROPOSAL: 'amber', WON: 'green', LOST: 'gray',
};
export function LeadStatusBadge({ status }: { status: LeadStatus }) {
  return <Badge tone={LEAD_TONE[status]} dot>{LEAD_STATUS_LABEL[status]}</Badge>;
}

/** "Do not contact": the lead's address or domain is on the suppression list (DESIGN §15); nothing is delivered to it. */
export function DoNotContactBadge({ show }: { show: boolean | undefined }) {
  return show ? <Badge tone="red">Do not contact</Badge> : null;
}

const RUN_TONE: Record<RunStatus, Tone> = {
  QUEUED: 'neutral', RUNNING: 'blue', AWAITING_APPROVAL: 'amber', COMPLETED: 'green', REJECTED: 'red', FAILED: 'red', CANCELLED: 'gray',
};
export function RunStatusBadge({ status }: { status: RunStatus }) {
  return <Badge tone={RUN_TONE[status]} dot pulse={status === 'RUNNING' || status === 'QUEUED'}>{RUN_STATUS_LABEL[status]}</Badge>;
}

const STEP_TONE: Record<StepStatus, Tone> = { PENDING: 'neutral', RUNNING: 'blue', COMPLETED: 'green', FAILED: 'red', SKIPPED: 'gray' };
export function StepStatusBadge({ status }: { status: StepStatus }) {
  return <Badge tone={STEP_TONE[status]}>{STEP_STATUS_LABEL[status]}</Badge>;
}

/** A time shown relatively ("5 minutes ago") with the exact time on hover and for machines. */
export function RelativeTime({ iso, fallback = '—' }: { iso: string | null | undefined; fallback?: string }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => tick((n) => n + 1), 30_000);
    return () => window.clearInterval(timer);
  }, []);
  if (!iso) return <span className="muted">{fallback}</span>;
  return <time dateTime={iso} title={formatDateTime(iso)}>{formatRelative(iso)}</time>;
}

export function Alert({ tone = 'error', title, children, action }: { tone?: 'error' | 'warning' | 'info' | 'success'; title?: string; children?: ReactNode; action?: ReactNode }) {
  const icon: IconName = tone === 'info' ? 'info' : tone === 'success' ? 'check' : 'alert';
  return (
    <div className={`alert alert-${tone}`} role={tone === 'error' ? 'alert' : undefined}>
      <Icon name={icon} size={18} />
      <div className="alert-content">
        {title && <p className="alert-title">{title}</p>}
        {children && <div className="alert-body">{children}</div>}
      </div>
      {action && <div className="alert-action">{action}</div>}
    </div>
  );
}

/** An error from a request, said for a person, with the request id to quote when asking for help. */
export function ErrorAlert({ error, retry }: { error: unknown; retry?: () => void }) {
  const requestId = error instanceof ApiError ? error.requestId : null;
  return (
    <Alert
      tone="error"
      title={error instanceof ApiError && error.status === 404 ? 'Not found' : 'Something went wrong'}
      action={retry ? <Button size="small" onClick={retry} icon="refresh">Try again</Button> : undefined}
    >
      {errorMessage(error)}
      {requestId && <span className="request-id"> Request {requestId}</span>}
    </Alert>
  );
}

export function EmptyState({ icon, title, children, action }: { icon: IconName; title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty-state">
      <div className="empty-icon"><Icon name={icon} size={22} /></div>
      <h3>{title}</h3>
      {children && <p>{children}</p>}
      {action && <div className="empty-action">{action}</div>}
    </div>
  );
}

export function PageHeader({ title, description, actions, eyebrow }: { title: ReactNode; description?: ReactNode; actions?: ReactNode; eyebrow?: ReactNode }) {
  return (
    <header className="page-header">
      <div className="page-heading">
        {eyebrow && <div className="eyebrow">{eyebrow}</div>}
        <h1>{title}</h1>
        {description && <p className="page-description">{description}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

export function Card({ title, actions, children, className, id, titleId }: { title?: ReactNode; actions?: ReactNode; children: ReactNode; className?: string; id?: string; titleId?: string }) {
  return (
    <section className={`card${className ? ` ${className}` : ''}`} id={id} aria-labelledby={title ? titleId : undefined}>
      {(title || actions) && (
        <header className="card-header">
          {title && <h2 className="card-title" id={titleId}>{title}</h2>}
          {actions && <div className="card-actions">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

interface FieldControl {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: true;
  required?: boolean;
}

/**
 * A labelled control with its hint and its error, wired for screen readers. The hint gives way to the error; a
 * `counter` (how much has been typed, against a limit) stays in view either way.
 */
export function Field({ label, hint, error, required, children, optional, counter }: {
  label: string; hint?: ReactNode; error?: string; required?: boolean; optional?: boolean; counter?: ReactNode;
  children(control: FieldControl): ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const counterId = `${id}-counter`;
  const described = [hint ? hintId : null, error ? errorId : null, counter ? counterId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id} className="field-label">
        {label}
        {optional && <span className="field-optional"> (optional)</span>}
      </label>
      {children({ id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined, required })}
      {hint && !error && <p id={hintId} className="field-hint">{hint}</p>}
      {error && <p id={errorId} className="field-error"><Icon name="alert" size={14} />{error}</p>}
      {counter && <p id={counterId} className="field-count">{counter}</p>}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy', size = 'small' }: { text: string; label?: string; size?: 'small' | 'medium' }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Clipboard refused (an insecure origin): select the text so the person can copy it.
      const input = document.createElement('textarea');
      input.value = text;
      document.body.append(input);
      input.select();
      document.execCommand('copy');
      input.remove();
    }
    setCopied(true);
    window.setTimeout(() => setCopied(false), 2000);
  };
  return (
    <Button size={size} icon={copied ? 'check' : 'copy'} onClick={copy} aria-live="polite">
      {copied ? 'Copied' : label}
    </Button>
  );
}

export function Avatar({ name }: { name: string }) {
  const initials = name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0]?.toUpperCase()).join('') || '?';
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return <span className={`avatar avatar-${hash % 6}`} aria-hidden="true">{initials}</span>;
}

export function LoadingBlock({ label = 'Loading' }: { label?: string }) {
  return <div className="loading-block"><Spinner label={label} /><span>{label}…</span></div>;
}

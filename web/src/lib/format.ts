// Dates, numbers and labels as a person reads them.
import type { LeadStatus, RunStatus, StepNode, StepStatus, TranscriptFormat } from '../api/types';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const number = new Intl.NumberFormat();

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? timeOnly.format(new Date(iso)) : '—';
}

export function formatNumber(value: number): string {
  return number.format(value);
}

/** "just now", "5 minutes ago", "yesterday", then a date. */
export function formatRelative(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour');
  if (abs < 7 * 86_400) return relative.format(Math.round(seconds / 86_400), 'day');
  return formatDate(iso);
}

/** 850 ms, 2.4 s, 1 min 05 s */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${String(seconds).padStart(2, '0')} s`;
}

/** A message to quote inside a sentence that gives its own full stop: without a final period of its own. */
export function withoutFinalPeriod(text: string): string {
  return text.trim().replace(/\.+$/, '');
}

/** The host as a person reads it: no "www.", and no final dot of a fully qualified name ("acme.co.uk."). */
function bareHost(url: URL): string {
  return url.host.replace(/^www\./, '').replace(/\.(?=:\d+$|$)/, '');
}

export function hostOf(url: string | null | undefined): string {
  if (!url) return '';
  try {
    return bareHost(new URL(url));
  } catch {
    return url;
  }
}

/** A URL shortened for display: host and path, without the scheme. */
export function shortUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${bareHost(parsed)}${path}`;
  } catch {
    return url;
  }
}

export const LEAD_STATUS_LABEL: Record<LeadStatus, string> = {
  DISCOVERY: 'Discovery',
  CONTACTED: 'Contacted',
  QUALIFIED: 'Qualified',
  PROPOSAL: 'Proposal',
  WON: 'Won',
  LOST: 'Lost',
};

export const RUN_STATUS_LABEL: Record<RunStatus, string> = {
  QUEUED: 'Queued',
  RUNNING: 'Running',
  AWAITING_APPROVAL: 'Awaiting approval',
  COMPLETED: 'Approved',
  REJECTED: 'Rejected',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

export const STEP_LABEL: Record<StepNode, string> = {
  RESEARCH: 'Research',
  ANALYSIS: 'Analysis',
  STRATEGY: 'Strategy',
  WRITER: 'Draft',
};

export const STEP_DESCRIPTION: Record<StepNode, string> = {
  RESEARCH: 'Reads the company website',
  ANALYSIS: 'Finds pains, objections and signals in the call',
  STRATEGY: 'Chooses the angle and the ask',
  WRITER: 'Writes the e-mail',
};

export const STEP_STATUS_LABEL: Record<StepStatus, string> = {
  PENDING: 'Waiting',
  RUNNING: 'Working',
  COMPLETED: 'Done',
  FAILED: 'Failed',
  SKIPPED: 'Skipped',
};

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatNumber(count)} ${count === 1 ? one : many}`;
}

/** A call's transcript format as a rep knows it: by the tool that wrote it, or by its labels. */
export const TRANSCRIPT_FORMAT_LABEL: Record<TranscriptFormat, string> = {
  labelled: 'Name: text',
  'rep-prospect': 'REP/PROSPECT',
  'speaker-n': 'Speaker 1, 2…',
  webvtt: 'WebVTT (Zoom/Teams)',
  srt: 'SRT subtitles',
  otter: 'Otter/Fireflies',
  timestamped: 'Timestamped lines',
  meet: 'Google Meet',
  plain: 'Plain text',
};

/** A call as a person names it: its title, or the day it took place. */
export function callTitle(call: { title: string | null; occurredAt: string | null; createdAt: string }): string {
  return call.title || `Call on ${formatDate(call.occurredAt ?? call.createdAt)}`;
}

/** The first characters of an id, enough to tell rows apart. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** A person's name, or their e-mail when they have none (an admin made on the command line). */
export function displayName(person: { name: string | null; email?: string | null }): string {
  return person.name?.trim() || person.email || 'Unnamed';
}

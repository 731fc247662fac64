// Every version of a run's draft — generated, regenerated with the feedback that asked for it, edited by whom — and
// any two of them side by side, with the words that changed marked.
import { useEffect, useMemo, useState } from 'react';
import { diffWords } from 'diff';
import { api } from '../../api/client';
import type { ResponseOf } from '../../api/client';
import type { Run } from '../../api/types';
import { Badge, Card, ErrorAlert, RelativeTime } from '../../components/ui';
import { useApiQuery } from '../../lib/query';
import '../../styles/drafts.css';

type DraftVersion = ResponseOf<'get', '/api/v1/runs/{id}/drafts'>['data'][number];

const ORIGIN_LABEL: Record<DraftVersion['origin'], string> = {
  generated: 'Generated',
  regenerated: 'Regenerated',
  edited: 'Edited',
};

const STATUS_BADGE: Record<DraftVersion['status'], { tone: 'amber' | 'green' | 'red' | 'gray' | 'blue'; label: string }> = {
  DRAFT: { tone: 'amber', label: 'Current' },
  APPROVED: { tone: 'green', label: 'Approved' },
  SENT: { tone: 'blue', label: 'Sent' },
  REJECTED: { tone: 'red', label: 'Rejected' },
  SUPERSEDED: { tone: 'gray', label: 'Replaced' },
};

/**
 * What happened to a version, in the words of the badge: a replaced one says by what (a person's edit, or the
 * regeneration a person asked for), so that nothing reads "Rejected" that nobody rejected.
 */
function statusBadge(version: DraftVersion): { tone: 'amber' | 'green' | 'red' | 'gray' | 'blue'; label: string } {
  if (version.status === 'SUPERSEDED' && version.replacedBy) {
    const how = version.replacedBy.origin === 'edited' ? 'Edited' : 'Regenerated';
    return { tone: 'gray', label: `${how} as v${version.replacedBy.version}` };
  }
  return STATUS_BADGE[version.status];
}

function whoEdited(version: DraftVersion): string {
  if (!version.editedBy) return '';
  if (version.editedBy.type === 'key') return ` with the API key ${version.editedBy.name ?? ''}`.trimEnd();
  return version.editedBy.name ? ` by ${version.editedBy.name}` : '';
}

export function DraftVersions({ run }: { run: Run }) {
  // Read again whenever the run's latest version or its status changes (an edit, a decision, a regeneration).
  const versions = useApiQuery(['run', run.id, 'drafts', run.emailDraft?.id, run.emailDraft?.status],
    async (signal) => (await api.get('/api/v1/runs/{id}/drafts', { params: { id: run.id }, signal })).body.data);
  const list = versions.data ?? [];
  const [left, setLeft] = useState<number | null>(null);
  const [right, setRight] = useState<number | null>(null);
  // By default the latest version against the one before it.
  useEffect(() => {
    if (list.length < 2) return;
    setLeft(list[list.length - 2]!.version);
    setRight(list[list.length - 1]!.version);
  }, [list.length]); // eslint-disable-line react-hooks/exhaustive-deps

  if (versions.error) return <ErrorAlert error={versions.error} retry={versions.reload} />;
  if (list.length < 2) return null;
  const byNumber = (n: number | null) => list.find((v) => v.version === n);
  const a = byNumber(left);
  const b = byNumber(right);

  return (
    <Card className="draft-versions" title="Versions" titleId="draft-versions">
      <ol className="version-list">
        {list.map((version, i) => {
          const rejectedBefore = i > 0 ? list[i - 1]!.feedback : null;
          return (
            <li key={version.id} className="version-item">
              <span className="version-number">v{version.version}</span>
              <span className="version-what">
                <strong>{ORIGIN_LABEL[version.origin]}</strong>
                {version.origin === 'edited' && whoEdited(version)}
                {' · '}<RelativeTime iso={version.editedAt ?? version.createdAt} />
                {version.origin === 'regenerated' && rejectedBefore && <span className="version-feedback">after the feedback “{rejectedBefore}”</span>}
              </span>
              <Badge tone={statusBadge(version).tone}>{statusBadge(version).label}</Badge>
            </li>
          );
        })}
      </ol>
      <div className="version-pickers" role="group" aria-label="Compare two versions">
        <VersionPicker label="Compare" versions={list} value={left} onChange={setLeft} />
        <VersionPicker label="with" versions={list} value={right} onChange={setRight} />
      </div>
      {a && b && <VersionDiff a={a} b={b} />}
    </Card>
  );
}

function VersionPicker({ label, versions, value, onChange }: { label: string; versions: DraftVersion[]; value: number | null; onChange(n: number): void }) {
  return (
    <label className="version-picker">
      <span>{label}</span>
      <select className="input select" value={value ?? ''} onChange={(e) => onChange(Number(e.target.value))}>
        {versions.map((v) => <option key={v.id} value={v.version}>v{v.version} · {ORIGIN_LABEL[v.origin]}</option>)}
      </select>
    </label>
  );
}

/** Two versions side by side: on the left what the later one removed, on the right what it added. */
function VersionDiff({ a, b }: { a: DraftVersion; b: DraftVersion }) {
  const subject = useMemo(() => diffWords(a.subject, b.subject), [a.subject, b.subject]);
  const body = useMemo(() => diffWords(a.body, b.body), [a.body, b.body]);
  const same = subject.every((part) => !part.added && !part.removed) && body.every((part) => !part.added && !part.removed) && a.to === b.to;
  const side = (version: DraftVersion, keep: 'removed' | 'added') => (
    <section className="version-side" aria-label={`Version ${version.version}`}>
      <h3 className="version-side-title">v{version.version} · {ORIGIN_LABEL[version.origin]}</h3>
      <dl className="email-head">
        <div><dt>To</dt><dd className={a.to !== b.to ? `diff-${keep}` : undefined}>{version.to ?? '—'}</dd></div>
        <div><dt>Subject</dt><dd className="email-subject"><Marked parts={subject} keep={keep} /></dd></div>
      </dl>
      <div className="email-body"><Marked parts={body} keep={keep} /></div>
    </section>
  );
  return (
    <>
      {same && <p className="muted small">These two versions are the same.</p>}
      <div className="version-diff">
        {side(a, 'removed')}
        {side(b, 'added')}
      </div>
    </>
  );
}

function Marked({ parts, keep }: { parts: ReturnType<typeof diffWords>; keep: 'removed' | 'added' }) {
  return (
    <>
      {parts.map((part, i) => {
        if (!part.added && !part.removed) return <span key={i}>{part.value}</span>;
        if (keep === 'removed' && part.removed) return <del key={i} className="diff-removed">{part.value}</del>;
        if (keep === 'added' && part.added) return <ins key={i} className="diff-added">{part.value}</ins>;
        return null;
      })}
    </>
  );
}

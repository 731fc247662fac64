// Editing the draft in place: subject, recipient and body become a form; saving makes the next version, whose
// grounding the server checks again. The verdict is shown with the draft, and never stops the edit.
import { useEffect, useState, type KeyboardEvent } from 'react';
import { api } from '../../api/client';
import type { EmailDraft, Run } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Alert, Button, Field } from '../../components/ui';
import { isEmail, useFormSubmit } from '../../lib/forms';
import { formatNumber } from '../../lib/format';
import '../../styles/drafts.css';

/** The server's limits (src/agent/grounding.ts), so that a person sees them before saving. */
const SUBJECT_MAX = 80;
const BODY_MAX = 5000;
const FIELDS = ['subject', 'to', 'body'] as const;

export function DraftEditor({ run, draft, onSaved, onCancel }: {
  run: Run;
  draft: EmailDraft;
  onSaved(run: Run, changed: boolean): void;
  onCancel(): void;
}) {
  const [subject, setSubject] = useState(draft.subject);
  const [to, setTo] = useState(draft.to ?? '');
  const [body, setBody] = useState(draft.body);
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!subject.trim()) local.subject = 'Write a subject line.';
      if (to.trim() && !isEmail(to.trim())) local.to = 'Enter an e-mail address like name@company.com.';
      if (!body.trim()) local.body = 'Write the e-mail.';
      return local;
    },
    send: async () => {
      const answer = await api.patch('/api/v1/runs/{id}/draft', {
        params: { id: run.id },
        body: { subject, body, to: to.trim() || null },
      });
      const next = answer.body.data;
      onSaved(next, next.emailDraft?.id !== draft.id);
    },
  });
  useEffect(() => {
    formRef.current?.querySelector<HTMLInputElement>('input')?.focus();
  }, [formRef]);
  const cancelOnEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && !busy) {
      event.stopPropagation();
      onCancel();
    }
  };

  return (
    <form ref={formRef} onSubmit={onSubmit} onKeyDown={cancelOnEscape} noValidate className="form draft-editor" aria-label="Edit the draft">
      {errors.form && <Alert tone="error">{errors.form}</Alert>}
      <Field label="To" optional error={errors.fields.to}>
        {(p) => <input {...p} className="input" type="email" inputMode="email" autoComplete="off" value={to} onChange={(e) => setTo(e.target.value)} />}
      </Field>
      <Field label="Subject" error={errors.fields.subject} counter={`${subject.length} / ${SUBJECT_MAX}`}>
        {(p) => <input {...p} className="input" maxLength={SUBJECT_MAX} value={subject} onChange={(e) => setSubject(e.target.value)} />}
      </Field>
      <Field label="Body" error={errors.fields.body} counter={`${formatNumber(body.length)} / ${formatNumber(BODY_MAX)}`}>
        {(p) => <textarea {...p} className="input textarea draft-editor-body" rows={14} maxLength={BODY_MAX} value={body} onChange={(e) => setBody(e.target.value)} />}
      </Field>
      <div className="draft-editor-actions">
        <Button type="submit" variant="primary" icon="check" busy={busy}>Save</Button>
        <Button onClick={onCancel} disabled={busy}>Cancel</Button>
        <span className="muted small">Saving keeps the current text as an earlier version.</span>
      </div>
    </form>
  );
}

/** The grounding check's verdict on a version's own text. */
export function GroundingVerdict({ grounding }: { grounding: EmailDraft['grounding'] }) {
  if (!grounding) return null;
  if (grounding.verdict === 'grounded') {
    return <p className="grounded" role="status"><Icon name="check" size={14} /> All claims found in the call or the research.</p>;
  }
  return (
    <Alert tone="warning" title="Not found in the call or research">
      Check these before sending:
      <ul className="bullet-list">{grounding.unsupported.map((claim, i) => <li key={i}>{claim}</li>)}</ul>
    </Alert>
  );
}

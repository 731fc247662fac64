// Rejecting a draft, or having it written again: the one dialog of the run page and of the review queue.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api/client';
import type { Run } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { Button, ErrorAlert, Field } from '../../components/ui';

const HINT = {
  regenerate: 'Say what should change, e.g. “Shorter, and lead with the pilot they asked about.” Leave it empty to have it simply written again.',
  reject: 'What was wrong with it? Up to 2,000 characters.',
};

export interface RejectDialogProps {
  run: Run;
  /** Regenerate rather than reject, as the dialog opens. */
  regenerate: boolean;
  /** Whose draft it is, said in the dialog when the page around it does not show it (the review queue). */
  leadName?: string;
  /** Offer the choice between the two in the dialog itself (the review queue has one key for both). */
  choose?: boolean;
  onClose(): void;
  onDone(run: Run, regenerated: boolean): void;
}

export function RejectDialog({ run, regenerate: initial, leadName, choose = false, onClose, onDone }: RejectDialogProps) {
  const [feedback, setFeedback] = useState('');
  const [regenerate, setRegenerate] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { body } = await api.post('/api/v1/runs/{id}/reject', { params: { id: run.id }, body: { feedback: feedback.trim() || null, regenerate } });
      onDone(body.data, regenerate);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  const fieldError = error instanceof ApiError ? error.fieldError('feedback') : undefined;
  const title = choose ? 'Reject the draft' : regenerate ? 'Regenerate the draft' : 'Reject the draft';
  const what = regenerate
    ? 'The writer keeps the research, analysis and strategy and writes the next version, taking your feedback into account if you give any.'
    : 'The run ends without an e-mail. Your feedback is kept in the trace for the team.';
  return (
    <Dialog
      title={title}
      description={leadName ? `The draft for ${leadName}. ${what}` : what}
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy}>Cancel</Button>
        <Button type="submit" form="reject-draft" variant={regenerate ? 'primary' : 'danger'} busy={busy} icon={regenerate ? 'refresh' : undefined}>
          {regenerate ? 'Regenerate draft' : 'Reject draft'}
        </Button>
      </>}
    >
      <form id="reject-draft" onSubmit={submit} noValidate className="form">
        {error && !fieldError ? <ErrorAlert error={error} /> : null}
        <Field label="Feedback" optional error={fieldError} hint={regenerate ? HINT.regenerate : HINT.reject}>
          {(p) => <textarea {...p} autoFocus className="input textarea" rows={5} maxLength={2000} value={feedback} onChange={(e) => setFeedback(e.target.value)} />}
        </Field>
        {choose && (
          <label className="checkbox">
            <input type="checkbox" checked={regenerate} onChange={(e) => setRegenerate(e.target.checked)} />
            <span>Regenerate: write a new version with this feedback</span>
          </label>
        )}
      </form>
    </Dialog>
  );
}

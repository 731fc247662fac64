// The run's e-mail draft and the decisions on it: approve (with Undo), edit, regenerate or reject; its delivery and
// the grounding of its claims.
import { useState } from 'react';
import type { EmailDraft, Run, Step, WriterOutput } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Alert, Badge, Button, Card, CopyButton, ErrorAlert } from '../../components/ui';
import { SendTimePicker, type SendAt } from './SendTimePicker';
import { approveChoices, APPROVE_LABEL, useApprove, useMailCapabilities, type Deliver } from '../../lib/delivery';
import { DeliveryPanel } from './DeliveryPanel';
import { SequencePicker } from './SequencePicker';
import { DraftEditor, GroundingVerdict } from './DraftEditor';
import { RejectDialog } from './RejectDialog';
import { Skeleton } from './Stepper';
import { StepFooter } from './StepViews';

const DRAFT_BADGE: Record<EmailDraft['status'], { tone: 'amber' | 'green' | 'red' | 'gray'; label: string }> = {
  DRAFT: { tone: 'amber', label: 'Needs review' },
  APPROVED: { tone: 'green', label: 'Approved' },
  SENT: { tone: 'green', label: 'Sent' },
  REJECTED: { tone: 'red', label: 'Rejected' },
  SUPERSEDED: { tone: 'gray', label: 'Replaced' },
};

/** The draft and its decisions; `onDecided` gets the run as it now is, and a message for a toast unless one was shown. */
export function DraftCard({ run, writer, onDecided }: {
  run: Run; writer: Step | undefined; onDecided(run: Run, message: string | null): void;
}) {
  const [decision, setDecision] = useState<'reject' | 'regenerate' | null>(null);
  const [approving, setApproving] = useState<Deliver | null>(null);
  const [sequenceId, setSequenceId] = useState<string | null | undefined>(undefined);
  const [sendAt, setSendAt] = useState<SendAt>(undefined);
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
      onDecided(await approveWithUndo(run.id, deliver, 'Draft approved.', (undone) => onDecided(undone, null),
        deliver === 'none' ? undefined : sequenceId, deliver === 'none' ? undefined : sendAt ?? undefined), null);
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
                busy={approving === choice} disabled={(approving !== null && approving !== choice) || (choice !== 'none' && sendAt === null)} onClick={() => void approve(choice)}>
                {APPROVE_LABEL[choice]}
              </Button>
            ))}
            <Button icon="refresh" disabled={approving !== null} onClick={() => setDecision('regenerate')}>Regenerate…</Button>
            <Button icon="edit" disabled={approving !== null} onClick={() => setEditing(true)}>Edit</Button>
            <Button variant="ghost" disabled={approving !== null} onClick={() => setDecision('reject')}>Reject…</Button>
          </div>
          {choices[0] !== 'none' && <SequencePicker value={sequenceId} onChange={setSequenceId} disabled={approving !== null} />}
          {choices[0] !== 'none' && <SendTimePicker onChange={setSendAt} disabled={approving !== null} />}
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

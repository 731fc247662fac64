// The run's thread (DESIGN §13): every touch, what went and when, when the next goes, why one was skipped; a
// follow-up or a response to a reply (§16) waiting for review is approved, regenerated or skipped here; the sequence
// is stopped, paused or resumed. A run approved without a sequence shows its thread once it has a response.
import { useState } from 'react';
import { api, ApiError, type ResponseOf } from '../../api/client';
import type { Run } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Badge, Button, Card, RelativeTime } from '../../components/ui';
import { useToast } from '../../components/Toast';
import { useApiQuery } from '../../lib/query';

type Touch = ResponseOf<'get', '/api/v1/runs/{id}/touches'>['data'][number];

const TOUCH_BADGE: Record<Touch['status'], { tone: 'amber' | 'green' | 'gray' | 'blue' | 'violet'; label: string }> = {
  SCHEDULED: { tone: 'gray', label: 'Scheduled' },
  DRAFTED: { tone: 'blue', label: 'Written' },
  AWAITING_APPROVAL: { tone: 'amber', label: 'Needs review' },
  APPROVED: { tone: 'violet', label: 'Approved' },
  SENT: { tone: 'green', label: 'Sent' },
  SKIPPED: { tone: 'gray', label: 'Skipped' },
};
const STATUS_LABEL: Record<NonNullable<Run['sequence']>['status'], string> = {
  ACTIVE: 'Active', PAUSED: 'Paused', FINISHED: 'Finished', STOPPED: 'Stopped',
};
const STOP_WHY: Record<string, string> = {
  replied: 'the lead replied', bounced: 'the e-mail bounced', unsubscribed: 'the lead unsubscribed', suppressed: 'the address is suppressed',
  lead_closed: 'the lead was won or lost', manual: 'someone stopped it', superseded: 'a newer sequence started for this lead',
  erased: 'the lead was erased', rejected: 'a reviewer skipped it',
  delivery_failed: 'the mail server refused it', cancelled: 'it was taken off the Outbox',
};

export function ThreadCard({ run, onChanged }: { run: Run; onChanged(run: Run): void }) {
  const toast = useToast();
  // Read again whenever the run shows a change of its thread: its sequence's state or next time, its e-mail's delivery.
  const touches = useApiQuery(['touches', run.id, run.sequence?.status ?? '', run.sequence?.nextTouchAt ?? '', run.emailDraft?.delivery?.status ?? ''], (signal) =>
    api.get('/api/v1/runs/{id}/touches', { params: { id: run.id }, signal }).then((r) => r.body.data));
  const [busy, setBusy] = useState<string | null>(null);
  const sequence = run.sequence;
  if (!sequence && !touches.data?.some((touch) => touch.kind === 'response')) return null;

  const act = async (what: string, work: () => Promise<void>) => {
    setBusy(what);
    try {
      await work();
      await touches.reload();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : `Could not ${what}.`);
    } finally {
      setBusy(null);
    }
  };
  const sequenceAction = (verb: 'stop' | 'pause' | 'resume') => act(`${verb} the follow-ups`, async () => {
    const { body } = await api.post(`/api/v1/runs/{id}/sequence/${verb}`, { params: { id: run.id }, body: {} });
    if (body) onChanged(body.data);
  });
  const touchAction = (touch: Touch, verb: 'approve' | 'reject', body: object = {}) => act(`${verb} ${touchName(touch).toLowerCase()}`, async () => {
    await api.post(`/api/v1/runs/{id}/touches/{number}/${verb}`, { params: { id: run.id, number: touch.number }, body });
  });

  return (
    <Card className="thread-card" titleId="thread-title" title={<><Icon name="mail" size={17} /> Thread{sequence ? ` · ${sequence.name}` : ''}</>}
      actions={sequence && <>
        <Badge tone={sequence.status === 'ACTIVE' ? 'green' : sequence.status === 'PAUSED' ? 'amber' : 'gray'}>{STATUS_LABEL[sequence.status]}</Badge>
        {sequence.status === 'ACTIVE' && <Button size="small" variant="ghost" busy={busy === 'pause the follow-ups'} onClick={() => void sequenceAction('pause')}>Pause</Button>}
        {sequence.status === 'PAUSED' && <Button size="small" variant="ghost" busy={busy === 'resume the follow-ups'} onClick={() => void sequenceAction('resume')}>Resume</Button>}
        {(sequence.status === 'ACTIVE' || sequence.status === 'PAUSED') && (
          <Button size="small" variant="ghost" className="danger-text" busy={busy === 'stop the follow-ups'} onClick={() => void sequenceAction('stop')}>Stop</Button>
        )}
      </>}>
      {sequence?.status === 'STOPPED' && <p className="small muted">Stopped: {STOP_WHY[sequence.stopReason ?? ''] ?? sequence.stopReason}. No more follow-ups go.</p>}
      {sequence?.status === 'PAUSED' && <p className="small muted">Paused{sequence.pausedUntil ? <> until <RelativeTime iso={sequence.pausedUntil} /></> : ''}.</p>}
      {sequence?.status === 'ACTIVE' && sequence.nextTouchAt && <p className="small muted">Next follow-up due <RelativeTime iso={sequence.nextTouchAt} />.</p>}
      <ol className="thread">
        {touches.data?.map((touch) => (
          <li key={touch.number} className="thread-touch" data-touch={touch.number} aria-label={touchName(touch)}>
            <p>
              <strong>{touchName(touch)}</strong>{' '}
              <Badge tone={TOUCH_BADGE[touch.status].tone}>{TOUCH_BADGE[touch.status].label}</Badge>{' '}
              <span className="small muted">
                {touch.delivery?.deliveredAt ? <>went <RelativeTime iso={touch.delivery.deliveredAt} /></>
                  : touch.status === 'SKIPPED' ? `skipped: ${STOP_WHY[touch.skipReason ?? ''] ?? touch.skipReason}`
                  : touch.dueAt ? <>due <RelativeTime iso={touch.dueAt} /></>
                  : touch.kind === 'response' ? (touch.status === 'SCHEDULED' ? 'being written' : 'goes once approved')
                  : 'after the one before it goes'}
              </span>
            </p>
            {touch.instruction && touch.status === 'SCHEDULED' && <p className="small muted">{touch.instruction}</p>}
            {touch.draft && touch.status !== 'SKIPPED' && (
              <div className="email">
                <dl className="email-head"><div><dt>Subject</dt><dd className="email-subject">{touch.draft.subject}</dd></div></dl>
                <div className="email-body">{touch.draft.body}</div>
              </div>
            )}
            {touch.status === 'AWAITING_APPROVAL' && (touch.kind === 'response' || sequence?.status === 'ACTIVE') && (
              <div className="review-actions" role="group" aria-label={touch.kind === 'response' ? 'Decide on the response' : `Decide on follow-up ${touch.number}`}>
                <Button size="small" variant="primary" icon="check" busy={busy === `approve ${touchName(touch).toLowerCase()}`}
                  onClick={() => void touchAction(touch, 'approve')}>{touch.kind === 'response' ? 'Approve response' : 'Approve follow-up'}</Button>
                <Button size="small" icon="refresh" onClick={() => void touchAction(touch, 'reject', { regenerate: true })}>Regenerate</Button>
                <Button size="small" variant="ghost" onClick={() => void touchAction(touch, 'reject')}>Skip it</Button>
              </div>
            )}
          </li>
        ))}
      </ol>
    </Card>
  );
}

/** "First e-mail", "Follow-up 2 of 3", or "Response to the reply". */
function touchName(touch: Touch): string {
  if (touch.kind === 'response') return 'Response to the reply';
  return touch.number === 1 ? 'First e-mail' : `Follow-up ${touch.number} of ${touch.of}`;
}

// What a reply says (DESIGN §16), and "Mark as…": a person's correction, which the server applies the effects of
// (a sequence stopped or paused, an address suppressed, a lead qualified, a next action set).
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import type { Run } from '../../api/types';
import { useToast } from '../../components/Toast';
import { Badge, Button } from '../../components/ui';

export type RunReplyItem = Run['replies'][number];
export type ReplyClass = RunReplyItem['classification'];

export const REPLY_CLASS_LABEL: Record<ReplyClass, string> = {
  interested: 'Interested',
  not_now: 'Not now',
  not_interested: 'Not interested',
  out_of_office: 'Out of office',
  unsubscribe: 'Unsubscribe',
  bounce: 'Bounce',
  auto_reply: 'Automatic reply',
  referral: 'Referral',
  other: 'Other',
};
const TONE: Record<ReplyClass, 'green' | 'amber' | 'red' | 'neutral' | 'violet'> = {
  interested: 'green', not_now: 'amber', not_interested: 'neutral', out_of_office: 'amber', unsubscribe: 'red',
  bounce: 'red', auto_reply: 'neutral', referral: 'violet', other: 'neutral',
};

/** The class, its day, and whether a person set it. */
export function ReplyClassBadge({ reply }: { reply: Pick<RunReplyItem, 'classification' | 'returnsOn' | 'followUpAfter' | 'classifiedBy'> }) {
  const day = reply.returnsOn ? `back ${reply.returnsOn}` : reply.followUpAfter ? `from ${reply.followUpAfter}` : null;
  return (
    <span className="reply-class">
      <Badge tone={TONE[reply.classification]}>{REPLY_CLASS_LABEL[reply.classification]}{day ? ` · ${day}` : ''}</Badge>
      {reply.classifiedBy === 'person' && <span className="muted small"> marked by a person</span>}
    </span>
  );
}

/** "Mark as…": a class, and for out_of_office or not_now the day it names. Calls `onMarked` once saved. */
export function MarkAsMenu({ reply, onMarked }: { reply: Pick<RunReplyItem, 'id' | 'classification' | 'returnsOn' | 'followUpAfter'>; onMarked: () => void }) {
  const toast = useToast();
  const [picked, setPicked] = useState<ReplyClass | ''>('');
  const [day, setDay] = useState('');
  const [busy, setBusy] = useState(false);
  const needsDay = picked === 'out_of_office' || picked === 'not_now';

  async function save(classification: ReplyClass, onDay: string) {
    setBusy(true);
    try {
      const dated = onDay ? (classification === 'out_of_office' ? { returnsOn: onDay } : { followUpAfter: onDay }) : {};
      await api.post('/api/v1/replies/{id}/classification', { params: { id: reply.id }, body: { classification, ...dated } });
      toast(`Marked as ${REPLY_CLASS_LABEL[classification].toLowerCase()}.`);
      setPicked('');
      setDay('');
      onMarked();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'The reply could not be marked.', 'error');
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="mark-as">
      <label className="visually-hidden" htmlFor={`mark-${reply.id}`}>Mark as…</label>
      <select id={`mark-${reply.id}`} value={picked} disabled={busy} onChange={(event) => {
        const next = event.target.value as ReplyClass | '';
        setPicked(next);
        if (next && next !== 'out_of_office' && next !== 'not_now') void save(next, '');
      }}>
        <option value="">Mark as…</option>
        {(Object.keys(REPLY_CLASS_LABEL) as ReplyClass[]).map((c) => <option key={c} value={c}>{REPLY_CLASS_LABEL[c]}</option>)}
      </select>
      {needsDay && (
        <>
          <label className="small" htmlFor={`mark-day-${reply.id}`}>{picked === 'out_of_office' ? 'Back on' : 'Follow up from'}</label>
          <input id={`mark-day-${reply.id}`} type="date" value={day} onChange={(event) => setDay(event.target.value)} />
          <Button size="small" variant="primary" busy={busy} onClick={() => void save(picked as ReplyClass, day)}>Save</Button>
        </>
      )}
    </div>
  );
}

// The review queue's follow-ups (DESIGN §13): each written follow-up whose step says review `required`, as "Follow-up
// 2 of 3" for its lead, approved or skipped here, or opened on its run to regenerate or read the thread.
import { useState } from 'react';
import { api, ApiError, type ResponseOf } from '../../api/client';
import { Badge, Button, RelativeTime } from '../../components/ui';
import { useToast } from '../../components/Toast';
import { Link } from '../../lib/router';
import { useApiQuery } from '../../lib/query';

type Waiting = ResponseOf<'get', '/api/v1/touches'>['data'][number];

export function ThreadReviewQueue() {
  const toast = useToast();
  const waiting = useApiQuery(['touches-for-review'], (signal) => api.get('/api/v1/touches', { signal }).then((r) => r.body.data));
  const [busy, setBusy] = useState<string | null>(null);
  if (!waiting.data || waiting.data.length === 0) return null;

  const decide = async (touch: Waiting, verb: 'approve' | 'reject') => {
    const id = `${touch.runId}:${touch.number}`;
    setBusy(id);
    try {
      await api.post(`/api/v1/runs/{id}/touches/{number}/${verb}`, { params: { id: touch.runId, number: touch.number }, body: {} });
      waiting.set((list) => (list ?? []).filter((t) => !(t.runId === touch.runId && t.number === touch.number)));
      toast(verb === 'approve' ? `Follow-up ${touch.number} for ${touch.leadName} approved.` : `Follow-up ${touch.number} for ${touch.leadName} skipped.`);
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'Could not decide on the follow-up.');
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="card follow-up-queue" aria-label="Follow-ups to review">
      <div className="card-body">
        <h2 className="card-title">Follow-ups to review <Badge tone="amber">{waiting.data.length}</Badge></h2>
        {waiting.data.map((touch) => (
          <article key={`${touch.runId}:${touch.number}`} className="follow-up" aria-label={`Follow-up ${touch.number} of ${touch.of} for ${touch.leadName}`}>
            <p>
              <strong>{touch.leadName}</strong> · Follow-up {touch.number} of {touch.of}
              {touch.dueAt && <span className="small muted"> · due <RelativeTime iso={touch.dueAt} /></span>}
            </p>
            <div className="email">
              <dl className="email-head"><div><dt>Subject</dt><dd className="email-subject">{touch.draft.subject}</dd></div></dl>
              <div className="email-body">{touch.draft.body}</div>
            </div>
            <div className="review-actions">
              <Button size="small" variant="primary" icon="check" busy={busy === `${touch.runId}:${touch.number}`} onClick={() => void decide(touch, 'approve')}>Approve follow-up</Button>
              <Button size="small" variant="ghost" onClick={() => void decide(touch, 'reject')}>Skip it</Button>
              <Link to="/runs/$id" params={{ id: touch.runId }} className="button button-ghost button-small">Open the thread</Link>
            </div>
          </article>
        ))}
      </div>
    </section>
  );
}

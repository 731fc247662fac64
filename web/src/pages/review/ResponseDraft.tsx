// "Draft a response" (DESIGN §16) beside the reply it answers, in Replies to answer: asked for with one button (an
// interested reply has one asked for already), shown while WRITER writes it, then reviewed where it is read: approved
// and sent in the thread, edited, written again, or skipped. The response is a touch of the run's thread
// (POST /api/v1/replies/{id}/response, then /api/v1/runs/{id}/touches/{number}/…).
import { useState } from 'react';
import { api, ApiError, type ResponseOf } from '../../api/client';
import { Button, Field, Spinner } from '../../components/ui';
import { useToast } from '../../components/Toast';
import { useApiQuery } from '../../lib/query';

export type Reply = ResponseOf<'get', '/api/v1/replies'>['data'][number];

export function ResponseDraft({ reply }: { reply: Reply }) {
  const toast = useToast();
  const [busy, setBusy] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const response = reply.response;
  const number = response?.number ?? 0;
  const touch = useApiQuery(['touches', reply.runId, 'response', number, response?.status ?? ''], async (signal) =>
    (await api.get('/api/v1/runs/{id}/touches', { params: { id: reply.runId }, signal })).body.data.find((t) => t.number === number) ?? null,
  { enabled: response?.status === 'AWAITING_APPROVAL' });

  const act = async (what: string, work: () => Promise<unknown>) => {
    setBusy(what);
    try {
      await work();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : `Could not ${what}.`);
    } finally {
      setBusy(null);
    }
  };
  const path = { params: { id: reply.runId, number } };

  if (!response) {
    return (
      <Button size="small" variant="primary" icon="mail" busy={busy === 'draft a response'}
        onClick={() => void act('draft a response', () => api.post('/api/v1/replies/{id}/response', { params: { id: reply.id }, body: {} }))}>
        Draft a response
      </Button>
    );
  }
  if (response.status === 'SCHEDULED') {
    return <p className="small muted response-writing" role="status"><Spinner label="Writing" /> Writing the response…</p>;
  }
  if (response.status !== 'AWAITING_APPROVAL') return null;
  const draft = touch.data?.draft;
  if (!draft) return <p className="small muted" role="status"><Spinner label="Loading" /> Loading the response…</p>;

  return (
    <div className="response-draft" aria-label="Drafted response">
      {editing === null ? (
        <div className="email">
          <dl className="email-head"><div><dt>Subject</dt><dd className="email-subject">{draft.subject}</dd></div></dl>
          <div className="email-body">{draft.body}</div>
        </div>
      ) : (
        <Field label="Response" counter={`${editing.split(/\s+/).filter(Boolean).length} words`}>
          {(p) => <textarea {...p} className="input textarea" rows={10} value={editing} onChange={(e) => setEditing(e.target.value)} />}
        </Field>
      )}
      <div className="review-actions" role="group" aria-label="Decide on the response">
        {editing === null ? <>
          <Button size="small" variant="primary" icon="check" busy={busy === 'send the response'}
            onClick={() => void act('send the response', () => api.post('/api/v1/runs/{id}/touches/{number}/approve', { ...path, body: {} }))}>
            Approve and send
          </Button>
          <Button size="small" onClick={() => setEditing(draft.body)}>Edit</Button>
          <Button size="small" icon="refresh" busy={busy === 'write it again'}
            onClick={() => void act('write it again', () => api.post('/api/v1/runs/{id}/touches/{number}/reject', { ...path, body: { regenerate: true } }))}>
            Write again
          </Button>
          <Button size="small" variant="ghost" busy={busy === 'skip the response'}
            onClick={() => void act('skip the response', () => api.post('/api/v1/runs/{id}/touches/{number}/reject', { ...path, body: {} }))}>
            Skip
          </Button>
        </> : <>
          <Button size="small" variant="primary" busy={busy === 'save the response'} disabled={!editing.trim()}
            onClick={() => void act('save the response', async () => {
              await api.patch('/api/v1/runs/{id}/touches/{number}/draft', { ...path, body: { body: editing } });
              setEditing(null);
            })}>
            Save
          </Button>
          <Button size="small" variant="ghost" onClick={() => setEditing(null)}>Cancel</Button>
        </>}
      </div>
    </div>
  );
}

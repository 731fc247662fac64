// "Replies to answer", a section of the review queue (DESIGN §16): the replies in which a person wrote something to
// answer (interested, referral, other, not now) and to whose lead no e-mail has gone since, newest first, each with
// its class, "Mark as…", and the response to it: drafted by WRITER (at once for an interested reply, else on "Draft a
// response"), reviewed and sent here (ResponseDraft.tsx). A reply leaves the list once an e-mail to its lead is queued.
import { api } from '../../api/client';
import { Card, ErrorAlert, RelativeTime } from '../../components/ui';
import { Link } from '../../lib/router';
import { useApiQuery } from '../../lib/query';
import { MarkAsMenu, ReplyClassBadge } from '../run/ReplyClass';
import { replierName } from '../run/ReplyPanel';
import { ResponseDraft } from './ResponseDraft';

const SHOWN = 20;

export function RepliesToAnswer() {
  const replies = useApiQuery(['replies', 'toAnswer'], async (signal) =>
    (await api.get('/api/v1/replies', { query: { toAnswer: 'true', limit: SHOWN }, signal })).body.data,
  // While WRITER writes a response, read again until it is there to review.
  { refetchInterval: (list) => (list?.some((reply) => reply.response?.status === 'SCHEDULED') ? 1_500 : false) });
  if (replies.error) return <ErrorAlert error={replies.error} retry={replies.reload} />;
  const list = replies.data ?? [];
  if (list.length === 0) return null;
  return (
    <Card title="Replies to answer" titleId="replies-to-answer" className="replies-to-answer">
      <ul className="replies-to-answer-list">
        {list.map((reply) => (
          <li key={reply.id}>
            <p className="reply-panel-title">
              <strong>{replierName(reply.from)}</strong> replied <RelativeTime iso={reply.receivedAt} />
              {reply.snippet ? ':' : '.'}
            </p>
            {reply.snippet && <blockquote className="reply-panel-snippet">{reply.snippet}</blockquote>}
            <div className="reply-panel-class">
              <ReplyClassBadge reply={reply} />
              <MarkAsMenu reply={reply} onMarked={() => void replies.reload()} />
              <Link to="/runs/$id" params={{ id: reply.runId }} className="button button-secondary button-small">Open the run</Link>
            </div>
            <ResponseDraft reply={reply} />
          </li>
        ))}
      </ul>
    </Card>
  );
}

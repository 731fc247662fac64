// The reply found in the sender's inbox to a delivered e-mail (DESIGN §7): who replied, when, and the start of what
// they said (without the quoted e-mail). On the run page it is the run's reply; on a lead's page, the newest of its
// runs', with a link to that run.
import type { ReactNode } from 'react';
import type { Run } from '../../api/types';
import { Icon } from '../../components/Icon';
import { RelativeTime } from '../../components/ui';
import { Link } from '../../lib/router';

export type Reply = NonNullable<Run['reply']>;

/** "Daniel Ng" from "Daniel Ng <daniel@acme.example>"; the address when there is no name; "Someone" without either. */
export function replierName(from: string | null): string {
  if (!from) return 'Someone';
  const name = from.replace(/<[^>]*>/g, '').replace(/"/g, '').trim();
  return name || from.replace(/[<>]/g, '').trim();
}

export function ReplyPanel({ reply, runId, title, children }: { reply: Reply; runId?: string; title?: string; children?: ReactNode }) {
  const address = reply.from?.match(/<([^>]+)>/)?.[1] ?? (reply.from?.includes('@') ? reply.from : null);
  return (
    <section className="reply-panel" aria-label={title ?? 'Reply'}>
      <Icon name="inbox" size={18} />
      <div className="reply-panel-content">
        {title && <p className="reply-panel-eyebrow">{title}</p>}
        <p className="reply-panel-title">
          <strong title={address ?? undefined}>{replierName(reply.from)}</strong> replied <RelativeTime iso={reply.receivedAt} />
          {reply.snippet ? ':' : '.'}
        </p>
        {reply.snippet
          ? <blockquote className="reply-panel-snippet">{reply.snippet}</blockquote>
          : <p className="reply-panel-snippet muted">The reply has no text to show; read it in your mailbox.</p>}
        {children}
        {runId && <Link to="/runs/$id" params={{ id: runId }} className="reply-panel-link">See the run</Link>}
      </div>
    </section>
  );
}

// The delivery of an approved draft, as it happens: Queued → Sending → Sent (or saved to the mailbox), or Failed
// with the mail server's words and "Retry delivery". The run page follows the run while the delivery is under way.
import { useState } from 'react';
import { api } from '../../api/client';
import type { Run } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Badge, Button, ErrorAlert } from '../../components/ui';
import type { Delivery } from '../../lib/delivery';
import { formatDateTime } from '../../lib/format';
import { Link } from '../../lib/router';

function time(at: string): string {
  return new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

function headline(delivery: Delivery): { tone: 'blue' | 'green' | 'red' | 'amber'; text: string } {
  const mailbox = delivery.method === 'mailbox';
  switch (delivery.status) {
    case 'QUEUED': return { tone: 'blue', text: delivery.error ? 'Waiting to try again' : 'Queued' };
    case 'DELIVERING': return { tone: 'amber', text: mailbox ? 'Saving to your mailbox…' : 'Sending…' };
    case 'DELIVERED': return {
      tone: 'green', text: `${mailbox ? 'Saved to your mailbox' : 'Sent'}${delivery.deliveredAt ? ` at ${time(delivery.deliveredAt)}` : ''}`,
    };
    case 'FAILED': return { tone: 'red', text: 'Failed' };
    case 'SCHEDULED': return { tone: 'blue', text: delivery.scheduledFor ? `Scheduled for ${formatDateTime(delivery.scheduledFor)}` : 'Scheduled' };
    case 'CANCELLED': return { tone: 'amber', text: 'Cancelled: not sent' };
    case 'SUPPRESSED': return { tone: 'red', text: 'Not sent: the address asked not to be contacted' };
    case 'BOUNCED': return { tone: 'red', text: 'Bounced' };
  }
}

export function DeliveryPanel({ run, onChanged }: { run: Run; onChanged(run: Run): void }) {
  const delivery = run.emailDraft?.delivery;
  const [retrying, setRetrying] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!delivery) return null;
  const { tone, text } = headline(delivery);

  const retry = async () => {
    setRetrying(true);
    setError(null);
    try {
      const { body } = await api.post('/api/v1/runs/{id}/deliver', { params: { id: run.id } });
      onChanged(body.data);
    } catch (e) {
      setError(e);
    } finally {
      setRetrying(false);
    }
  };

  return (
    <section className="delivery-panel" aria-labelledby="delivery-title" data-delivery-status={delivery.status}>
      <div className="delivery-head">
        <h3 id="delivery-title" className="delivery-title"><Icon name="mail" size={15} /> {delivery.method === 'send' ? 'Delivery' : 'Saved draft'}</h3>
        <span role="status" aria-live="polite"><Badge tone={tone} dot pulse={delivery.status === 'QUEUED' || delivery.status === 'DELIVERING'}>{text}</Badge></span>
      </div>
      {delivery.error && (
        <p className={`delivery-error${delivery.status === 'FAILED' ? '' : ' muted'}`}>
          {delivery.status === 'FAILED' ? 'Failed: ' : 'Last attempt: '}{delivery.error}
        </p>
      )}
      <dl className="delivery-facts">
        <div><dt>Attempts</dt><dd>{delivery.attempts}</dd></div>
        <div><dt>Queued</dt><dd>{formatDateTime(delivery.queuedAt)}</dd></div>
        {delivery.status === 'SCHEDULED' && <div><dt>Waiting in</dt><dd><Link to="/outbox">the outbox</Link></dd></div>}
        <div><dt>Message-ID</dt><dd><code>{delivery.messageId}</code></dd></div>
      </dl>
      {delivery.status === 'FAILED' && (
        <Button icon="refresh" busy={retrying} onClick={() => void retry()}>Retry delivery</Button>
      )}
      {error ? <ErrorAlert error={error} /> : null}
    </section>
  );
}

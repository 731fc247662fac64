// Settings / Webhooks (admins only): the workspace's endpoints and their state (enabled, or disabled and why);
// add one (its signing secret is shown once, here), send it a test event, read its delivery log and replay a
// delivery, disable or enable it, roll its secret, remove it.
import { useState } from 'react';
import { api } from '../../api/client';
import type { ResponseOf } from '../../api/client';
import { Dialog } from '../../components/Dialog';
import { FormDialog } from '../../components/FormDialog';
import { useToast } from '../../components/Toast';
import { Alert, Badge, Button, CopyButton, EmptyState, ErrorAlert, Field, LoadingBlock, RelativeTime } from '../../components/ui';
import { useDialogForm } from '../../lib/dialogForm';
import { useApiQuery } from '../../lib/query';
import { CardList, ConfirmDelete, ListCard, useToastOnFailure } from './CardList';

type Endpoint = ResponseOf<'get', '/api/v1/webhooks'>['data'][number];
type Delivery = ResponseOf<'get', '/api/v1/webhooks/{id}/deliveries'>['data'][number];
type EventType = Endpoint['events'][number];

const EVENT_TYPES: readonly EventType[] = [
  'lead.created', 'lead.updated', 'lead.deleted',
  'run.started', 'run.step_completed', 'run.awaiting_approval', 'run.failed', 'run.completed', 'run.rejected', 'run.cancelled',
  'draft.sent', 'draft.delivery_failed', 'draft.replied', 'draft.bounced', 'recipient.unsubscribed',
  'sequence.enrolled', 'sequence.stopped', 'sequence.paused', 'sequence.resumed',
  'touch.drafted', 'touch.awaiting_approval', 'touch.sent', 'touch.skipped',
];

/** Admins only: the header and the guard are the route's (AdminGate). */
export function WebhooksPage() {
  const toast = useToast();
  const endpoints = useApiQuery(['webhooks'], (signal) => api.get('/api/v1/webhooks', { signal }).then((r) => r.body.data));
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<{ title: string; url: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Endpoint | null>(null);
  const act = useToastOnFailure();

  const replace = (next: Endpoint) => endpoints.set((list) => (list ?? []).map((e) => (e.id === next.id ? next : e)));

  return (
    <>
      <CardList
        list={endpoints}
        noun={['endpoint', 'endpoints']}
        what="webhooks"
        actions={<>
          <Button icon="refresh" size="small" variant="ghost" onClick={() => void endpoints.reload()}>Refresh</Button>
          <Button variant="primary" icon="plus" onClick={() => setAdding(true)}>Add endpoint</Button>
        </>}
        empty={(
          <EmptyState icon="external" title="No webhook endpoints yet" action={<Button variant="primary" icon="plus" onClick={() => setAdding(true)}>Add an endpoint</Button>}>
            Add an endpoint to hear of new leads, finished runs and sent e-mails without polling.
          </EmptyState>
        )}
      >
        {(endpoint) => (
          <ListCard
            key={endpoint.id}
            label={endpoint.url}
            className="webhook-endpoint"
            attributes={{ 'data-endpoint-id': endpoint.id }}
            summary={<>
              <p><code className="mono">{endpoint.url}</code></p>
              {endpoint.description && <p className="muted small">{endpoint.description}</p>}
              <p className="small">
                {endpoint.enabled ? <Badge tone="green" dot>Enabled</Badge> : <Badge tone="gray">Disabled</Badge>}
                {' '}<span className="muted">{endpoint.events.length === 0 ? 'Every event' : endpoint.events.join(', ')}</span>
              </p>
              {!endpoint.enabled && endpoint.disabledReason && <Alert tone="warning" title="Disabled">{endpoint.disabledReason}</Alert>}
              {endpoint.enabled && endpoint.failingSince && <p className="small muted">Failing since <RelativeTime iso={endpoint.failingSince} /></p>}
            </>}
            actions={<>
              <Button size="small" disabled={!endpoint.enabled} onClick={() => void act('send a test event', async () => {
                await api.post('/api/v1/webhooks/{id}/test', { params: { id: endpoint.id } });
                toast('A test event is on its way; see it in the delivery log.');
                setOpen(endpoint.id);
              })}>Send test event</Button>
              <Button size="small" variant="ghost" onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)}>
                {open === endpoint.id ? 'Hide deliveries' : 'Deliveries'}
              </Button>
              <Button size="small" variant="ghost" onClick={() => void act('change the endpoint', async () => {
                const { body } = await api.patch('/api/v1/webhooks/{id}', { params: { id: endpoint.id }, body: { enabled: !endpoint.enabled } });
                replace(body.data);
              })}>{endpoint.enabled ? 'Disable' : 'Enable'}</Button>
              <Button size="small" variant="ghost" onClick={() => void act('roll the secret', async () => {
                const { body } = await api.post('/api/v1/webhooks/{id}/rotate-secret', { params: { id: endpoint.id } });
                const { secret: plaintext, ...rest } = body;
                replace(rest);
                setSecret({ title: 'The new signing secret', url: endpoint.url, secret: plaintext });
              })}>Roll secret</Button>
              <Button size="small" variant="ghost" className="danger-text" onClick={() => setRemoving(endpoint)}>Delete</Button>
            </>}
          >
            {open === endpoint.id && <DeliveryLog endpoint={endpoint} />}
          </ListCard>
        )}
      </CardList>

      {adding && (
        <AddEndpointDialog
          onClose={() => setAdding(false)}
          onAdded={(created) => {
            setAdding(false);
            const { secret: plaintext, ...endpoint } = created;
            endpoints.set((list) => [...(list ?? []), endpoint]);
            setSecret({ title: 'Your endpoint\'s signing secret', url: endpoint.url, secret: plaintext });
          }}
        />
      )}
      {secret && (
        <Dialog title={secret.title} onClose={() => setSecret(null)} footer={<Button variant="primary" onClick={() => setSecret(null)}>I have stored it</Button>}>
          <Alert tone="warning" title="Copy this secret now">
            This is the only time it is shown. Your endpoint checks each request's <code>webhook-signature</code> with it.
          </Alert>
          <div className="secret">
            <label htmlFor="webhook-secret" className="field-label">{secret.url}</label>
            <div className="secret-row">
              <input id="webhook-secret" className="input mono secret-input" readOnly value={secret.secret} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={secret.secret} size="medium" />
            </div>
          </div>
        </Dialog>
      )}
      {removing && (
        <ConfirmDelete title="Delete this endpoint?" confirm="Delete endpoint" onClose={() => setRemoving(null)} onConfirm={() => void act('delete the endpoint', async () => {
          await api.delete('/api/v1/webhooks/{id}', { params: { id: removing.id } });
          endpoints.set((list) => (list ?? []).filter((e) => e.id !== removing.id));
          setRemoving(null);
        })}>
          <p>Nothing more is sent to <code>{removing.url}</code>, and its delivery log goes with it.</p>
        </ConfirmDelete>
      )}
    </>
  );
}

function DeliveryLog({ endpoint }: { endpoint: Endpoint }) {
  const toast = useToast();
  const act = useToastOnFailure();
  const log = useApiQuery(['webhooks', endpoint.id, 'deliveries'], (signal) => api.get('/api/v1/webhooks/{id}/deliveries', { params: { id: endpoint.id }, query: { limit: 20 }, signal }).then((r) => r.body.data));
  const replay = (delivery: Delivery) => act('replay the delivery', async () => {
    await api.post('/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { id: endpoint.id, deliveryId: delivery.id } });
    toast('The event is sent again.');
    await log.reload();
  });
  return (
    <div className="table-card">
      <div className="section-bar">
        <p className="section-bar-text">Delivery log</p>
        <Button icon="refresh" size="small" variant="ghost" onClick={() => void log.reload()}>Refresh log</Button>
      </div>
      {log.error ? <ErrorAlert error={log.error} retry={log.reload} /> : null}
      {!log.data && !log.error && <LoadingBlock label="Loading deliveries" />}
      {log.data?.length === 0 && <p className="muted small">Nothing has been sent to this endpoint yet.</p>}
      {log.data && log.data.length > 0 && (
        <div className="table-scroll">
          <table className="table table-stack">
            <caption className="visually-hidden">Deliveries to {endpoint.url}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Answer</th>
                <th scope="col">Time</th>
                <th scope="col">Response</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {log.data.map((d) => (
                <tr key={d.id} data-delivery-id={d.id}>
                  <th scope="row"><code>{d.eventType}</code></th>
                  <td data-label="Status">
                    <Badge tone={d.status === 'SUCCEEDED' ? 'green' : d.status === 'FAILED' ? 'red' : 'gray'}>{d.status}</Badge>
                    {d.attempts > 1 && <span className="muted small"> {d.attempts} attempts</span>}
                  </td>
                  <td data-label="Answer">{d.lastStatus ?? (d.lastError ? '—' : '')}{d.lastDurationMs !== null && <span className="muted small"> {d.lastDurationMs} ms</span>}</td>
                  <td className="nowrap" data-label="Time"><RelativeTime iso={d.updatedAt} /></td>
                  <td data-label="Response" className="small"><span className="mono">{(d.lastError ?? d.lastResponseExcerpt ?? '').slice(0, 200)}</span></td>
                  <td className="align-right cell-end"><Button size="small" variant="ghost" onClick={() => void replay(d)} aria-label={`Replay ${d.eventType}`}>Replay</Button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** The fields in the order the form shows them: the first with the server's message gets the focus. */
const ENDPOINT_FIELDS = ['url', 'description', 'events'] as const;

interface EndpointValues {
  url: string;
  description: string;
  events: EventType[];
}

function AddEndpointDialog({ onClose, onAdded }: { onClose(): void; onAdded(endpoint: ResponseOf<'post', '/api/v1/webhooks'>): void }) {
  const form = useDialogForm<EndpointValues>({
    defaultValues: { url: '', description: '', events: [] },
    known: ENDPOINT_FIELDS,
    check: (values) => (values.url.trim() ? {} : { url: 'Give the URL your endpoint listens on, e.g. https://example.com/leadrun.' }),
    send: async ({ url, description, events }) => {
      const { body } = await api.post('/api/v1/webhooks', { body: { url: url.trim(), events, description: description.trim() || null } });
      onAdded(body);
    },
  });
  const { register, fieldError } = form;
  return (
    <FormDialog title="Add a webhook endpoint" description="Events are POSTed as JSON to this URL and signed with a secret you see next."
      submitLabel="Add endpoint" onClose={onClose} form={form}>
        <Field label="URL" error={fieldError('url')} hint="http or https, on an address reachable from the internet.">
          {(p) => <input {...p} {...register('url')} className="input" type="url" autoComplete="off" autoFocus maxLength={2048} />}
        </Field>
        <Field label="Description" optional error={fieldError('description')}>
          {(p) => <input {...p} {...register('description')} className="input" maxLength={500} />}
        </Field>
        <fieldset className="fieldset">
          <legend className="field-label">Events <span className="muted small">(none chosen: every event)</span></legend>
          <div className="checkbox-list">
            {EVENT_TYPES.map((type) => (
              <label key={type} className="checkbox">
                <input type="checkbox" value={type} {...register('events')} />
                <span><code className="scope-name">{type}</code></span>
              </label>
            ))}
          </div>
          {fieldError('events') && <p className="field-error">{fieldError('events')}</p>}
        </fieldset>
    </FormDialog>
  );
}

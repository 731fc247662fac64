// Settings / Suppressions (DESIGN §15): the addresses and domains nothing is delivered to (unsubscribes, bounces,
// entries of the team's own), searched, added, removed, imported from a CSV file and exported as one.
import { useRef, useState, type FormEvent } from 'react';
import { api, ApiError, upload } from '../../api/client';
import type { ResponseOf } from '../../api/client';
import { useToast } from '../../components/Toast';
import { Badge, Button, EmptyState, ErrorAlert, Field, LoadingBlock, PageHeader, RelativeTime } from '../../components/ui';
import { useApiQuery, useTitle } from '../../lib/query';

type Suppression = ResponseOf<'get', '/api/v1/suppressions'>['data'][number];

const REASONS: Record<Suppression['reason'], string> = {
  unsubscribed: 'Unsubscribed', bounced: 'Bounced', complained: 'Complained', manual: 'Added by hand', imported: 'Imported',
};

export function SuppressionsPage() {
  useTitle('Suppressions');
  const toast = useToast();
  const [q, setQ] = useState('');
  const [entry, setEntry] = useState('');
  const [adding, setAdding] = useState(false);
  const file = useRef<HTMLInputElement>(null);
  const list = useApiQuery(['suppressions', q], (signal) =>
    api.get('/api/v1/suppressions', { query: { limit: 200, ...(q ? { q } : {}) }, signal }).then((r) => r.body.data));

  const add = async (event: FormEvent) => {
    event.preventDefault();
    const value = entry.trim();
    if (!value) return;
    setAdding(true);
    try {
      const { body } = await api.post('/api/v1/suppressions', { body: value.includes('@') ? { email: value } : { domain: value } });
      list.set((items) => [body.data, ...(items ?? []).filter((e) => e.id !== body.data.id)]);
      setEntry('');
      toast(`${body.data.email ?? body.data.domain} is suppressed.`);
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'Could not add it.');
    } finally {
      setAdding(false);
    }
  };

  const remove = async (item: Suppression) => {
    try {
      await api.delete('/api/v1/suppressions/{id}', { params: { id: item.id } });
      list.set((items) => (items ?? []).filter((e) => e.id !== item.id));
      toast(`${item.email ?? item.domain} may be written to again.`);
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'Could not remove it.');
    }
  };

  const importFile = async (chosen: File | undefined) => {
    if (!chosen) return;
    try {
      const { body } = await upload('/api/v1/suppressions/import', chosen, { contentType: 'text/csv' });
      toast(`Imported: ${body.data.added} added, ${body.data.existing} already there, ${body.data.invalid} skipped.`);
      await list.reload();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'Could not import the file.');
    } finally {
      if (file.current) file.current.value = '';
    }
  };

  return (
    <>
      <PageHeader
        eyebrow="Settings"
        title="Suppressions"
        description="Nothing is ever delivered to these addresses and domains: people who unsubscribed, addresses that bounced, and any you add. Erasing a lead keeps its entry."
        actions={(
          <>
            <Button icon="upload" onClick={() => file.current?.click()}>Import CSV</Button>
            <a className="button button-secondary button-medium" href="/api/v1/suppressions/export" download>Export CSV</a>
            <input ref={file} type="file" accept=".csv,text/csv" hidden aria-label="CSV file of addresses and domains"
              onChange={(event) => void importFile(event.target.files?.[0])} />
          </>
        )}
      />
      <form className="section-bar section-bar-form" onSubmit={(event) => void add(event)} aria-label="Add a suppression">
        <Field label="Address or domain">
          {(control) => <input {...control} className="input" value={entry} onChange={(event) => setEntry(event.target.value)} placeholder="ada@example.com or example.com" maxLength={254} />}
        </Field>
        <div className="section-bar-actions">
          <Button type="submit" variant="primary" icon="plus" busy={adding}>Suppress</Button>
        </div>
      </form>
      <Field label="Search">
        {(control) => <input {...control} className="input" type="search" value={q} onChange={(event) => setQ(event.target.value)} placeholder="Part of an address or domain" maxLength={254} />}
      </Field>
      {list.error ? <ErrorAlert error={list.error} retry={list.reload} /> : null}
      {!list.data && !list.error && <LoadingBlock label="Loading suppressions" />}
      {list.data?.length === 0 && (
        <EmptyState icon="mail" title={q ? 'Nothing found' : 'No suppressions yet'}>
          An address lands here when its owner unsubscribes or a server refuses it for good.
        </EmptyState>
      )}
      {list.data && list.data.length > 0 && (
        <div className="table-card"><div className="table-scroll">
          <table className="table table-stack">
            <thead><tr><th scope="col">Address or domain</th><th scope="col">Reason</th><th scope="col">Source</th><th scope="col">Added</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {list.data.map((item) => (
                <tr key={item.id}>
                  <td><code className="mono">{item.email ?? `*@${item.domain}`}</code></td>
                  <td><Badge tone={item.reason === 'bounced' ? 'red' : item.reason === 'unsubscribed' ? 'amber' : 'gray'}>{REASONS[item.reason]}</Badge></td>
                  <td className="muted small">{item.source}</td>
                  <td><RelativeTime iso={item.createdAt} /></td>
                  <td><Button size="small" variant="ghost" className="danger-text" icon="trash" onClick={() => void remove(item)}>Remove</Button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div></div>
      )}
    </>
  );
}

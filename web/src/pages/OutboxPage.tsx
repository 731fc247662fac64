// The outbox (DESIGN §14): approved e-mails waiting for the send window, a sender's daily limit or least gap, or the
// time their approval asked for, the soonest first. Each can be sent now (past the window, still within the
// sender's limits) or cancelled.
import { useState } from 'react';
import { api, type ResponseOf } from '../api/client';
import { Icon } from '../components/Icon';
import { useToast } from '../components/Toast';
import { Button, EmptyState, ErrorAlert, LoadingBlock, PageHeader } from '../components/ui';
import { formatDateTime, plural } from '../lib/format';
import { Link } from '../lib/router';
import { useApiQuery, useTitle } from '../lib/query';

type Entry = ResponseOf<'get', '/api/v1/outbox'>['data'][number];

const PAGE_SIZE = 25;
const WAITING_LABEL: Record<Entry['waitingFor'], string> = {
  window: 'The send window',
  daily_limit: 'The sender\'s daily limit',
  gap: 'The gap between two e-mails',
  sendAt: 'The time asked for',
};

export function OutboxPage() {
  useTitle('Outbox');
  const toast = useToast();
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const [acting, setActing] = useState<string | null>(null);
  const page = useApiQuery(['outbox', cursor], async (signal) => {
    const result = await api.get('/api/v1/outbox', { query: { limit: PAGE_SIZE, cursor }, signal });
    return { entries: result.body.data, next: result.next };
  });

  const act = async (entry: Entry, action: 'send' | 'cancel') => {
    setActing(entry.id);
    try {
      if (action === 'send') await api.post('/api/v1/outbox/{id}/send-now', { params: { id: entry.id }, body: {} });
      else await api.delete('/api/v1/outbox/{id}', { params: { id: entry.id } });
      toast(action === 'send' ? 'The e-mail is on its way, within the sender\'s limits.' : 'The e-mail was cancelled; it will not be sent.');
      page.reload();
    } catch (error) {
      toast(error instanceof Error ? error.message : 'That did not work.', 'error');
    } finally {
      setActing(null);
    }
  };

  return (
    <>
      <PageHeader title="Outbox" description="Approved e-mails waiting for their time: the send window in the lead's time zone, a sender's daily limit, or the time the approval asked for." />
      {page.error ? <ErrorAlert error={page.error} retry={page.reload} /> : null}
      {!page.data && !page.error && <LoadingBlock label="Loading the outbox" />}
      {page.data?.entries.length === 0 && (
        <EmptyState icon="clock" title="Nothing is waiting">Approved e-mails that wait for a send window or a limit show here.</EmptyState>
      )}
      {page.data && page.data.entries.length > 0 && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-stack" aria-busy={page.loading}>
              <caption className="visually-hidden">Waiting e-mails, page {cursors.length}</caption>
              <thead>
                <tr>
                  <th scope="col">To</th>
                  <th scope="col">Leaves</th>
                  <th scope="col">Waiting for</th>
                  <th scope="col" className="align-right"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {page.data.entries.map((entry) => (
                  <tr key={entry.id}>
                    <td className="cell-main">
                      <Link to="/runs/$id" params={{ id: entry.runId }} className="row-title lead-cell-sub">{entry.to ?? 'No recipient'}</Link>
                      {entry.touch > 1 && <div className="row-sub">Follow-up {entry.touch - 1}</div>}
                    </td>
                    <td className="nowrap" data-label="Leaves"><time dateTime={entry.scheduledFor}>{formatDateTime(entry.scheduledFor)}</time></td>
                    <td data-label="Waiting for">{WAITING_LABEL[entry.waitingFor]}</td>
                    <td className="align-right">
                      <div className="call-actions">
                        <Button size="small" icon="mail" busy={acting === entry.id} onClick={() => void act(entry, 'send')}>Send now</Button>
                        <Button size="small" variant="ghost" icon="x" className="danger-text" disabled={acting === entry.id}
                          onClick={() => void act(entry, 'cancel')}>Cancel</Button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of the outbox">
            <span className="pager-info">Page {cursors.length} · {plural(page.data.entries.length, 'e-mail')}</span>
            <div className="pager-buttons">
              <Button size="small" icon="chevronLeft" disabled={cursors.length < 2 || page.loading} onClick={() => setCursors((c) => c.slice(0, -1))}>Sooner</Button>
              <Button size="small" disabled={!page.data.next || page.loading} onClick={() => setCursors((c) => [...c, page.data!.next])}>Later<Icon name="chevronRight" /></Button>
            </div>
          </nav>
        </div>
      )}
    </>
  );
}

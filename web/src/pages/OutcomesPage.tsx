// Outcomes (DESIGN §16): what the e-mails sent led to, from GET /api/v1/analytics/outreach. The funnel (sent →
// replied → interested → won) and the weekly reply rate as charts (uPlot, loaded with this page only), tables by
// sender, angle and sequence step, a date range, and a CSV download of each table. Opens and clicks are not tracked,
// so none are shown.
import { useState } from 'react';
import { api } from '../api/client';
import type { components } from '../api/schema';
import { Card, ErrorAlert, LoadingBlock, PageHeader } from '../components/ui';
import { formatNumber } from '../lib/format';
import { useApiQuery, useTitle } from '../lib/query';
import { FunnelChart, WeeklyReplyRateChart } from './outcomes/Charts';

type Group = components['schemas']['OutreachGroup'];
type GroupBy = 'week' | 'sender' | 'angle' | 'sequenceStep';

const COLUMNS: Array<[keyof Group, string]> = [
  ['sent', 'Sent'], ['delivered', 'Delivered'], ['bounced', 'Bounced'], ['replied', 'Replied'], ['interested', 'Interested'],
  ['unsubscribed', 'Unsubscribed'], ['won', 'Won'], ['replyRate', 'Reply rate'], ['medianHoursToReply', 'Median hours to reply'],
];

const percent = (rate: number) => `${(Math.round(rate * 1000) / 10).toLocaleString()} %`;
const cell = (row: Group, key: keyof Group) => key === 'replyRate' ? percent(row.replyRate)
  : key === 'medianHoursToReply' ? (row.medianHoursToReply === null ? '—' : row.medianHoursToReply.toLocaleString())
  : typeof row[key] === 'number' ? formatNumber(row[key]) : String(row[key]);

/** One table as CSV (RFC 4180), a cell that starts like a formula quoted so a spreadsheet shows it as text. */
export function outcomesCsv(groupLabel: string, rows: Group[]): string {
  const quote = (value: string | number | null) => {
    const text = value === null ? '' : String(value);
    const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const header = [groupLabel, ...COLUMNS.map(([key]) => key)].map(quote).join(',');
  return [header, ...rows.map((row) => [row.group, ...COLUMNS.map(([key]) => row[key])].map(quote).join(','))].join('\r\n') + '\r\n';
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function useOutreach(groupBy: GroupBy, from: string, to: string) {
  return useApiQuery(['outreach', groupBy, from, to], async (signal) => (await api.get('/api/v1/analytics/outreach', {
    query: { groupBy, from: from || null, to: to || null }, signal,
  })).body);
}

function OutcomesTable({ title, groupBy, groupLabel, from, to }: { title: string; groupBy: GroupBy; groupLabel: string; from: string; to: string }) {
  const report = useOutreach(groupBy, from, to);
  const rows = report.data?.data ?? [];
  return (
    <Card title={title} titleId={`outcomes-by-${groupBy}`} actions={report.data && (
      <button type="button" className="button button-secondary button-small"
        onClick={() => download(`outcomes-by-${groupBy}-${report.data!.from}-to-${report.data!.to}.csv`, outcomesCsv(groupLabel, rows))}>
        Download CSV
      </button>
    )}>
      {report.error ? <ErrorAlert error={report.error} retry={report.reload} /> : null}
      {!report.data && !report.error && <LoadingBlock label={`Loading ${title.toLowerCase()}`} />}
      {report.data && (rows.length === 0
        ? <p className="muted">No e-mails were sent in these days.</p>
        : (
          <div className="table-scroll">
            <table className="table outcomes-table">
              <thead><tr><th scope="col">{groupLabel}</th>{COLUMNS.map(([key, label]) => <th key={key} scope="col" className="numeric">{label}</th>)}</tr></thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.group}>
                    <th scope="row" data-label={groupLabel}>{groupBy === 'sequenceStep' ? `Touch ${row.group}` : row.group}</th>
                    {COLUMNS.map(([key, label]) => <td key={key} className="numeric" data-label={label}>{cell(row, key)}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
    </Card>
  );
}

export function OutcomesPage() {
  useTitle('Outcomes');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const weeks = useOutreach('week', from, to);
  const rows = weeks.data?.data ?? [];
  const total = rows.reduce((sum, w) => ({
    sent: sum.sent + w.sent, replied: sum.replied + w.replied, interested: sum.interested + w.interested, won: sum.won + w.won,
    delivered: sum.delivered + w.delivered,
  }), { sent: 0, replied: 0, interested: 0, won: 0, delivered: 0 });
  const thisWeek = rows[rows.length - 1];

  return (
    <>
      <PageHeader title="Outcomes" description="What your e-mails led to, counted from the e-mails sent and the replies found. Opens and clicks are not tracked." />
      <form className="outcomes-range" onSubmit={(event) => event.preventDefault()} aria-label="Date range">
        <label>From <input type="date" value={from || weeks.data?.from || ''} max={to || undefined} onChange={(event) => setFrom(event.target.value)} /></label>
        <label>To <input type="date" value={to || weeks.data?.to || ''} min={from || undefined} onChange={(event) => setTo(event.target.value)} /></label>
        {(from || to) && <button type="button" className="button button-secondary button-small" onClick={() => { setFrom(''); setTo(''); }}>Last 12 weeks</button>}
        {weeks.data && <span className="muted small">Days in {weeks.data.timeZone}.</span>}
      </form>
      {weeks.error ? <ErrorAlert error={weeks.error} retry={weeks.reload} /> : null}
      {!weeks.data && !weeks.error && <LoadingBlock label="Loading outcomes" />}
      {weeks.data && (
        <>
          <div className="outcomes-stats">
            <Card><p className="stat-label">Sent</p><p className="stat-figure">{formatNumber(total.sent)}</p></Card>
            <Card><p className="stat-label">Reply rate</p><p className="stat-figure">{percent(total.delivered ? total.replied / total.delivered : 0)}</p></Card>
            <Card><p className="stat-label">This week&apos;s reply rate</p><p className="stat-figure">{thisWeek ? percent(thisWeek.replyRate) : '—'}</p></Card>
            <Card><p className="stat-label">Interested</p><p className="stat-figure">{formatNumber(total.interested)}</p></Card>
          </div>
          <div className="outcomes-charts">
            <Card title="Funnel" titleId="outcomes-funnel"><FunnelChart figures={total} /></Card>
            <Card title="Reply rate by week" titleId="outcomes-weekly"><WeeklyReplyRateChart weeks={rows} /></Card>
          </div>
        </>
      )}
      <OutcomesTable title="By sender" groupBy="sender" groupLabel="Sender" from={from} to={to} />
      <OutcomesTable title="By angle" groupBy="angle" groupLabel="Angle" from={from} to={to} />
      <OutcomesTable title="By sequence step" groupBy="sequenceStep" groupLabel="Step" from={from} to={to} />
      <OutcomesTable title="By week" groupBy="week" groupLabel="Week" from={from} to={to} />
    </>
  );
}

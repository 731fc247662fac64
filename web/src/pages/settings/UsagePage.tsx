// Settings / Plan and usage: the plan, the runs started this month against its limit, when the count resets,
// and a chart of runs per day.
import { api } from '../../api/client';
import type { Usage } from '../../api/types';
import { Badge, Card, ErrorAlert, LoadingBlock, PageHeader } from '../../components/ui';
import { formatDate, formatNumber, plural } from '../../lib/format';
import { useApiQuery, useTitle } from '../../lib/query';

export function UsagePage() {
  useTitle('Plan and usage');
  const usage = useApiQuery(['usage'], (signal) => api.get('/ui/api/usage', { signal }).then((r) => r.body));
  return (
    <>
      <PageHeader eyebrow="Settings" title="Plan and usage" description="Runs are counted per calendar month (UTC). Approving or regenerating a draft does not count again." />
      {usage.error ? <ErrorAlert error={usage.error} retry={usage.reload} /> : null}
      {!usage.data && !usage.error && <LoadingBlock label="Loading usage" />}
      {usage.data && <UsageView usage={usage.data} />}
    </>
  );
}

function UsageView({ usage }: { usage: Usage }) {
  const limited = usage.limit !== null;
  const share = limited && usage.limit! > 0 ? Math.min(usage.used / usage.limit!, 1) : 0;
  const left = limited ? Math.max(usage.limit! - usage.used, 0) : null;
  const tone = share >= 1 ? 'over' : share >= 0.8 ? 'near' : 'ok';
  const monthName = usage.days[0] ? new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${usage.days[0].date}T00:00:00Z`)) : 'This month';

  return (
    <>
      <div className="usage-grid">
        <Card className="plan-card">
          <p className="stat-label">Plan</p>
          <p className="plan-name">{usage.plan === 'PRO' ? 'Pro' : 'Free'} <Badge tone={usage.plan === 'PRO' ? 'violet' : 'neutral'}>{usage.plan === 'PRO' ? 'Unlimited runs' : `${formatNumber(usage.limit ?? 0)} runs a month`}</Badge></p>
          <p className="muted small">
            {usage.plan === 'PRO'
              ? 'Start as many runs as your team needs.'
              : 'The limit is set by your installation (FREE_PLAN_MONTHLY_RUNS). A workspace on Pro has no monthly limit.'}
          </p>
        </Card>
        <Card className="meter-card">
          <p className="stat-label">Runs this month</p>
          <p className="meter-figure">
            <span className="meter-used">{formatNumber(usage.used)}</span>
            {limited && <span className="meter-limit"> of {formatNumber(usage.limit!)}</span>}
          </p>
          {limited && (
            <div className={`meter meter-${tone}`} role="meter" aria-label="Runs used this month" aria-valuemin={0} aria-valuemax={usage.limit!} aria-valuenow={usage.used}
              aria-valuetext={`${usage.used} of ${usage.limit} runs used`}>
              <span className="meter-fill" style={{ width: `${share * 100}%` }} />
            </div>
          )}
          <p className="muted small">
            {limited ? (left === 0 ? 'No runs left this month. ' : `${plural(left!, 'run')} left. `) : ''}
            Resets on <time dateTime={usage.resetsAt}>{formatDate(usage.resetsAt)}</time>.
          </p>
        </Card>
      </div>
      <Card title={`Runs per day · ${monthName}`} titleId="chart-title">
        <DailyChart days={usage.days} />
      </Card>
    </>
  );
}

function niceMax(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function DailyChart({ days }: { days: Usage['days'] }) {
  const width = 760;
  const height = 240;
  const pad = { top: 12, right: 8, bottom: 28, left: 36 };
  const max = niceMax(Math.max(0, ...days.map((d) => d.runs)));
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const slot = innerW / Math.max(days.length, 1);
  const barW = Math.max(Math.min(slot * 0.62, 22), 2);
  const today = new Date().toISOString().slice(0, 10);
  const ticks = [0, max / 2, max];
  const total = days.reduce((sum, d) => sum + d.runs, 0);
  const busiest = days.reduce<Usage['days'][number] | null>((best, d) => (!best || d.runs > best.runs ? d : best), null);
  const label = (date: string) => new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`));

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="chart-summary" className="chart-svg">
        <title id="chart-summary">
          {`${plural(total, 'run')} this month${busiest && busiest.runs > 0 ? `; the busiest day was ${label(busiest.date)} with ${plural(busiest.runs, 'run')}` : ''}.`}
        </title>
        {ticks.map((tick) => {
          const y = pad.top + innerH - (tick / max) * innerH;
          return (
            <g key={tick}>
              <line x1={pad.left} x2={width - pad.right} y1={y} y2={y} className={tick === 0 ? 'chart-axis' : 'chart-grid'} />
              <text x={pad.left - 8} y={y + 4} textAnchor="end" className="chart-label">{formatNumber(tick)}</text>
            </g>
          );
        })}
        {days.map((day, i) => {
          const h = (day.runs / max) * innerH;
          const x = pad.left + i * slot + (slot - barW) / 2;
          const isToday = day.date === today;
          const future = day.date > today;
          return (
            <g key={day.date}>
              <rect x={x} y={pad.top + innerH - h} width={barW} height={Math.max(h, day.runs > 0 ? 2 : 0)} rx={Math.min(3, barW / 2)}
                className={isToday ? 'chart-bar chart-bar-today' : 'chart-bar'}>
                <title>{`${label(day.date)}: ${plural(day.runs, 'run')}`}</title>
              </rect>
              {day.runs === 0 && !future && <rect x={x} y={pad.top + innerH - 1.5} width={barW} height={1.5} className="chart-zero" />}
              {(i === 0 || (i + 1) % 5 === 0 || isToday) && (
                <text x={x + barW / 2} y={height - 8} textAnchor="middle" className={isToday ? 'chart-label chart-label-today' : 'chart-label'}>
                  {isToday ? 'Today' : new Date(`${day.date}T00:00:00Z`).getUTCDate()}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <details className="chart-table">
        <summary>Show as a table</summary>
        <table className="table table-compact">
          <thead><tr><th scope="col">Day</th><th scope="col" className="align-right">Runs</th></tr></thead>
          <tbody>{days.map((d) => <tr key={d.date}><td>{label(d.date)}</td><td className="align-right">{d.runs}</td></tr>)}</tbody>
        </table>
      </details>
    </figure>
  );
}

// The Outcomes page's two charts, drawn with uPlot (docs/decisions/0011-chart-library.md): the funnel (sent →
// replied → interested → won) as bars, and the reply rate week by week as a line. uPlot draws on a canvas, so each
// chart also has a table of the same figures for screen readers (the page's tables). It fits its box: at 390 px
// the chart is as wide as the phone.
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 220;
const ACCENT = '#5b4bd6';

/** A uPlot chart of `data` that follows its box's width. */
function UPlotChart({ options, data, label }: { options: Omit<uPlot.Options, 'width' | 'height'>; data: uPlot.AlignedData; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const chart = new uPlot({ ...options, width: Math.max(element.clientWidth, 200), height: HEIGHT }, data, element);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 200), height: HEIGHT }));
    resize.observe(element);
    return () => { resize.disconnect(); chart.destroy(); };
  }, [options, data]);
  return <div ref={box} className="outcomes-chart" role="img" aria-label={label} />;
}

export interface FunnelFigures { sent: number; replied: number; interested: number; won: number }
const STAGES: Array<[keyof FunnelFigures, string]> = [['sent', 'Sent'], ['replied', 'Replied'], ['interested', 'Interested'], ['won', 'Won']];

export function FunnelChart({ figures }: { figures: FunnelFigures }) {
  const data = useMemo((): uPlot.AlignedData => [STAGES.map((_, i) => i), STAGES.map(([key]) => figures[key])],
    [figures.sent, figures.replied, figures.interested, figures.won]);
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => ({
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: false, range: [-0.5, STAGES.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    axes: [
      { values: (_u, ticks) => ticks.map((t) => STAGES[t]?.[1] ?? ''), splits: () => STAGES.map((_, i) => i) },
      { size: 48 },
    ],
    series: [{}, { label: 'E-mails', fill: ACCENT, stroke: ACCENT, paths: uPlot.paths.bars!({ size: [0.6, 80] }), points: { show: false } }],
  }), []);
  const text = STAGES.map(([key, name]) => `${name} ${figures[key]}`).join(', ');
  return <UPlotChart options={options} data={data} label={`Funnel: ${text}`} />;
}

export function WeeklyReplyRateChart({ weeks }: { weeks: Array<{ group: string; replyRate: number }> }) {
  const data = useMemo((): uPlot.AlignedData => [
    weeks.map((w) => Date.parse(`${w.group}T00:00:00Z`) / 1000),
    weeks.map((w) => Math.round(w.replyRate * 1000) / 10),
  ], [weeks]);
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => ({
    legend: { show: false },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
    scales: { y: { range: (_u, _min, max) => [0, Math.max(10, Math.ceil(max / 10) * 10)] } },
    axes: [{}, { size: 48, values: (_u, ticks) => ticks.map((t) => `${t} %`) }],
    series: [{}, { label: 'Reply rate', stroke: ACCENT, width: 2, points: { show: true, size: 6, fill: ACCENT } }],
  }), []);
  const last = weeks[weeks.length - 1];
  return <UPlotChart options={options} data={data} label={`Weekly reply rate${last ? `; the week of ${last.group}: ${Math.round(last.replyRate * 1000) / 10} %` : ''}`} />;
}

/**
 * Every chart of the dashboard: Chart.js (canvas, tree-shaken to the bar and line charts we draw) in
 * a React component. Chart.js styles its canvas through the CSSOM, never with inline `style`
 * attributes or injected <style>, so it runs under the page's CSP (style-src 'self').
 *
 * A canvas is a picture to assistive technology: each chart is an `img` with a label saying what it
 * shows, and every page that draws one also lists the same numbers in a table.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart as ChartJs,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useRef } from 'react';

ChartJs.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, Legend);

export interface Series {
  label: string;
  data: (number | null)[];
  /** Bars (default for a bar chart) or a line (default for a line chart). */
  kind?: 'bar' | 'line';
  /** A second scale on the right, for a series in other units (requests beside dollars). */
  axis?: 'left' | 'right';
  /** Bars of one stack are drawn on top of each other. */
  stack?: string;
}

export interface ChartProps {
  kind: 'bar' | 'line';
  labels: string[];
  series: Series[];
  /** What the chart shows, in words: the accessible name of the picture. */
  label: string;
  /** Ticks and tooltips of the left scale (the right scale's too unless `formatRight` is given). */
  format?: (value: number) => string;
  formatRight?: (value: number) => string;
  /** The left scale starts at 0 (counts, amounts) unless told otherwise (prices, valuations). */
  beginAtZero?: boolean;
}

/** The palette, from styles.css (--chart-1 … --chart-4), so charts follow light and dark mode. */
function palette(): string[] {
  const style = getComputedStyle(document.documentElement);
  return [1, 2, 3, 4].map((i) => style.getPropertyValue(`--chart-${i}`).trim() || '#1f4fd6');
}

const NARROW_PX = 640;
const tickLimits = (narrow: boolean) => (narrow ? { x: 4, y: 5 } : { x: 8, y: 8 });

/** `latest()` is read when a tick or tooltip is drawn, so a page's newest formatters are used. */
function configOf(latest: () => ChartProps): ChartConfiguration {
  const props = latest();
  const colors = palette();
  const style = getComputedStyle(document.documentElement);
  const text = style.getPropertyValue('--muted').trim() || '#555c68';
  const grid = style.getPropertyValue('--border').trim() || '#d5d9e0';
  const left = (v: number) => (latest().format ?? String)(v);
  const right = (v: number) => (latest().formatRight ?? latest().format ?? String)(v);
  const usesRight = props.series.some((s) => s.axis === 'right');
  // A phone's chart is ~20rem wide: fewer ticks so the axis labels never collide (re-chosen on resize).
  const narrow = window.innerWidth < NARROW_PX;
  return {
    type: props.kind,
    data: {
      labels: props.labels,
      datasets: props.series.map((s, i) => ({
        type: s.kind ?? props.kind,
        label: s.label,
        data: s.data,
        yAxisID: s.axis === 'right' ? 'right' : 'left',
        stack: s.stack,
        backgroundColor: colors[i % colors.length],
        borderColor: colors[i % colors.length],
        borderWidth: (s.kind ?? props.kind) === 'line' ? 2 : 0,
        // Points on a short line; a long one (hundreds of hourly buckets) reads better as a plain line.
        pointRadius: (s.kind ?? props.kind) === 'line' && props.labels.length <= 60 ? 2 : 0,
        spanGaps: true,
      })) as never,
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      onResize: (chart, size) => {
        const ticks = tickLimits(size.width < NARROW_PX);
        const scales = chart.options.scales as Record<string, { ticks?: { maxTicksLimit?: number } } | undefined>;
        if (scales.x?.ticks) scales.x.ticks.maxTicksLimit = ticks.x;
        for (const y of ['left', 'right']) if (scales[y]?.ticks) scales[y]!.ticks!.maxTicksLimit = ticks.y;
      },
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { display: props.series.length > 1, labels: { color: text } },
        tooltip: {
          callbacks: {
            label: (item) => `${item.dataset.label}: ${item.dataset.yAxisID === 'right' ? right(item.parsed.y ?? 0) : left(item.parsed.y ?? 0)}`,
          },
        },
      },
      scales: {
        x: { stacked: props.series.some((s) => s.stack), ticks: { color: text, maxRotation: 0, autoSkip: true, autoSkipPadding: 16, maxTicksLimit: tickLimits(narrow).x }, grid: { display: false } },
        left: {
          position: 'left',
          beginAtZero: props.beginAtZero ?? true,
          stacked: props.series.some((s) => s.stack),
          ticks: { color: text, maxTicksLimit: tickLimits(narrow).y, callback: (v) => left(Number(v)) },
          grid: { color: grid },
        },
        ...(usesRight ? { right: { position: 'right' as const, beginAtZero: true, ticks: { color: text, maxTicksLimit: tickLimits(narrow).y, callback: (v: string | number) => right(Number(v)) }, grid: { display: false } } } : {}),
      },
    },
  };
}

export function Chart(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<ChartJs | null>(null);
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    if (!canvas.current) return;
    chart.current = new ChartJs(canvas.current, configOf(() => latest.current));
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
    // Rebuilt when what it draws changes (a chart's config is cheap; the data is small). Formatters
    // are read from the latest props: pages may pass a new function on every render.
  }, [JSON.stringify([props.kind, props.labels, props.series, props.beginAtZero, props.label])]);

  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={props.label}>
        {props.label}
      </canvas>
    </div>
  );
}

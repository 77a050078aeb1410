/**
 * Request counts and latencies by route, status and transport: `preipo_http_requests_total` and the
 * histogram `preipo_http_request_duration_seconds`.
 *
 * Recorded on every request, so the recording is kept to a few map lookups and additions: one cell
 * per (route, status, transport), found through nested maps (no key string is built per request),
 * holding its own bucket counts. prom-client's Histogram child costs ~0.9 µs per observation with the
 * counter (it builds a label hash string each time; measured in Bun), against ~0.02 µs here; the
 * cells are turned into prom-client's metric format only when /metrics is read. Both metrics come from
 * the same cells, so the counter and the histogram's `_count` always agree.
 */
import type { Registry } from 'prom-client';
import { collector, type CollectedValue } from './collector.ts';

/** Seconds. From a quarter of a millisecond (the cheapest routes) to ten seconds (a slow venue). */
export const REQUEST_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export type Transport = 'rest' | 'trpc' | 'other';
const TRANSPORTS: readonly Transport[] = ['rest', 'trpc', 'other'];
/** Index into TRANSPORTS. */
export type TransportIndex = 0 | 1 | 2;

/**
 * Route labels are templates, so there are as many as the service has routes. Past this many (a
 * transport that named raw paths by mistake), new ones are counted under OVERFLOW_ROUTE instead of
 * growing the scrape without bound.
 */
const MAX_ROUTES = 500;
export const OVERFLOW_ROUTE = '(other)';

interface Cell {
  labels: { route: string; status: string; transport: Transport };
  /** Per bucket, not cumulative (made cumulative when read). */
  buckets: Float64Array;
  count: number;
  sum: number;
}

export class HttpMetrics {
  private readonly cells: Cell[] = [];
  /** route → status → [rest, trpc, other] */
  private readonly byRoute = new Map<string, Map<number, Array<Cell | undefined>>>();

  observe(route: string, status: number, transport: TransportIndex, seconds: number): void {
    let byStatus = this.byRoute.get(route);
    if (byStatus === undefined) {
      if (this.byRoute.size >= MAX_ROUTES) return this.observe(OVERFLOW_ROUTE, status, transport, seconds);
      this.byRoute.set(route, (byStatus = new Map()));
    }
    let byTransport = byStatus.get(status);
    if (byTransport === undefined) byStatus.set(status, (byTransport = [undefined, undefined, undefined]));
    let cell = byTransport[transport];
    if (cell === undefined) {
      cell = { labels: { route, status: String(status), transport: TRANSPORTS[transport]! }, buckets: new Float64Array(REQUEST_BUCKETS.length), count: 0, sum: 0 };
      byTransport[transport] = cell;
      this.cells.push(cell);
    }
    cell.count++;
    cell.sum += seconds;
    let i = 0;
    while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++;
    if (i < REQUEST_BUCKETS.length) cell.buckets[i]!++;
  }

  /** Registers the two metrics (read from the cells at scrape time) in `registry`. */
  register(registry: Registry): void {
    const cells = this.cells;
    registry.registerMetric(
      collector('preipo_http_requests_total', 'HTTP requests answered, by route template, status and transport (rest, trpc, other).', 'counter', () =>
        cells.map((c) => ({ labels: c.labels, value: c.count })),
      ),
    );
    const name = 'preipo_http_request_duration_seconds';
    registry.registerMetric(
      collector(name, 'Time from receiving a request to its response (headers; a stream is counted when it opens), by route template, status and transport.', 'histogram', () =>
        cells.flatMap((c) => {
          const values: CollectedValue[] = [];
          let cumulative = 0;
          REQUEST_BUCKETS.forEach((bound, i) => {
            cumulative += c.buckets[i]!;
            values.push({ labels: { ...c.labels, le: bound }, value: cumulative, metricName: `${name}_bucket` });
          });
          values.push({ labels: { ...c.labels, le: '+Inf' }, value: c.count, metricName: `${name}_bucket` });
          values.push({ labels: c.labels, value: c.sum, metricName: `${name}_sum` });
          values.push({ labels: c.labels, value: c.count, metricName: `${name}_count` });
          return values;
        }),
      ),
    );
  }
}

/**
 * Operator metrics (docs/metrics.md): one prom-client Registry per Services (never the global one, so
 * several apps in one test process keep their own counts), holding prom-client's default process
 * metrics and the service's own, all named `preipo_…`. Counters are kept in memory as things happen;
 * gauges of current state (database pool, market-data age, rate-limiter store, refunds waiting) are
 * read from the services when /metrics is scraped. No label ever holds a key, an address, an account
 * or a raw path.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { BillingMetrics } from '../../accounts/billing-metrics.ts';
import { collector } from './collector.ts';
import { HttpMetrics } from './http.ts';
import { JobMetrics } from './jobs.ts';
import { VenueMetrics } from './venue.ts';

export interface Metrics {
  /** METRICS_ENABLED: false records nothing per request and answers /metrics 404. */
  enabled: boolean;
  registry: Registry;
  http: HttpMetrics;
  billing: BillingMetrics;
  venue: VenueMetrics;
  jobs: JobMetrics;
}

export function createMetrics(options: { enabled: boolean; now?: () => number }): Metrics {
  const registry = new Registry();
  // Standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, …): existing dashboards read them as they are.
  // The event-loop delay is sampled every 100 ms, not prom-client's default 10 ms: at 10 ms its timer
  // alone cost ~6 ms of CPU per second in an idle Bun process (measured), at 100 ms ~1 ms.
  if (options.enabled) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
    dropMisnamedGauges(registry);
  }
  const http = new HttpMetrics();
  http.register(registry);
  return { enabled: options.enabled, registry, http, billing: new BillingMetrics(registry), venue: new VenueMetrics(registry), jobs: new JobMetrics(registry, options.now) };
}

/**
 * prom-client's default metrics include gauges named like counters (`nodejs_active_handles_total`,
 * `nodejs_active_requests_total`, `nodejs_active_resources_total`: the sums of the labelled
 * `nodejs_active_handles` etc. beside them), which promtool's check rejects: `_total` is a counter's
 * suffix, and rate() over a gauge is meaningless. They are dropped; the labelled gauges (sum them
 * for the total) stay. tests/platform/metrics.test.ts: no gauge ends in _total, every counter does.
 */
function dropMisnamedGauges(registry: Registry): void {
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (type === 'gauge' && name.endsWith('_total')) registry.removeSingleMetric(name);
  }
}

/** The Prometheus text of every metric, and its content type (`text/plain; version=0.0.4`). */
export async function scrape(metrics: Metrics): Promise<Response> {
  return new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' } });
}

/**
 * What the scrape-time gauges read, passed in by services.ts (which builds the metrics first, so this
 * file does not import it): each a function, called when /metrics is scraped.
 */
export interface WatchedState {
  /** The database pool: connections it may open, statements and transactions in flight. */
  poolUsage(): { size: number; inFlight: number };
  /** Age of the market-data snapshot, undefined before the first. */
  marketSnapshotAgeMs(): number | undefined;
  /** Rate-limiter store calls failed so far, by reason (undefined: a store that cannot fail). */
  rateLimitStoreErrors(): Readonly<Record<string, number>> | undefined;
  /** Refunds of failed requests waiting for the database. */
  refundsWaiting(): number;
}

/** Gauges read from the services at scrape time. */
export function watchServices(metrics: Metrics, state: WatchedState): void {
  const { registry } = metrics;
  const pool = () => state.poolUsage();
  new Gauge({ name: 'preipo_db_pool_size', help: 'Database connections the pool may open (DATABASE_POOL_SIZE; 1 for the embedded PGlite).', registers: [registry], collect() { this.set(pool().size); } });
  new Gauge({
    name: 'preipo_db_pool_in_use',
    help: 'Database connections busy with a statement or a transaction (statements in flight, at most the pool size).',
    registers: [registry],
    collect() {
      const { size, inFlight } = pool();
      this.set(Math.min(size, inFlight));
    },
  });
  new Gauge({
    name: 'preipo_db_pool_waiting',
    help: 'Statements and transactions in flight beyond the pool size: waiting behind another one for a connection.',
    registers: [registry],
    collect() {
      const { size, inFlight } = pool();
      this.set(Math.max(0, inFlight - size));
    },
  });

  registry.registerMetric(
    collector('preipo_market_snapshot_age_seconds', 'Age of the market-data snapshot (events and order books) requests are answered from; absent before the first.', 'gauge', () => {
      const ageMs = state.marketSnapshotAgeMs();
      return ageMs === undefined ? [] : [{ labels: {}, value: ageMs / 1000 }];
    }),
  );

  const seen: Record<string, number> = {};
  new Counter({
    name: 'preipo_ratelimit_store_errors_total',
    help: 'Rate-limiter store (Redis) calls that failed, by reason (timeout, error, unavailable); each request affected was served unlimited.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const errors = state.rateLimitStoreErrors() ?? { timeout: 0, error: 0, unavailable: 0 };
      for (const [reason, total] of Object.entries(errors)) {
        this.inc({ reason }, total - (seen[reason] ?? 0));
        seen[reason] = total;
      }
    },
  });

  new Gauge({ name: 'preipo_billing_refunds_pending', help: 'Refunds of failed requests waiting for the database to take them.', registers: [registry], collect() { this.set(state.refundsWaiting()); } });
}

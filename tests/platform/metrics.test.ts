/**
 * /metrics (docs/metrics.md), through the real HTTP surface: who may read it, the Prometheus text it
 * answers, and that each metric moves with what it counts — requests by route/status/transport on
 * both transports, billing admissions, refusals and refunds, venue calls, the market snapshot's age,
 * the database pool, rate-limiter store errors and background job lag — without a secret in it.
 * Also the separate listen address (METRICS_PORT) of a real server process.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { revokeApiKey } from '../../server/accounts/api-keys.ts';
import { startSettlementWorker } from '../../server/trading/settlement-worker.ts';
import { createTestApp, DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { engine, freshDatabase } from '../harness/databases.ts';
import { fundedAccount, type FundedAccount } from '../harness/factories.ts';
import { freePort, startServer } from '../harness/server-process.ts';
import { api, buy, trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const OPERATOR = { authorization: `Bearer ${DASHBOARD_KEY}` };

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (format 0.0.4); throws on a line that is not one. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of match[2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(t: TestApp): Promise<Sample[]> {
  const res = await t.request('/metrics', { headers: OPERATOR });
  expect(res.status).toBe(200);
  return parse(await res.text());
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

let t: TestApp;
let funded: FundedAccount;
let clock = Date.UTC(2031, 0, 6, 12);
beforeAll(async () => {
  // The app's clock is ours, so ages and lags are exact (the market data and the job clocks read it).
  t = await createTestApp({}, { now: () => clock });
  funded = await fundedAccount(t, { usd: 5 });
});
afterAll(() => t.close());

describe('access', () => {
  test('without a key, with a wrong key, or with the key in the URL: 401 in our error shape', async () => {
    const refusals = [
      await t.request('/metrics'),
      await t.request('/metrics', { headers: { authorization: 'Bearer not-an-operator-key-0123456789abcdef' } }),
      await t.request('/metrics', { headers: { 'x-api-key': funded.apiKey } }),
      await t.request(`/metrics?apiKey=${DASHBOARD_KEY}`),
      await t.request('/metrics', { headers: { authorization: `Basic ${btoa(`x:${DASHBOARD_KEY}`)}` } }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(Object.keys(body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
      expect(body).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect(res.headers.get('x-request-id')).toBe(body.requestId);
    }
  });

  test('an operator key, as a Bearer token or in x-api-key: 200, Prometheus text format 0.0.4', async () => {
    for (const headers of [OPERATOR, { 'x-api-key': DASHBOARD_KEY }, { authorization: `bearer ${DASHBOARD_KEY}` }]) {
      const res = await t.request('/metrics', { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(parse(text).length).toBeGreaterThan(0);
      // prom-client's default process metrics, under their standard names.
      expect(text).toContain('\nprocess_cpu_seconds_total ');
      expect(text).toContain('# TYPE preipo_http_request_duration_seconds histogram');
    }
  });

  test('promtool\'s naming rule: no gauge ends in _total, every counter does (prom-client\'s nodejs_active_*_total gauges dropped)', async () => {
    const res = await t.request('/metrics', { headers: OPERATOR });
    const text = await res.text();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
    expect(types.length).toBeGreaterThan(20);
    expect(types.filter((m) => m.type === 'gauge' && m.name.endsWith('_total')).map((m) => m.name)).toEqual([]);
    expect(types.filter((m) => m.type === 'counter' && !m.name.endsWith('_total')).map((m) => m.name)).toEqual([]);
    expect(types.filter((m) => m.type === 'counter').length).toBeGreaterThan(3);
    // The labelled gauges the dropped sums came from stay.
    expect(types.map((m) => m.name)).toContain('nodejs_active_handles');
  });

  test('wrong keys count against the address\'s failed-authentication budget: 429 once it is used up', async () => {
    const gated = await createTestApp({ RATE_LIMIT_AUTH_FAILURE_BURST: '2', RATE_LIMIT_AUTH_FAILURE_RPS: '0.001' });
    try {
      const wrong = { authorization: 'Bearer wrong-key-0123456789abcdef0123456789' };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await gated.request('/metrics', { headers: wrong, clientIp: '203.0.113.7' })).status);
      expect(statuses).toEqual([401, 401, 429]);
      const blocked = await gated.request('/metrics', { headers: wrong, clientIp: '203.0.113.7' });
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address is not affected; the operator's own key still reads (compared in memory).
      expect((await gated.request('/metrics', { headers: wrong, clientIp: '203.0.113.8' })).status).toBe(401);
      expect((await gated.request('/metrics', { headers: OPERATOR, clientIp: '203.0.113.7' })).status).toBe(200);
    } finally {
      await gated.close();
    }
  });

  test('METRICS_ENABLED=false: /metrics is 404, even for an operator', async () => {
    const off = await createTestApp({ METRICS_ENABLED: 'false' });
    try {
      const res = await off.request('/metrics', { headers: OPERATOR });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    } finally {
      await off.close();
    }
  });
});

describe('requests', () => {
  test('counted by route template, status and transport: the same procedure over /api and /trpc', async () => {
    const before = await scrape(t);
    const rest = { route: 'GET /api/pricing', status: '200', transport: 'rest' };
    const trpc = { route: 'pricing.get', status: '200', transport: 'trpc' };
    for (let i = 0; i < 3; i++) expect((await t.request('/api/pricing')).status).toBe(200);
    await trpcClient(t).pricing.get.query();
    await trpcClient(t).pricing.get.query();
    const after = await scrape(t);
    expect(total(after, 'preipo_http_requests_total', rest) - total(before, 'preipo_http_requests_total', rest)).toBe(3);
    expect(total(after, 'preipo_http_requests_total', trpc) - total(before, 'preipo_http_requests_total', trpc)).toBe(2);
    // The histogram's count and +Inf bucket agree with the counter; its buckets are cumulative.
    for (const labels of [rest, trpc]) {
      const count = total(after, 'preipo_http_request_duration_seconds_count', labels);
      expect(count).toBe(total(after, 'preipo_http_requests_total', labels));
      expect(total(after, 'preipo_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(count);
      const buckets = after.filter((s) => s.name === 'preipo_http_request_duration_seconds_bucket' && s.labels.route === labels.route && s.labels.transport === labels.transport && s.labels.status === '200');
      expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((a, b) => a - b));
      expect(total(after, 'preipo_http_request_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(0);
    }
  });

  test('a path with an id is counted under its template; unknown paths, a tRPC batch and static routes under fixed labels', async () => {
    const before = await scrape(t);
    const res = await t.request('/api/private-companies/424242', { headers: funded.headers });
    expect(res.status).toBe(404);
    expect((await t.request('/api/no-such-route/12345')).status).toBe(404);
    expect((await t.request('/nowhere/at/all')).status).toBe(404);
    expect((await t.request('/trpc/pricing.get,pricing.get?batch=1&input={}')).status).toBe(200);
    expect((await t.request('/healthz')).status).toBe(200);
    const after = await scrape(t);
    const moved = (labels: Record<string, string>) => total(after, 'preipo_http_requests_total', labels) - total(before, 'preipo_http_requests_total', labels);
    expect(moved({ route: 'GET /api/private-companies/{id}', status: '404', transport: 'rest' })).toBe(1);
    expect(moved({ route: '(unmatched)', status: '404', transport: 'rest' })).toBe(1);
    expect(moved({ route: '(unmatched)', status: '404', transport: 'other' })).toBe(1);
    expect(moved({ route: '(batch)', status: '200', transport: 'trpc' })).toBe(1);
    expect(moved({ route: 'GET /healthz', status: '200', transport: 'other' })).toBe(1);
    const routes = new Set(after.filter((s) => s.name === 'preipo_http_requests_total').map((s) => s.labels.route));
    for (const route of routes) expect(route).not.toMatch(/424242|12345|nowhere/);
  });
});

describe('billing', () => {
  test('a billed call moves admissions; a 402 and a revoked key move refusals; a failed handler moves refunds', async () => {
    const before = await scrape(t);
    const company = await t.request('/api/private-companies/source/stripe', { headers: funded.headers });
    expect(company.status).toBe(200);

    const broke = await fundedAccount(t, { usd: 0 });
    expect((await t.request('/api/billing', { headers: broke.headers })).status).toBe(402);
    const revoked = await fundedAccount(t, { usd: 1 });
    await revokeApiKey(t.database.db, { accountId: revoked.accountId, keyId: revoked.apiKeyId });
    expect((await t.request('/api/billing', { headers: revoked.headers })).status).toBe(401);

    const failed = await t.request('/api/private-companies/424243', { headers: funded.headers });
    expect(failed.status).toBe(404);
    expect(failed.headers.get('x-request-cost-usd')).toBe('0');

    const after = await scrape(t);
    const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
    // The company lookup and the failed one were both admitted (premium), then the failed one refunded.
    expect(moved('preipo_billing_admissions_total', { tier: 'premium', plan: 'prepaid' })).toBe(2);
    expect(moved('preipo_billing_refusals_total', { reason: 'insufficient_balance' })).toBe(1);
    expect(moved('preipo_billing_refusals_total', { reason: 'unauthorized' })).toBe(1);
    expect(moved('preipo_billing_refunds_total', { outcome: 'refunded' })).toBe(1);
    expect(total(after, 'preipo_billing_refunds_pending')).toBe(0);
    for (const reason of ['monthly_cap', 'key_cap']) expect(find(after, 'preipo_billing_refusals_total', { reason })).toBeDefined();
  });
});

describe('state gauges', () => {
  test('market-data snapshot age: absent before the first snapshot, then its age by the app\'s clock', async () => {
    const fresh = await createTestApp({}, { now: () => clock });
    try {
      expect(find(await scrape(fresh), 'preipo_market_snapshot_age_seconds')).toBeUndefined();
      expect((await fresh.request('/api/trading/valuation/all')).status).toBe(200);
      expect(find(await scrape(fresh), 'preipo_market_snapshot_age_seconds')?.value).toBe(0);
      clock += 1_500;
      expect(find(await scrape(fresh), 'preipo_market_snapshot_age_seconds')?.value).toBe(1.5);
    } finally {
      await fresh.close();
    }
  });

  test('database pool: size, and statements in flight as connections in use and waiting', async () => {
    const idle = await scrape(t);
    const size = find(idle, 'preipo_db_pool_size')!.value;
    expect(size).toBe(engine === 'postgres' ? 10 : 1);
    expect(find(idle, 'preipo_db_pool_in_use')?.value).toBe(0);
    expect(find(idle, 'preipo_db_pool_waiting')?.value).toBe(0);

    // A transaction holds a connection (and an advisory lock) until released; a statement beside it,
    // waiting for that lock, holds another (PostgreSQL) or waits for the only one (PGlite). /metrics
    // itself touches no database.
    const release = Promise.withResolvers<void>();
    const entered = Promise.withResolvers<void>();
    const transaction = t.database.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(4242)`);
      entered.resolve();
      await release.promise;
    });
    await entered.promise;
    const holding = await scrape(t);
    expect(find(holding, 'preipo_db_pool_in_use')?.value).toBe(1);
    const beside = t.database.db.execute(sql`select pg_advisory_xact_lock(4242)`).then(() => {});
    let both = await scrape(t);
    // (drizzle hands the statement to the driver within a few ticks.)
    for (let i = 0; i < 100 && total(both, 'preipo_db_pool_in_use') + total(both, 'preipo_db_pool_waiting') < 2; i++) both = await scrape(t);
    expect(find(both, 'preipo_db_pool_in_use')?.value).toBe(Math.min(2, size));
    expect(find(both, 'preipo_db_pool_waiting')?.value).toBe(Math.max(0, 2 - size));
    release.resolve();
    await transaction;
    await beside;
    expect(find(await scrape(t), 'preipo_db_pool_in_use')?.value).toBe(0);
  });

  test('rate-limiter store errors: every failed Redis call is counted, and the request is still served', async () => {
    const memory = await scrape(t);
    for (const reason of ['timeout', 'error', 'unavailable']) expect(find(memory, 'preipo_ratelimit_store_errors_total', { reason })?.value).toBe(0);

    // Nothing listens on port 1: every call fails, each request goes unlimited (fail open).
    const unreachable = await createTestApp({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_TIMEOUT_MS: '200' });
    try {
      for (let i = 0; i < 3; i++) expect((await unreachable.request('/api/pricing')).status).toBe(200);
      const failures = total(await scrape(unreachable), 'preipo_ratelimit_store_errors_total');
      expect(failures).toBeGreaterThanOrEqual(3);
    } finally {
      await unreachable.close();
    }
  });

  test('job lag: 0 within the interval, then seconds past due; runs counted by outcome', async () => {
    const worker = startSettlementWorker({ ...t.services, config: { ...t.services.config, settlementIntervalMs: 60_000 } });
    try {
      const registered = await scrape(t);
      expect(find(registered, 'preipo_job_interval_seconds', { job: 'settlement' })?.value).toBe(60);
      expect(find(registered, 'preipo_job_lag_seconds', { job: 'settlement' })?.value).toBe(0);
      expect(find(registered, 'preipo_job_runs_total', { job: 'settlement', outcome: 'ok' })?.value).toBe(0);
      // (The worker's own timer runs on real time and has not fired; the lag reads the app's clock.)
      clock += 75_000;
      expect(find(await scrape(t), 'preipo_job_lag_seconds', { job: 'settlement' })?.value).toBe(15);
    } finally {
      await worker.stop();
    }
  });
});

describe('venue calls', () => {
  test('a quote and a buy (paper venue, or the one TEST_VENUE names): venue calls by operation and outcome, with their latency', async () => {
    const trading = await createTradingApp();
    try {
      const who = await trader(trading);
      const events = (await api(trading, who, 'GET', '/api/trading/events')).body.events.filter((e: any) => e.status === 'open');
      const body = { eventId: events[0].id, side: 'LONG', amount: 25 };
      expect((await api(trading, who, 'POST', '/api/trading/quote', body)).res.status).toBe(200);
      expect((await buy(trading, who, body)).res.status).toBe(200);
      const samples = await scrape(trading);
      const venue = trading.services.venue.name;
      for (const operation of ['getOrderBooks', 'placeOrder']) {
        const calls = total(samples, 'preipo_venue_calls_total', { venue, operation, outcome: 'ok' });
        expect(`${operation} ${calls > 0}`).toBe(`${operation} true`);
        expect(total(samples, 'preipo_venue_call_duration_seconds_count', { venue, operation, outcome: 'ok' })).toBe(calls);
      }
      // Stored credentials were checked with the venue; a refused check is a refusal, not an error.
      expect(total(samples, 'preipo_venue_calls_total', { operation: 'checkCredentials', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'preipo_venue_calls_total', { outcome: 'error' })).toBe(0);
      const age = find(samples, 'preipo_market_snapshot_age_seconds')!.value;
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(600);

      // No secret, address or identifier reaches a label.
      const text = await (await trading.request('/metrics', { headers: OPERATOR })).text();
      for (const secret of [DASHBOARD_KEY, who.account.apiKey, who.account.accountId, who.userId, who.userId.toLowerCase(), who.credentials.apiKey, who.credentials.secret, '203.0.113.']) {
        expect(text.includes(secret)).toBe(false);
      }
    } finally {
      await trading.close();
    }
  });
});

describe('METRICS_PORT', () => {
  test('a second listener serves /metrics without a key, and nothing else; the main port still asks for one', async () => {
    const database = engine === 'postgres' ? await freshDatabase() : undefined;
    const metricsPort = freePort();
    const server = await startServer({
      ...(database ? { DATABASE_URL: database.url!, TRADING_ENCRYPTION_KEY: 'c'.repeat(64) } : { DATA_DIR: ':memory:' }),
      DASHBOARD_KEYS: DASHBOARD_KEY,
      METRICS_PORT: String(metricsPort),
    });
    try {
      const metricsUrl = `http://127.0.0.1:${metricsPort}`;
      expect((await fetch(`${server.url}/api/pricing`)).status).toBe(200);
      const res = await fetch(`${metricsUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const samples = parse(await res.text());
      expect(total(samples, 'preipo_http_requests_total', { route: 'GET /api/pricing', status: '200', transport: 'rest' })).toBe(1);
      // The background jobs a default start runs (deposits and the Stripe export are off without their settings).
      const jobs = samples.filter((s) => s.name === 'preipo_job_lag_seconds').map((s) => s.labels.job!).sort();
      expect(jobs).toEqual(['balance_low', 'candle_prune', 'candle_write', 'lapsed_units', 'market_record', 'settlement', 'webhook_delivery']);
      for (const job of jobs) expect(find(samples, 'preipo_job_lag_seconds', { job })!.value).toBeGreaterThanOrEqual(0);
      expect(find(samples, 'process_resident_memory_bytes')!.value).toBeGreaterThan(0);

      const other = await fetch(`${metricsUrl}/api/pricing`);
      expect(other.status).toBe(404);
      expect(await other.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${server.url}/metrics`, { headers: OPERATOR })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
      await database?.close();
    }
  }, 30_000);
});

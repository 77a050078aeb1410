/**
 * Portfolio history: GET /api/trading/portfolio/history rebuilds the user's holdings
 * from their trades and values them from the valuation candles; it agrees with GET /api/trading/history
 * and /settlements at every past point, and with /positions now, to the micro-unit.
 *
 * A scripted afternoon on a drifting paper venue, with the test's clock: three buys, a partial sale, a
 * settlement and a full sale, an hour or so apart, with market recordings in between. Trades are
 * stamped by the database clock when they happen, so each step's trades (and settlement) are moved
 * to the step's scripted time, in the past. PGlite by default, PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, inArray, notInArray } from 'drizzle-orm';
import { settlements, trades } from '../../db/schema.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { DASHBOARD_KEY, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const micros = (usd: number) => Math.round(usd * 1_000_000);
const floorValue = (shares: number, price: number) => Number((BigInt(shares) * BigInt(price)) / 1_000_000n);

/** Eight hours ago, on the hour: every scripted time is in the past of the database's clock. */
const base = Math.floor((Date.now() - 8 * HOUR) / HOUR) * HOUR;
let clock = base - 30 * MINUTE;
let t: TestApp;
let who: Trader;
let recording: CandleRecording;
const stamped = new Set<string>();

beforeAll(async () => {
  t = await createTradingApp({ PAPER_DRIFT: '0.05', MARKET_DATA_TTL_MS: '600000' }, { now: () => clock });
  recording = startCandleRecording(t.services, { now: () => clock });
  who = await trader(t);
});
afterAll(async () => {
  await recording.stop();
  await t.close();
});

const get = async (path: string, as: Pick<Trader, 'headers'> = who) => {
  const { res, body } = await api(t, as, 'GET', path);
  expect(res.status).toBe(200);
  return body;
};
const iso = (ms: number) => new Date(ms).toISOString();

/** Moves the clock and takes a market recording (a candle point for every event). */
async function record(offset: number) {
  clock = base + offset;
  await t.services.recorder.record();
}

/** Stamps the trades (and settlements) the last step wrote with the step's scripted time. */
async function stamp(time: number) {
  const db = t.database.db;
  const mine = and(eq(trades.accountId, who.account.accountId), eq(trades.userId, who.userId));
  const fresh = await db.select({ id: trades.id }).from(trades).where(stamped.size ? and(mine, notInArray(trades.id, [...stamped])) : mine);
  expect(fresh.length).toBeGreaterThan(0);
  await db.update(trades).set({ createdAt: new Date(time) }).where(inArray(trades.id, fresh.map((r) => r.id)));
  for (const r of fresh) stamped.add(r.id);
  const settled = await db.select({ id: settlements.id }).from(settlements).where(and(eq(settlements.accountId, who.account.accountId), eq(settlements.userId, who.userId)));
  for (const { id } of settled.filter((r) => !stamped.has(r.id))) {
    await db.update(settlements).set({ settledAt: new Date(time) }).where(eq(settlements.id, id));
    stamped.add(id);
  }
}

async function step(offset: number, action: () => Promise<{ res: Response; body: any }>) {
  clock = base + offset;
  const { res, body } = await action();
  expect(res.status).toBe(200);
  await stamp(clock);
  return body;
}

let positions: Record<string, string> = {};

describe('a scripted series of trades', () => {
  test('buys, a partial sale, a settlement and a full sale, with recordings between', async () => {
    await record(10 * MINUTE);
    positions.a = (await step(20 * MINUTE, () => buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 100 }))).positionId;
    await record(45 * MINUTE);
    positions.b = (await step(HOUR + 15 * MINUTE, () => buy(t, who, { eventId: 'anthropic-ipo', side: 'SHORT', amount: 80 }))).positionId;
    await record(HOUR + 30 * MINUTE);
    await step(2 * HOUR + 5 * MINUTE, () => sell(t, who, { positionId: positions.a, percentage: 50 }));
    await record(2 * HOUR + 20 * MINUTE);
    positions.c = (await step(2 * HOUR + 40 * MINUTE, () => buy(t, who, { eventId: 'perplexity-ipo', side: 'LONG', amount: 60 }))).positionId;
    await record(2 * HOUR + 50 * MINUTE);
    const perplexity = (await get('/api/trading/events')).events.find((e: any) => e.id === 'perplexity-ipo');
    await step(3 * HOUR + 10 * MINUTE, async () => {
      const res = await t.request('/api/events/perplexity-ipo/resolution', {
        method: 'POST',
        headers: { ...dashboardHeaders(DASHBOARD_KEY, who.account.accountId), 'content-type': 'application/json' },
        body: JSON.stringify({ winningBandId: perplexity.bands[5].id }),
      });
      return { res, body: await res.json() };
    });
    await step(3 * HOUR + 30 * MINUTE, () => sell(t, who, { positionId: positions.b, percentage: 100 }));
    await record(3 * HOUR + 45 * MINUTE);
    await record(4 * HOUR + 10 * MINUTE);
    await record(4 * HOUR + 20 * MINUTE);
    const settled = (await get('/api/trading/settlements')).settlements;
    expect(settled.map((s: any) => [s.positionId, s.settledAt])).toEqual([[positions.c, iso(base + 3 * HOUR + 10 * MINUTE)]]);
  });
});

/** The candle bids an independent reader would use at T: the latest 1h (or 1d) candle that closed by T. */
async function bidsAt(eventId: string, time: number): Promise<Map<string, number> | undefined> {
  let best: any;
  for (const interval of ['1h', '1d']) {
    const { candles } = await get(`/api/trading/valuation/history?eventSlug=${eventId}&interval=${interval}&to=${iso(time)}&limit=5000`, { headers: {} });
    for (const c of candles) if (Date.parse(c.end) <= time && (!best || Date.parse(c.end) > Date.parse(best.end))) best = c;
  }
  return best && new Map(best.bands.map((b: any) => [b.bandId, micros(b.bid)]));
}

describe('GET /api/trading/portfolio/history', () => {
  test('every past point agrees with /history and /settlements up to its time, valued at the candles\' bids', async () => {
    const body = await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}`);
    expect(body.interval).toBe('1h');
    expect(body.points.map((p: any) => p.time)).toEqual([0, 1, 2, 3, 4].map((h) => iso(base + h * HOUR)).concat(iso(base + 4 * HOUR + 20 * MINUTE)));
    const allSettlements = (await get('/api/trading/settlements')).settlements;
    for (const point of body.points.slice(0, -1)) {
      const time = Date.parse(point.time);
      const history = await get(`/api/trading/history?endDate=${iso(time)}&limit=1000`);
      expect(micros(point.realizedPnl)).toBe(micros(history.summary.realizedPnl));
      // Realised P&L is the sales' and the settlements' (each settlement's SETTLE trade is in the history).
      const sales = history.trades.filter((x: any) => x.action === 'SELL').reduce((s: number, x: any) => s + micros(x.realizedPnl), 0);
      const settledBy = allSettlements.filter((s: any) => Date.parse(s.settledAt) <= time).reduce((s: number, x: any) => s + micros(x.realizedPnl), 0);
      expect(micros(point.realizedPnl)).toBe(sales + settledBy);

      // Holdings and basis from the trades up to T: buys add, sales take away the basis they released, a settlement empties.
      const held = new Map<string, { eventId: string; positionId: string; bandId: string; shares: number }>();
      const cost = new Map<string, number>();
      for (const x of [...history.trades].reverse()) {
        if (x.action === 'SETTLE') {
          for (const [key, h] of held) if (h.positionId === x.positionId) held.set(key, { ...h, shares: 0 });
          cost.set(x.positionId, 0);
          continue;
        }
        const key = `${x.positionId}/${x.bandId}`;
        const h = held.get(key) ?? { eventId: x.eventId, positionId: x.positionId, bandId: x.bandId, shares: 0 };
        const sign = x.action === 'BUY' ? 1 : -1;
        held.set(key, { ...h, shares: h.shares + sign * micros(x.shares) });
        const released = x.action === 'BUY' ? -(micros(x.amount) + micros(x.fees)) : micros(x.amount) - micros(x.fees) - micros(x.realizedPnl);
        cost.set(x.positionId, (cost.get(x.positionId) ?? 0) - released);
      }
      const costBasis = [...cost.values()].reduce((s, c) => s + c, 0);
      expect(micros(point.costBasis)).toBe(costBasis);
      let value = 0;
      for (const h of held.values()) {
        if (h.shares === 0) continue;
        const bids = await bidsAt(h.eventId, time);
        value += floorValue(h.shares, bids!.get(h.bandId)!);
      }
      expect(micros(point.marketValue)).toBe(value);
      expect(micros(point.unrealizedPnl)).toBe(value - costBasis);
    }
    // The shape of the afternoon: nothing at the start; the settlement and the sales realised P&L by the end.
    expect(body.points[0]).toEqual({ time: iso(base), marketValue: 0, costBasis: 0, realizedPnl: 0, unrealizedPnl: 0 });
    expect(body.points[3].costBasis).toBeGreaterThan(body.points[4].costBasis);
  });

  test('the last point is now, equal to /positions (every position at the current bids) to the micro-unit', async () => {
    const body = await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}`);
    const now = body.points.at(-1);
    const listed = (await get('/api/trading/positions?status=all&limit=500')).positions;
    expect(listed.length).toBe(3);
    const sum = (k: string) => listed.reduce((s: number, p: any) => s + micros(p[k]), 0);
    expect({ time: now.time, marketValue: micros(now.marketValue), costBasis: micros(now.costBasis), realizedPnl: micros(now.realizedPnl), unrealizedPnl: micros(now.unrealizedPnl) }).toEqual({
      time: iso(clock),
      marketValue: sum('currentValue'),
      costBasis: sum('cost'),
      realizedPnl: sum('realizedPnl'),
      unrealizedPnl: sum('currentValue') - sum('cost'),
    });
    // A position is still open (half of A): something is held and valued.
    expect(now.marketValue).toBeGreaterThan(0);
    expect(micros(now.realizedPnl)).toBe(micros((await get('/api/trading/history?limit=1000')).summary.realizedPnl));
  });

  test('1d points and an explicit past `to` agree with the hourly series at the same times', async () => {
    const hourly = (await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}`)).points;
    const daily = (await get(`/api/trading/portfolio/history?interval=1d&from=${iso(base - 2 * 86_400_000)}`)).points;
    expect(daily.length).toBeGreaterThanOrEqual(3);
    expect(daily.at(-1)).toEqual(hourly.at(-1));
    for (const p of daily.slice(0, -1)) expect(Date.parse(p.time) % 86_400_000).toBe(0);
    const cut = (await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}&to=${iso(base + 3 * HOUR)}`)).points;
    expect(cut).toEqual(hourly.slice(0, 4));
    // A `to` in the future is now.
    expect((await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}&to=9999-12-31`)).points).toEqual(hourly);
  });

  test('the typed client answers the same; another user of the account has an empty history', async () => {
    const client = trpcClient(t, who.headers);
    expect(await client.portfolio.history.query({ interval: '1h', from: iso(base) })).toEqual(await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}`));
    const other = await get(`/api/trading/portfolio/history?interval=1h&from=${iso(base)}`, { headers: { ...who.account.headers, 'x-user-id': '0x52908400098527886E0F7030069857D2E4169EE7' } });
    expect(other.points.every((p: any) => p.marketValue === 0 && p.costBasis === 0 && p.realizedPnl === 0)).toBe(true);
  });

  test.each([
    ['from after to', `from=${iso(base + HOUR)}&to=${iso(base)}`, 'from: must not be after to'],
    ['too many points', 'interval=1h&from=2020-01-01', 'from: at most 2000 points'],
    ['1m is not a portfolio interval', 'interval=1m', 'interval'],
    ['an unknown parameter', 'eventId=openai-ipo', 'eventId'],
    ['an impossible date', 'from=2026-02-30', 'from: is not a real calendar date'],
  ])('%s is 400', async (_, query, message) => {
    const { res, body } = await api(t, who, 'GET', `/api/trading/portfolio/history?${query}`);
    expect(res.status).toBe(400);
    expect(body.message).toContain(message);
  });

  test('a range ending early in 1970 starts at 1970-01-01T00:00Z, never in 1969 (the default from is cut there)', async () => {
    const hourly = (await get('/api/trading/portfolio/history?to=1970-01-01')).points;
    // 1970-01-01 means the end of that day: its 24 hours, then the end.
    expect(hourly.map((p: any) => p.time)).toEqual([...Array.from({ length: 24 }, (_, h) => iso(h * HOUR)), '1970-01-01T23:59:59.999Z']);
    expect(hourly.every((p: any) => p.marketValue === 0 && p.costBasis === 0 && p.realizedPnl === 0 && p.unrealizedPnl === 0)).toBe(true);
    const daily = (await get('/api/trading/portfolio/history?interval=1d&to=1970-01-03T12:00:00Z')).points;
    expect(daily.map((p: any) => p.time)).toEqual(['1970-01-01T00:00:00.000Z', '1970-01-02T00:00:00.000Z', '1970-01-03T00:00:00.000Z', '1970-01-03T12:00:00.000Z']);
    // The earliest from and to a parameter may name: one point.
    expect((await get('/api/trading/portfolio/history?from=1970-01-01T00:00:00Z&to=1970-01-01T00:00:00Z')).points.map((p: any) => p.time)).toEqual([iso(0)]);
    const before = await api(t, who, 'GET', '/api/trading/portfolio/history?from=1969-12-31');
    expect(before.res.status).toBe(400);
    expect(before.body.message).toContain('from: must be from 1970-01-01');
  });

  test('needs a key (401) and x-user-id (400), and is billed like the other trading reads', async () => {
    expect((await t.request('/api/trading/portfolio/history')).status).toBe(401);
    expect((await api(t, { headers: who.account.headers }, 'GET', '/api/trading/portfolio/history')).res.status).toBe(400);
    const { res } = await api(t, who, 'GET', '/api/trading/portfolio/history?interval=1d');
    expect(Number(res.headers.get('x-request-cost-usd'))).toBeGreaterThan(0);
  });
});

/**
 * Public market data over the paper venue. Every number of a /valuation answer is recomputed here
 * from the answer's own bands and bid/ask, with formulas written independently of the service.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadEvents } from '../../seeds/events.ts';
import type { EventRecord } from '../../server/events/event-schema.ts';
import { PaperVenue } from '../../server/venues/paper.ts';
import { tickFor, topDollarsMicros } from '../../server/venues/paper-book.ts';
import { createTestApp, json, trpcClient, type TestApp } from '../harness/app.ts';
import { expectedValuation, expectRounded } from '../harness/expected-valuation.ts';

let t: TestApp;
let seeded: EventRecord[];
let clock = Date.parse('2026-11-22T12:00:00Z');
let venueCalls = 0;

beforeAll(async () => {
  seeded = await loadEvents();
  // The real paper venue, counted, with a clock the tests move.
  class CountedPaperVenue extends PaperVenue {
    override async getOrderBooks(ids: string[]) {
      venueCalls++;
      return super.getOrderBooks(ids);
    }
  }
  const venue = new CountedPaperVenue({
    seed: 1,
    drift: 0,
    now: () => clock,
    referencePrices: async (ids) => {
      const prices = new Map<string, number>();
      for (const e of seeded) {
        const ids = e.bands.map((b, i) => b.venue.tokenId ?? `paper-${e.id}-${i}`);
        ids.forEach((id, i) => prices.set(id, e.bands[i]!.seedPrice));
        // A ladder trades its thresholds: "above" band i's start is priced at the sum of the bands from i up.
        if (e.venue.structure === 'ladder') ids.forEach((id, i) => prices.set(`${id}:yes`, e.bands.slice(i).reduce((s, b) => s + b.seedPrice, 0)));
      }
      return new Map(ids.map((id) => [id, prices.get(id)!]));
    },
  });
  t = await createTestApp({ MARKET_DATA_TTL_MS: '2000' }, { venue, now: () => clock });
});
afterAll(() => t.close());

const get = async (path: string) => {
  const res = await t.request(path);
  return { res, body: await json(res) };
};

describe('GET /api/trading/events', () => {
  test('all 17 events with ascending bands, public and unbilled', async () => {
    const { res, body } = await get('/api/trading/events');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-cost-usd')).toBeNull();
    expect(res.headers.get('ratelimit-limit')).not.toBeNull();
    expect(body.events).toHaveLength(17);
    expect(body.events.map((e: any) => e.id).sort()).toEqual(seeded.map((e) => e.id).sort());
    for (const e of body.events) {
      const source = seeded.find((s) => s.id === e.id)!;
      expect(e.bands.map((b: any) => [b.label, b.minValuation, b.maxValuation])).toEqual(source.bands.map((b) => [b.label, b.minValuation, b.maxValuation]));
      expect(e.bands.at(-1).maxValuation).toBeNull();
      expect(new Set(e.bands.map((b: any) => b.id)).size).toBe(e.bands.length);
    }
  });
});

describe('GET /api/trading/valuation', () => {
  test('every number of every event, recomputed independently', async () => {
    const events = (await get('/api/trading/events')).body.events;
    for (const e of events) {
      const { res, body } = await get(`/api/trading/valuation?eventSlug=${e.id}`);
      expect(res.status).toBe(200);
      const bidAsk = body.slippage.bandPrices;
      for (const { bid, ask } of bidAsk) expect(ask - bid).toBeLessThanOrEqual(0.1 + 1e-9); // paper books: midpoints apply
      const x = expectedValuation(e.bands, bidAsk, 0.2, 0.15);
      const close = (a: number | null, b: number | null) => (b === null ? expect(a).toBeNull() : expectRounded(a, b));
      expect(body.event).toEqual({ name: e.name, slug: e.id, numBands: e.bands.length, status: e.status, winningBandId: e.winningBandId });
      expect(body.settings).toEqual({ floorL: 0.2, floorS: 0.15 });
      body.bands.forEach((b: any, i: number) => {
        expect(b).toMatchObject({ bandIndex: i, label: e.bands[i].label, tokenId: e.bands[i].id });
        close(b.price, x.p[i]!);
      });
      close(body.valuation.longCost, x.longCost);
      close(body.valuation.shortCost, x.shortCost);
      close(body.valuation.bestLongReturn, x.bestLongReturn);
      close(body.valuation.worstLongReturn, x.worstLongReturn);
      close(body.valuation.bestShortReturn, x.bestShortReturn);
      close(body.valuation.worstShortReturn, x.worstShortReturn);
      close(body.slippage.long.buyCost, x.long.buy);
      close(body.slippage.long.sellValue, x.long.sell);
      close(body.slippage.long.spread, x.long.buy - x.long.sell);
      close(body.slippage.long.spreadPercent, ((x.long.buy - x.long.sell) / x.long.buy) * 100);
      close(body.slippage.short.buyCost, x.short.buy);
      close(body.slippage.short.sellValue, x.short.sell);
      close(body.impliedValuation, x.implied);
      body.breakdown.forEach((row: any, i: number) => {
        close(row.longWeight, x.wL[i]!);
        close(row.shortWeight, x.wS[i]!);
        close(row.midpoint, x.mid[i]!);
        close(row.longCostContrib, x.wL[i]! * x.p[i]!);
        close(row.longAllocation, (x.wL[i]! * x.p[i]!) / x.longCost);
        close(row.shortAllocation, (x.wS[i]! * x.p[i]!) / x.shortCost);
        close(row.longReturnIfWins, (x.wL[i]! / x.longCost - 1) * 100);
        close(row.shortReturnIfWins, (x.wS[i]! / x.shortCost - 1) * 100);
      });
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
      expect(typeof body.totalVolume).toBe('number');
    }
  });

  test('floors can be set per quote; the cost rises with the floor', async () => {
    const id = seeded[0]!.id;
    const base = (await get(`/api/trading/valuation?eventSlug=${id}`)).body;
    const high = (await get(`/api/trading/valuation?eventSlug=${id}&floorL=0.5&floorS=0.6`)).body;
    expect(high.settings).toEqual({ floorL: 0.5, floorS: 0.6 });
    expect(high.valuation.longCost).toBeGreaterThan(base.valuation.longCost);
    expect(high.valuation.shortCost).toBeGreaterThan(base.valuation.shortCost);
    expect((await get(`/api/trading/valuation?eventSlug=${id}&floorL=0&floorS=1`)).res.status).toBe(200);
  });

  test.each(['floorL=1.5', 'floorL=-0.1', 'floorS=abc', 'floorS=0x1', 'floorL=1e-1'])('%s → 400 INVALID_FLOOR', async (query) => {
    const { res, body } = await get(`/api/trading/valuation?eventSlug=${seeded[0]!.id}&${query}`);
    expect(res.status).toBe(400);
    expect(body.code).toBe('INVALID_FLOOR');
    expect(body.message).toContain(query.slice(0, 6));
  });

  test('unknown event → 404; missing eventSlug → 400; the venue slug works too', async () => {
    expect((await get('/api/trading/valuation?eventSlug=no-such-event')).res.status).toBe(404);
    const missing = await get('/api/trading/valuation');
    expect(missing.res.status).toBe(400);
    expect(missing.body.message).toContain('eventSlug');
    const withSlug = seeded.find((e) => e.venue.eventSlug)!;
    expect((await get(`/api/trading/valuation?eventSlug=${withSlug.venue.eventSlug}`)).body.event.slug).toBe(withSlug.id);
  });
});

describe('GET /api/trading/valuation/all', () => {
  test('17 items agreeing with each event\'s own valuation', async () => {
    const { body } = await get('/api/trading/valuation/all');
    expect(body.valuations).toHaveLength(17);
    for (const v of body.valuations) {
      const one = (await get(`/api/trading/valuation?eventSlug=${v.eventId}`)).body;
      expect(v.longCost).toBeCloseTo(one.valuation.longCost, 12);
      expect(v.shortCost).toBeCloseTo(one.valuation.shortCost, 12);
      expect(v.impliedValuation).toBe(one.impliedValuation);
      expect(v.updatedAt).toBe(one.timestamp);
    }
  });
});

describe('market data cache', () => {
  test('1,000 concurrent requests cost one venue round trip per cache period', async () => {
    clock += 10_000;
    venueCalls = 0;
    const responses = await Promise.all(Array.from({ length: 1000 }, () => t.request('/api/trading/valuation/all')));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(venueCalls).toBe(1);
    clock += 1000;
    await t.request('/api/trading/valuation/all');
    expect(venueCalls).toBe(1);
    clock += 1500;
    await t.request('/api/trading/valuation/all');
    expect(venueCalls).toBe(2);
  });
});

describe('the paper venue', () => {
  const venue = (drift: number, now: () => number) =>
    new PaperVenue({
      seed: 7,
      drift,
      now,
      referencePrices: async (ids) => new Map(ids.flatMap((id) => (id === 'tok' ? [[id, 0.47]] : id === 'edge' ? [[id, 0.001]] : id === 'cheap' ? [[id, 0.035]] : id === 'dear' ? [[id, 0.97]] : [])) as Array<[string, number]>),
    });

  test('books are deterministic: five levels a side, one tick apart, depth in dollars growing away from the top', async () => {
    const [a, b] = await Promise.all([venue(0, () => 0).getOrderBooks(['tok']), venue(0, () => 0).getOrderBooks(['tok'])]);
    const book = a.get('tok')!;
    expect(book).toEqual(b.get('tok')!);
    expect(book.tickMicros).toBe(10_000);
    expect(book.bids.map((l) => l.priceMicros)).toEqual([460_000, 450_000, 440_000, 430_000, 420_000]);
    expect(book.asks.map((l) => l.priceMicros)).toEqual([480_000, 490_000, 500_000, 510_000, 520_000]);
    // Level k holds (k + 1) × the top level's dollars, in whole 0.01 shares at its own price.
    const top = topDollarsMicros(7, 'tok');
    expect(top).toBeGreaterThanOrEqual(1_000_000_000);
    expect(top).toBeLessThan(3_000_000_000);
    for (const side of [book.bids, book.asks]) {
      side.forEach((level, k) => expect(level.sizeMicros).toBe(Math.floor(((k + 1) * top * 100) / level.priceMicros) * 10_000));
    }
  });

  test("Polymarket's tick rule: 0.001 under 0.04 and over 0.96, 0.01 between; every priced book has a bid and an ask", async () => {
    const books = await venue(0, () => 0).getOrderBooks(['edge', 'cheap', 'tok', 'dear', 'unknown']);
    // 0.001 is kept two ticks inside: bid 0.001, ask 0.003, then one 0.001 tick per level.
    expect(books.get('edge')).toMatchObject({ tickMicros: 1_000, lastTradeMicros: 2_000 });
    expect(books.get('edge')!.bids.map((l) => l.priceMicros)).toEqual([1_000]);
    expect(books.get('edge')!.asks.map((l) => l.priceMicros)).toEqual([3_000, 4_000, 5_000, 6_000, 7_000]);
    expect(books.get('cheap')!.bids.map((l) => l.priceMicros)).toEqual([34_000, 33_000, 32_000, 31_000, 30_000]);
    expect(books.get('tok')!.tickMicros).toBe(10_000);
    expect(books.get('dear')).toMatchObject({ tickMicros: 1_000, lastTradeMicros: 970_000 });
    expect(books.get('dear')!.asks.map((l) => l.priceMicros)).toEqual([971_000, 972_000, 973_000, 974_000, 975_000]);
    // Cheap bands carry many shares: the same dollars buy ~300× more at 0.003 than at 0.97.
    expect(books.get('edge')!.asks[0]!.sizeMicros).toBeGreaterThan(300_000_000_000);
    expect(books.get('unknown')).toMatchObject({ bids: [], asks: [] });
    expect(tickFor(39_999)).toBe(1_000);
    expect(tickFor(40_000)).toBe(10_000);
    expect(tickFor(960_000)).toBe(10_000);
    expect(tickFor(960_001)).toBe(1_000);
  });

  test('with drift, prices move over time, on the tick grid', async () => {
    const mids = [];
    for (const hour of [0, 3, 6, 9, 12]) mids.push((await venue(0.05, () => hour * 3_600_000).getOrderBooks(['tok'])).get('tok')!.lastTradeMicros!);
    expect(new Set(mids).size).toBeGreaterThan(1);
    for (const m of mids) {
      expect(m % 10_000).toBe(0);
      expect(Math.abs(m - 470_000)).toBeLessThanOrEqual(50_000);
    }
  });
});

describe('over the typed tRPC client', () => {
  test('the same answers', async () => {
    const client = trpcClient(t);
    const rest = (await get(`/api/trading/valuation?eventSlug=${seeded[1]!.id}&floorL=0.3`)).body;
    expect(await client.tradingMarket.valuation.query({ eventSlug: seeded[1]!.id, floorL: 0.3 })).toEqual(rest);
    const error = await client.tradingMarket.valuation.query({ eventSlug: seeded[1]!.id, floorL: 2 }).catch((e) => e);
    expect(error.data.api.code).toBe('INVALID_FLOOR');
    expect((await client.tradingMarket.events.query()).events).toHaveLength(17);
  });
});

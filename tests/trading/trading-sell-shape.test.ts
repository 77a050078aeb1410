/**
 * Sales keep the position's shape: a partial sale sells the same fraction of every band
 * or is refused naming the percentages that would; the cost basis released is proportional to what
 * is sold; `minAveragePrice` refuses a plan below it with nothing sent; a band that cannot be sold
 * is reported in `unsold` and stays in the position. Over /api and the typed tRPC client.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { orders } from '../../db/schema.ts';
import type { OrderBook } from '../../server/venues/venue.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { api, buy, expectBooksAgree, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

/** A venue whose books lose their bids on the bands named in `bidless` (the rest is the real venue). */
class BidlessVenue extends FaultyVenue {
  bidless = new Set<string>();
  override async getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>> {
    const books = await this.inner.getOrderBooks(tokenIds);
    return new Map([...books].map(([id, book]) => [id, this.bidless.has(id) ? { ...book, bids: [] } : book]));
  }
}

let t: TestApp;
let venue: BidlessVenue;
beforeAll(async () => {
  // Market data uncached, so a band's bids go the moment a test takes them away.
  t = await createTradingApp({ MARKET_DATA_TTL_MS: '0' }, { wrap: (inner) => (venue = new BidlessVenue(inner)) });
});
afterAll(() => t.close());

const micros = (x: number) => Math.round(x * 1e6);
const detailOf = async (who: Trader, id: string) => (await api(t, who, 'GET', `/api/trading/positions/${id}`)).body;
const sellOrders = async (who: Trader, positionId: string) =>
  t.database.db.select().from(orders).where(and(eq(orders.userId, who.userId), eq(orders.positionId, positionId), eq(orders.side, 'SELL')));

/** After a p% sale every band holds what it held less p% of it, floored to the 0.01-share step. */
function expectSameFraction(before: any, after: any, percentage: number) {
  before.bands.forEach((band: any, i: number) => {
    const held = micros(band.tokens);
    const sold = Math.floor((held * percentage) / 100 / 10_000) * 10_000;
    expect({ band: i, tokens: micros(after.bands[i].tokens) }).toEqual({ band: i, tokens: held - sold });
    if (held > 0) expect(micros(after.bands[i].tokens)).toBeGreaterThanOrEqual(5_000_000);
  });
}

describe('partial sales keep the shape', () => {
  test('two 50% sales of a $25 LONG: each band keeps its fraction (or the sale is refused), the basis falls in proportion', async () => {
    const who = await trader(t);
    const bought = (await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 25 })).body;
    const start = await detailOf(who, bought.positionId);
    const first = await sell(t, who, { positionId: bought.positionId, percentage: 50 });
    expect(first.res.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'open', unsold: [] });
    const half = await detailOf(who, bought.positionId);
    expectSameFraction(start, half, 50);
    // The basis released is proportional to the shares sold (to within one share step per band).
    expect(Math.abs(half.cost - start.cost / 2)).toBeLessThan(0.01 * start.bands.length);

    const second = await sell(t, who, { positionId: bought.positionId, percentage: 50 });
    if (second.res.status === 200) {
      expectSameFraction(half, await detailOf(who, bought.positionId), 50);
    } else {
      // Refused: some band's order would be under the minimum. Nothing changed; the named range works.
      expect(second.res.status).toBe(422);
      expect(second.body.code).toBe('ORDER_REJECTED');
      expect(await detailOf(who, bought.positionId)).toEqual(half);
      const range = /partial sales from ([\d.]+)% to ([\d.]+)%|sell 100%/.exec(second.body.message);
      expect(range).not.toBeNull();
      if (range![1]) {
        const p = Number(range![2]);
        expect((await sell(t, who, { positionId: bought.positionId, percentage: p })).res.status).toBe(200);
        expectSameFraction(half, await detailOf(who, bought.positionId), p);
      }
    }
    const end = await detailOf(who, bought.positionId);
    expect(end.bands.every((b: any) => b.tokens > 0)).toBe(true); // the floor leg ("No IPO") is never sold out
    expect(end.cost).toBeGreaterThan(start.cost * 0.2);
    await expectBooksAgree(t, who);
  });

  test('a sale that would leave a band under the minimum is refused with the largest percentage that keeps the shape', async () => {
    const who = await trader(t);
    const bought = (await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 40 })).body;
    const before = await detailOf(who, bought.positionId);
    const refused = await sell(t, who, { positionId: bought.positionId, percentage: 99 });
    expect(refused.res.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'ORDER_REJECTED', status: 422 });
    expect(refused.body.message).toMatch(/^percentage: 99% would leave band \d+ \([^)]+\) with [\d.]+ shares, under the venue minimum order of 5 shares; the largest partial sale that keeps the position's shape is [\d.]+%/);
    // The band is named as the customer sees it: its label on the event.
    const { events } = await (await t.request('/api/trading/events')).json();
    const [, index, label] = /band (\d+) \(([^)]+)\)/.exec(refused.body.message)!;
    expect(events.find((e: any) => e.id === 'openai-ipo').bands[Number(index)].label).toBe(label);
    expect(await sellOrders(who, bought.positionId)).toEqual([]);
    const largest = Number(/is ([\d.]+)%/.exec(refused.body.message)![1]);
    const over = await sell(t, who, { positionId: bought.positionId, percentage: Math.round(largest * 100 + 1) / 100 });
    expect(over.res.status).toBe(422);
    const ok = await sell(t, who, { positionId: bought.positionId, percentage: largest });
    expect(ok.res.status).toBe(200);
    expectSameFraction(before, await detailOf(who, bought.positionId), largest);
    // 100% always sells everything.
    const rest = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
    expect(rest.body).toMatchObject({ status: 'closed', unsold: [] });
    await expectBooksAgree(t, who);
  });
});

describe('minAveragePrice', () => {
  test('a plan below it is refused without naming the price (free), nothing sent; at the quoted price the sale runs', async () => {
    const who = await trader(t);
    const bought = (await buy(t, who, { eventId: 'ledger-ipo', side: 'SHORT', amount: 100 })).body;
    const refused = await sell(t, who, { positionId: bought.positionId, percentage: 50, minAveragePrice: 0.99 });
    expect(refused.res.status).toBe(422);
    expect(refused.body.code).toBe('ORDER_REJECTED');
    // A refusal is free, so it names the limit, not the price reached (a sale quote is billed for that).
    expect(refused.body.message).toBe('minAveragePrice: the sale would fetch less per unit at the current bids than the minimum $0.99; nothing was sent (POST /api/trading/sell/quote prices it)');
    expect(refused.res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await sellOrders(who, bought.positionId)).toEqual([]);
    const quoted = await api(t, who, 'POST', '/api/trading/sell/quote', { positionId: bought.positionId, percentage: 50 });
    expect(quoted.res.headers.get('x-request-cost-usd')).toBe('0.002');
    const reached = quoted.body.averagePrice as number;
    expect(reached).toBeGreaterThan(0);
    expect(reached).toBeLessThan(bought.averagePrice); // the bids are under the asks it was bought at

    const sizeBefore = (await api(t, who, 'GET', '/api/trading/positions')).body.positions[0].size;
    const ok = await sell(t, who, { positionId: bought.positionId, percentage: 50, minAveragePrice: reached });
    expect(ok.res.status).toBe(200);
    const sizeAfter = (await api(t, who, 'GET', '/api/trading/positions')).body.positions[0].size;
    // Proceeds per unit sold are what the quote named (unchanged books): the same price to the micro-USD.
    expect(Math.floor((micros(ok.body.totalProceeds) * 1e6) / micros(sizeBefore - sizeAfter)) / 1e6).toBeCloseTo(reached, 5);
    for (const bad of [-0.1, 1.5, '0.5']) {
      const r = await sell(t, who, { positionId: bought.positionId, percentage: 10, minAveragePrice: bad });
      expect(`${bad} ${r.res.status} ${r.body.code}`).toBe(`${bad} 400 BAD_REQUEST`);
      expect(r.body.message).toContain('minAveragePrice');
    }
    await expectBooksAgree(t, who);
  });
});

describe('bands that cannot be sold', () => {
  test('a band without bids is reported unsold and stays; the position stays open; with no bids at all the sale is 422 naming the bands', async () => {
    const who = await trader(t);
    const bought = (await buy(t, who, { eventId: 'kraken-ipo', side: 'LONG', amount: 60 })).body;
    const dry = bought.orders[2];
    venue.bidless.add(dry.bandId);
    try {
      const partly = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
      expect(partly.res.status).toBe(200);
      expect(partly.body.status).toBe('open');
      expect(partly.body.unsold).toEqual([{ bandId: dry.bandId, shares: dry.filled, reason: 'no-liquidity' }]);
      const detail = await detailOf(who, bought.positionId);
      expect(detail.holdings.filter((b: any) => b.tokens > 0).map((b: any) => [b.tokenId, b.tokens])).toEqual([[dry.bandId, dry.filled]]);

      const none = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
      expect(none.res.status).toBe(422);
      expect(none.body.code).toBe('ORDER_REJECTED');
      expect(none.body.message).toContain(`unsold: ${dry.bandId} (${dry.filled} shares, no-liquidity)`);
      expect(none.body.message).toContain('stays open');
      expect((await detailOf(who, bought.positionId)).status).toBe('open');
    } finally {
      venue.bidless.delete(dry.bandId);
    }
    // Bids back: the rest sells and the position closes.
    const rest = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
    expect(rest.body).toMatchObject({ status: 'closed', unsold: [] });
    await expectBooksAgree(t, who);
  });
});

describe('over the typed tRPC client', () => {
  test('sell takes minAveragePrice and answers unsold; refusals carry our error shape', async () => {
    const who = await trader(t);
    const client = trpcClient(t, who.headers);
    const bought = await client.trading.buy.mutate({ eventId: 'consensys-ipo', side: 'LONG', amount: 60 });
    const error = await client.trading.sell.mutate({ positionId: bought.positionId, percentage: 100, minAveragePrice: 1 }).catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'ORDER_REJECTED', status: 422 });
    expect(error.data.api.message).toContain('minAveragePrice');
    const shape = await client.trading.sell.mutate({ positionId: bought.positionId, percentage: 99.9 }).catch((e) => e);
    expect(shape.data.api.message).toContain("keeps the position's shape");
    const sold = await client.trading.sell.mutate({ positionId: bought.positionId, percentage: 100, minAveragePrice: 0.01 });
    expect(sold).toMatchObject({ status: 'closed', unsold: [] });
    await expectBooksAgree(t, who);
  });
});

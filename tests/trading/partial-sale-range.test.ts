/**
 * A position's detail (GET /api/trading/positions/{id}) says which percentages a sale of it accepts
 * before any sale is asked for (`partialSaleRange`: lowest–highest, or 100% only): the range a sale's
 * quote names and a refused sale names, from the one rule they share (server/trading/sale-shape.ts).
 * Just outside the range a sale is refused; at its ends it goes through. A position that is not open
 * has no range. Through the real HTTP surface (/api and /trpc) on the test venue.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { api, buy, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
beforeAll(async () => void (t = await createTradingApp()), 60_000);
afterAll(() => t.close());

/** The first open event of the test venue: the positions here are bought on it. */
let openEvent: string | undefined;
async function eventToBuy(): Promise<string> {
  openEvent ??= (await api(t, { headers: {} }, 'GET', '/api/trading/events')).body.events.find((e: { status: string }) => e.status === 'open').id;
  return openEvent!;
}

type Range = { lowest: number; highest: number } | null;
const detailOf = async (who: Trader, positionId: string) => {
  const res = await api(t, who, 'GET', `/api/trading/positions/${positionId}`);
  expect(res.res.status).toBe(200);
  return res.body as { status: string; partialSaleRange: Range };
};
const quoteOf = async (who: Trader, positionId: string, percentage: number) => api(t, who, 'POST', '/api/trading/sell/quote', { positionId, percentage });
const cents = (p: number) => Math.round(p * 100) / 100;

async function position(who: Trader, amount: number) {
  const bought = await buy(t, who, { eventId: await eventToBuy(), side: 'LONG', amount });
  expect(bought.res.status).toBe(200);
  return bought.body.positionId as string;
}

describe("a position's partial-sale range", () => {
  test("the detail names the range the quote and a refused sale name; its ends sell, just outside is refused", async () => {
    const who = await trader(t);
    const positionId = await position(who, 300);
    const { partialSaleRange: range } = await detailOf(who, positionId);
    expect(range).not.toBeNull();
    const { lowest, highest } = range!;
    expect(lowest).toBeGreaterThanOrEqual(1);
    expect(highest).toBeLessThan(100);
    expect(lowest).toBeLessThanOrEqual(highest);

    // The quote's range is the detail's.
    const quoted = await quoteOf(who, positionId, 100);
    expect(quoted.res.status).toBe(200);
    expect(quoted.body.partialSaleRange).toEqual(range);

    // Just under the lowest (when there is room) and just over the highest: refused, naming the same range.
    if (lowest > 1) {
      const under = await sell(t, who, { positionId, percentage: cents(lowest - 0.01) });
      expect(under.res.status).toBe(422);
      expect(under.body.message).toContain(`${lowest}%`);
    }
    if (highest < 99.99) {
      const over = await sell(t, who, { positionId, percentage: cents(highest + 0.01) });
      expect(over.res.status).toBe(422);
      expect(over.body.message).toContain(`${highest}%`);
    }
    // Both ends quote; the lowest sells, and the detail's range is then the one for what is left.
    expect((await quoteOf(who, positionId, highest)).res.status).toBe(200);
    const sold = await sell(t, who, { positionId, percentage: lowest });
    expect(sold.res.status).toBe(200);
    expect(sold.body.status).toBe('open');
    const after = await detailOf(who, positionId);
    const requoted = await quoteOf(who, positionId, 100);
    expect(after.partialSaleRange).toEqual(requoted.body.partialSaleRange);

    // Sold out: a closed position has no range.
    expect((await sell(t, who, { positionId, percentage: 100 })).res.status).toBe(200);
    const closed = await detailOf(who, positionId);
    expect(closed.status).toBe('closed');
    expect(closed.partialSaleRange).toBeNull();
  });

  test('a position too small to split says 100% only (null), and a partial sale of it is refused', async () => {
    const who = await trader(t);
    // The smallest buy the venue takes: its bands hold about the venue minimum, so no partial sale keeps the shape.
    const { body: buyQuote } = await api(t, who, 'POST', '/api/trading/quote', { eventId: await eventToBuy(), side: 'LONG', amount: 100 });
    const positionId = await position(who, buyQuote.minimumAmount);
    const { partialSaleRange: range } = await detailOf(who, positionId);
    const quoted = await quoteOf(who, positionId, 100);
    expect(quoted.body.partialSaleRange).toEqual(range);
    expect(range).toBeNull();
    const half = await sell(t, who, { positionId, percentage: 50 });
    expect(half.res.status).toBe(422);
    expect(half.body.message).toMatch(/sell 100%|only a 100% sale/);
    expect((await sell(t, who, { positionId, percentage: 100 })).res.status).toBe(200);
  });

  test('the typed client reads it too', async () => {
    const who = await trader(t);
    const positionId = await position(who, 300);
    const detail = await trpcClient(t, who.headers).positions.get.query({ id: positionId });
    const range: Range = detail.partialSaleRange;
    expect(range).toEqual((await detailOf(who, positionId)).partialSaleRange);
  });
});

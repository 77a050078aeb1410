/**
 * POST /trading/quote and the buy's protections, through the real HTTP surface (/api and /trpc):
 * a quote is exactly the plan a buy right after executes (to the micro-unit, on the venue's own
 * ledger), maxAveragePrice refuses a plan above it with nothing sent, and a buy never spends more
 * than its amount even when the books move between sizing and the fill.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { positions } from '../../db/schema.ts';
import type { OrderBook, Venue } from '../../server/venues/venue.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { api, buy, expectBooksAgree, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf } from '../harness/trading-venue.ts';

/**
 * A venue whose books, while `moved` is set, show one extra cheap share at the tick on every ask
 * side: the buy sizes on that book, and by the time its orders arrive the cheap share is gone.
 */
class MovingBooks extends FaultyVenue {
  moved = false;
  override async getOrderBooks(tokenIds: string[]): Promise<Map<string, OrderBook>> {
    const books = await this.inner.getOrderBooks(tokenIds);
    if (!this.moved) return books;
    return new Map([...books].map(([id, b]) => [id, { ...b, asks: [{ priceMicros: b.tickMicros, sizeMicros: 1_000_000 }, ...b.asks] }]));
  }
}

let t: TestApp;
let venue: MovingBooks;
let openEvents: { id: string; status: string; bands: { id: string }[] }[];
let closedEvent: string | undefined;

beforeAll(async () => {
  t = await createTradingApp({}, { wrap: (inner: Venue) => (venue = new MovingBooks(inner)) });
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  openEvents = body.events.filter((e: any) => e.status === 'open');
  closedEvent = body.events.find((e: any) => e.status !== 'open')?.id;
});
afterAll(() => t.close());

const micros = (usd: number) => Math.round(usd * 1e6);
const quote = (who: Pick<Trader, 'headers'>, body: Record<string, unknown>) => api(t, who, 'POST', '/api/trading/quote', body);

/** Positions the user has in the records (any status). */
const positionsOf = async (who: Trader) =>
  t.database.db.select().from(positions).where(and(eq(positions.accountId, who.account.accountId), eq(positions.userId, who.userId)));

describe('quote', () => {
  test('a buy right after executes exactly the quoted plan, on every open event, LONG and SHORT', async () => {
    expect(openEvents.length).toBeGreaterThanOrEqual(5);
    const who = await trader(t);
    for (const event of openEvents) {
      for (const side of ['LONG', 'SHORT'] as const) {
        const body = { eventId: event.id, side, amount: 75 };
        const quoted = await quote(who, body);
        expect(`${event.id} ${side} ${quoted.res.status}`).toBe(`${event.id} ${side} 200`);
        expect(quoted.res.headers.get('x-request-cost-usd')).toBe('0.002');
        const q = quoted.body;
        expect(q).toMatchObject({ eventId: event.id, side, floorL: 0.2, floorS: 0.15, requestedAmount: 75 });
        // The plan's arithmetic, in micro-units.
        expect(micros(q.totalCost)).toBe(q.bands.reduce((s: number, b: any) => s + micros(b.cost), 0));
        expect(micros(q.maxCost)).toBe(q.bands.reduce((s: number, b: any) => s + micros(b.maxCost), 0));
        for (const b of q.bands) expect(micros(b.maxCost)).toBe(Math.ceil((micros(b.shares) * micros(b.worstPrice)) / 1e6));
        expect(micros(q.totalCost)).toBeLessThanOrEqual(micros(q.maxCost));
        expect(micros(q.maxCost)).toBeLessThanOrEqual(75_000_000);
        expect(micros(q.unspentAmount)).toBe(75_000_000 - micros(q.totalCost));
        expect(q.minimumAmount).toBeGreaterThan(0);
        expect(q.minimumAmount).toBeLessThanOrEqual(75);

        const { res, body: bought } = await buy(t, who, body);
        expect(res.status).toBe(200);
        // Same bands, same shares; each fill cost exactly what the quote said; same totals.
        expect(bought.orders.map((o: any) => ({ bandId: o.bandId, shares: o.filled }))).toEqual(q.bands.map((b: any) => ({ bandId: b.bandId, shares: b.shares })));
        expect(bought.size).toBe(q.units);
        expect(bought.totalCost).toBe(q.totalCost);
        expect(bought.averagePrice).toBe(q.averagePrice);
        expect({ requestedAmount: bought.requestedAmount, unspentAmount: bought.unspentAmount }).toEqual({ requestedAmount: 75, unspentAmount: q.unspentAmount });
        const fills = await ledgerOf(t).fills(who);
        for (const [i, o] of bought.orders.entries()) {
          expect(fills.get(o.orderId)).toEqual({ filledMicros: micros(q.bands[i].shares), notionalMicros: micros(q.bands[i].cost) });
          // The order was limited at the quoted worst price.
          const order = (await api(t, who, 'GET', `/api/trading/orders/${o.orderId}`)).body;
          expect(order.limitPrice).toBe(q.bands[i].worstPrice);
        }
      }
    }
    await expectBooksAgree(t, who);
  });

  test('over /trpc: the typed client quotes and buys the same plan', async () => {
    const who = await trader(t);
    const client = trpcClient(t, who.headers);
    const event = openEvents[1]!;
    const q = await client.trading.quote.mutate({ eventId: event.id, side: 'SHORT', amount: 42.5, floorS: 0.3 });
    expect(q).toMatchObject({ eventId: event.id, side: 'SHORT', floorS: 0.3, requestedAmount: 42.5 });
    const bought = await client.trading.buy.mutate({ eventId: event.id, side: 'SHORT', amount: 42.5, floorS: 0.3, maxAveragePrice: 1 });
    expect(bought.orders.map((o) => [o.bandId, o.filled])).toEqual(q.bands.map((b) => [b.bandId, b.shares]));
    expect([bought.totalCost, bought.unspentAmount, bought.size]).toEqual([q.totalCost, q.unspentAmount, q.units]);
    const error = await client.trading.quote.mutate({ eventId: event.id, side: 'SHORT', amount: 42.5, maxAveragePrice: 0.000001 }).catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'ORDER_REJECTED', status: 422 });
    expect(error.data.api.message).toContain('maxAveragePrice');
  });

  test('needs no venue credentials and places, records and reserves nothing', async () => {
    const who = await trader(t, { credentials: false });
    const before = await ledgerOf(t).collateral(who);
    const { res, body } = await quote(who, { eventId: openEvents[0]!.id, side: 'LONG', amount: 500 });
    expect(res.status).toBe(200);
    expect(body.bands.length).toBeGreaterThan(0);
    expect(await positionsOf(who)).toEqual([]);
    expect((await ledgerOf(t).fills(who)).size).toBe(0);
    expect(await ledgerOf(t).collateral(who)).toBe(before);
  });

  test("refusals are the buy's: unknown event 404, not open 422, under the minimum 422 stating the quoted minimum", async () => {
    const who = await trader(t);
    const event = openEvents[0]!.id;
    const missing = await quote(who, { eventId: 'no-such-event', side: 'LONG', amount: 10 });
    expect([missing.res.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(missing.body.requestId).toBeString();
    if (closedEvent) {
      const closed = await quote(who, { eventId: closedEvent, side: 'LONG', amount: 10 });
      expect([closed.res.status, closed.body.code]).toEqual([422, 'ORDER_REJECTED']);
    }
    const { body: q } = await quote(who, { eventId: event, side: 'LONG', amount: 100, floorL: 0.05 });
    const small = await quote(who, { eventId: event, side: 'LONG', amount: 1, floorL: 0.05 });
    expect([small.res.status, small.body.code]).toEqual([422, 'ORDER_REJECTED']);
    expect(small.body.message).toContain(`is $${q.minimumAmount}`);
    const bought = await buy(t, who, { eventId: event, side: 'LONG', amount: 1, floorL: 0.05 });
    expect(bought.body.message).toBe(small.body.message);
    // At exactly the minimum amount, a quote and a buy go through.
    expect((await quote(who, { eventId: event, side: 'LONG', amount: q.minimumAmount, floorL: 0.05 })).res.status).toBe(200);
    expect((await buy(t, who, { eventId: event, side: 'LONG', amount: q.minimumAmount, floorL: 0.05 })).res.status).toBe(200);
  });

  test('bad input is 400 in our shape; no key is 401', async () => {
    const who = await trader(t, { credentials: false });
    for (const body of [{ eventId: 'x', side: 'LONG' }, { eventId: 'x', side: 'LONG', amount: 10, maxAveragePrice: 0 }, { eventId: 'x', side: 'LONG', amount: 10, maxAveragePrice: '0.5' }, { eventId: 'x', side: 'LONG', amount: 10, extra: 1 }]) {
      const { res, body: answer } = await quote(who, body);
      expect(res.status).toBe(400);
      expect(answer).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    }
    const anonymous = await api(t, { headers: {} }, 'POST', '/api/trading/quote', { eventId: 'x', side: 'LONG', amount: 10 });
    expect(anonymous.res.status).toBe(401);
  });
});

describe('buy protection', () => {
  test('maxAveragePrice: a plan above it is 422 naming the limit but not the price reached, free, nothing sent; at it, the buy goes through', async () => {
    const who = await trader(t);
    const event = openEvents[2]!.id;
    const { body: q } = await quote(who, { eventId: event, side: 'LONG', amount: 80 });
    // The plan's exact average, rounded up to the micro-USD: the least maxAveragePrice it passes.
    const reached = Number((BigInt(micros(q.totalCost)) * 1_000_000n + BigInt(micros(q.units)) - 1n) / BigInt(micros(q.units))) / 1e6;
    const before = await ledgerOf(t).collateral(who);

    const refused = await buy(t, who, { eventId: event, side: 'LONG', amount: 80, maxAveragePrice: reached - 0.000001 }, { 'idempotency-key': 'protected-1' });
    expect([refused.res.status, refused.body.code]).toEqual([422, 'ORDER_REJECTED']);
    // A refusal is free, so it names the limit, never the price reached (that is what a quote is billed for).
    expect(refused.body.message).toMatch(/^maxAveragePrice: the plan's average price per unit at the current asks is above the \$[\d.]+ allowed; nothing was sent/);
    expect(refused.body.message).not.toContain(String(reached));
    expect(refused.body.message).not.toContain(String(q.totalCost));
    expect(refused.body.message).toContain('nothing was sent');
    expect(refused.res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await positionsOf(who)).toEqual([]);
    expect((await ledgerOf(t).fills(who)).size).toBe(0);
    expect(await ledgerOf(t).collateral(who)).toBe(before);

    // Refused before anything was sent, so the key kept nothing: its retry with a looser limit runs.
    const ok = await buy(t, who, { eventId: event, side: 'LONG', amount: 80, maxAveragePrice: reached }, { 'idempotency-key': 'protected-1' });
    expect(ok.res.status).toBe(200);
    expect(ok.body.averagePrice).toBe(q.averagePrice);
    // maxAveragePrice is part of the body the key is bound to.
    const other = await buy(t, who, { eventId: event, side: 'LONG', amount: 80, maxAveragePrice: reached + 0.01 }, { 'idempotency-key': 'protected-1' });
    expect([other.res.status, other.body.code]).toEqual([422, 'IDEMPOTENCY_MISMATCH']);
    const replay = await buy(t, who, { eventId: event, side: 'LONG', amount: 80, maxAveragePrice: reached }, { 'idempotency-key': 'protected-1' });
    expect(replay.res.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(ok.body);
    await expectBooksAgree(t, who);
  });

  test('a buy never spends more than its amount, even when the books move between sizing and the fill', async () => {
    const who = await trader(t);
    venue.moved = true;
    try {
      for (const event of openEvents.slice(0, 4)) {
        for (const side of ['LONG', 'SHORT'] as const) {
          const amount = 150;
          const { body: q } = await quote(who, { eventId: event.id, side, amount });
          expect(micros(q.maxCost)).toBeLessThanOrEqual(amount * 1e6);
          const { res, body } = await buy(t, who, { eventId: event.id, side, amount });
          expect(`${event.id} ${side} ${res.status}`).toBe(`${event.id} ${side} 200`);
          // The cheap share each band was sized on was gone: the fills cost more than the quote...
          expect(body.totalCost).toBeGreaterThan(q.totalCost);
          // ...but never more than the limits, which fit the amount.
          expect(micros(body.totalCost)).toBeLessThanOrEqual(micros(q.maxCost));
          expect(body.unspentAmount).toBeGreaterThanOrEqual(0);
          expect(micros(body.unspentAmount)).toBe(amount * 1e6 - micros(body.totalCost));
        }
      }
    } finally {
      venue.moved = false;
    }
    await expectBooksAgree(t, who);
  });
});

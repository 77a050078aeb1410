/**
 * Trading through the real HTTP surface on the paper venue: buy LONG and SHORT on every open event,
 * positions valued at the bids, partial and full sales, orders, history, Idempotency-Key, tenancy,
 * positions/sync, and the typed tRPC client. Every number is recomputed here from the records.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { idempotencyKeys, positions } from '../../db/schema.ts';
import { requestHashOf } from '../../server/trading/idempotency.ts';
import { longWeights, shortWeights } from '../../server/valuation/index.ts';
import { PAPER_RULES } from '../../server/venues/paper.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId } from '../harness/factories.ts';
import { api, buy, expectBooksAgree, sell, storeTraderCredentials, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf, TEST_VENUE } from '../harness/trading-venue.ts';

let t: TestApp;
let openEvents: { id: string; structure: 'bands' | 'ladder'; bands: { id: string; label: string }[] }[];

/**
 * What holdings pay per band, written again for the test: a band's token pays when its band wins; a
 * ladder threshold's `<band id>:yes` when the winner is that band or above, `:no` when it is below.
 */
function ladderPayoff(bandIds: string[], holdings: { tokenId: string; shares: number }[]): number[] {
  return bandIds.map((_, k) =>
    holdings.reduce((sum, h) => {
      const [bandId, outcome] = h.tokenId.split(/:(?=yes$|no$)/);
      const i = bandIds.indexOf(bandId!);
      const pays = outcome === 'yes' ? k >= i : outcome === 'no' ? k < i : k === i;
      return sum + (pays ? h.shares : 0);
    }, 0),
  );
}

beforeAll(async () => {
  t = await createTradingApp();
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  openEvents = body.events.filter((e: any) => e.status === 'open');
});
afterAll(() => t.close());

const step = (micros: number) => micros - (micros % PAPER_RULES.shareStepMicros);

describe('buy', () => {
  test('LONG and SHORT on every open event: one matched order per band, sized w(i)·U, within the amount', async () => {
    expect(openEvents.length).toBeGreaterThanOrEqual(5);
    const who = await trader(t);
    for (const event of openEvents) {
      for (const side of ['LONG', 'SHORT'] as const) {
        const { res, body } = await buy(t, who, { eventId: event.id, side, amount: 60 });
        expect(`${event.id} ${side} ${res.status}`).toBe(`${event.id} ${side} 200`);
        expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
        expect(body).toMatchObject({ eventId: event.id, side, status: 'open', floorL: 0.2, floorS: 0.15 });
        expect(body.totalCost).toBeLessThanOrEqual(60);
        expect(body.totalCost).toBeGreaterThan(40);
        const n = event.bands.length;
        const weights = side === 'LONG' ? longWeights(n, 0.2) : shortWeights(n, 0.15);
        const units = Math.round(body.size * 1e6);
        body.orders.forEach((o: any) => {
          expect(o).toMatchObject({ side: 'BUY', status: 'MATCHED' });
          expect(o.filled).toBe(o.size);
        });
        if (event.structure === 'bands') {
          expect(body.orders.map((o: any) => o.bandId)).toEqual(event.bands.map((b) => b.id));
          body.orders.forEach((o: any, i: number) => expect(Math.round(o.size * 1e6)).toBe(step(Math.floor(weights[i]! * units + 1e-6))));
        } else {
          // A ladder is bought as threshold tokens whose payoff, band by band, is the weights' (each leg rounded down to the step).
          const paid = ladderPayoff(event.bands.map((b) => b.id), body.orders.map((o: any) => ({ tokenId: o.bandId, shares: Math.round(o.filled * 1e6) })));
          paid.forEach((shares, k) => {
            expect(shares).toBeLessThanOrEqual(Math.floor(weights[k]! * units + 1e-6));
            expect(shares).toBeGreaterThan(Math.floor(weights[k]! * units) - 2 * PAPER_RULES.shareStepMicros);
          });
          expect(body.orders.length).toBe(n); // n − 1 thresholds' steps, plus the riskless pair's second token
        }
        const fills = (await api(t, who, 'GET', `/api/trading/history?limit=${n}`)).body.trades;
        expect(fills.map((f: any) => f.orderId).sort()).toEqual(body.orders.map((o: any) => o.orderId).sort());
        expect(fills.reduce((s: number, f: any) => s + Math.round(f.amount * 1e6), 0)).toBe(Math.round(body.totalCost * 1e6));
        expect(body.averagePrice).toBeCloseTo(body.totalCost / body.size, 6);
      }
    }
    await expectBooksAgree(t, who);
  });

  test('floors: a per-trade override wins over the stored floor; a zero weight band gets no order', async () => {
    const who = await trader(t);
    await api(t, who, 'PUT', '/api/trading/settings', { floorL: 0.5 });
    const event = openEvents[0]!;
    const stored = await buy(t, who, { eventId: event.id, side: 'LONG', amount: 40 });
    expect(stored.body.floorL).toBe(0.5);
    const zero = await buy(t, who, { eventId: event.id, side: 'LONG', amount: 40, floorL: 0 });
    expect(zero.res.status).toBe(200);
    expect(zero.body.floorL).toBe(0);
    expect(zero.body.orders.map((o: any) => o.bandId)).toEqual(event.bands.slice(1).map((b) => b.id));
    const detail = await api(t, who, 'GET', `/api/trading/positions/${zero.body.positionId}`);
    expect(detail.body.bands[0]).toMatchObject({ bandId: event.bands[0]!.id, tokens: 0 });
  });

  test.each([
    [{ side: 'LONG', amount: 10 }, 400, 'BAD_REQUEST', 'eventId'],
    [{ eventId: 'openai-ipo', side: 'long', amount: 10 }, 400, 'BAD_REQUEST', 'side'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 0.5 }, 400, 'BAD_REQUEST', 'amount'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: '10' }, 400, 'BAD_REQUEST', 'amount'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 10.0000001 }, 400, 'BAD_REQUEST', 'amount'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 1e300 }, 400, 'BAD_REQUEST', 'amount'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 10, floorL: 1.5 }, 400, 'INVALID_FLOOR', 'floorL'],
    [{ eventId: 'openai-ipo', side: 'SHORT', amount: 10, floorS: -0.1 }, 400, 'INVALID_FLOOR', 'floorS'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 10, leverage: 5 }, 400, 'BAD_REQUEST', 'leverage'],
    [{ eventId: 'no-such-event', side: 'LONG', amount: 10 }, 404, 'NOT_FOUND', 'eventId'],
    [{ eventId: 'stripe-ipo', side: 'LONG', amount: 10 }, 422, 'ORDER_REJECTED', 'stripe-ipo'],
    [{ eventId: 'openai-ipo', side: 'LONG', amount: 1 }, 422, 'ORDER_REJECTED', 'minimum amount'],
  ])('%j → %i %s, unbilled, nothing recorded', async (body, status, code, mention) => {
    const who = await trader(t);
    const { res, body: error } = await buy(t, who, body);
    expect(res.status).toBe(status);
    expect(error).toMatchObject({ code, status });
    expect(error.message).toContain(mention);
    expect(res.headers.get('x-request-cost-usd')).toBe('0');
    expect(await t.database.db.select().from(positions).where(eq(positions.userId, who.userId))).toEqual([]);
  });

  test('without stored credentials: 403 INVALID_CREDENTIALS', async () => {
    const who = await trader(t, { credentials: false });
    const { res, body } = await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 20 });
    expect(res.status).toBe(403);
    expect(body.code).toBe('INVALID_CREDENTIALS');
  });

  test('a venue balance below the cost: 402 INSUFFICIENT_BALANCE, nothing sent', async () => {
    const poor = await createTradingApp({ PAPER_STARTING_BALANCE_USD: '15' }, { database: t.database });
    const who = await trader(poor);
    const { res, body } = await buy(poor, who, { eventId: 'openai-ipo', side: 'LONG', amount: 40 });
    expect(res.status).toBe(402);
    expect(body.code).toBe('INSUFFICIENT_BALANCE');
    expect(body.message).toContain('$15');
    const ok = await buy(poor, who, { eventId: 'openai-ipo', side: 'LONG', amount: 15 });
    expect(ok.res.status).toBe(200);
    await expectBooksAgree(poor, who);
    await poor.close();
  });
});

describe('positions and sales', () => {
  let who: Trader;
  let positionId: string;
  let bought: any;
  let eventId: string;
  beforeAll(async () => {
    who = await trader(t);
    // An event with bids on every band, so every sale can fill (a band without bids is covered below).
    for (const e of openEvents) {
      const bids = (await api(t, who, 'GET', `/api/trading/valuation?eventSlug=${e.id}`)).body.slippage.bandPrices.map((b: any) => b.bid);
      if (bids.every((b: number) => b > 0)) {
        eventId = e.id;
        break;
      }
    }
    bought = (await buy(t, who, { eventId, side: 'SHORT', amount: 200 })).body;
    positionId = bought.positionId;
  });

  test('summary, detail and value agree with each other and with the bids', async () => {
    const list = await api(t, who, 'GET', '/api/trading/positions');
    expect(list.body.positions).toHaveLength(1);
    const summary = list.body.positions[0];
    const detail = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    const value = (await api(t, who, 'GET', `/api/trading/positions/${positionId}/value`)).body;
    expect(summary).toMatchObject({ id: positionId, eventId, side: 'SHORT', status: 'open', cost: bought.totalCost, size: bought.size, realizedPnl: 0 });
    expect(summary.entryPrice).toBeCloseTo(bought.averagePrice, 6);
    expect(detail).not.toHaveProperty('size');
    expect(detail).not.toHaveProperty('unrealizedPnlPercent');
    expect(detail).toMatchObject({ id: positionId, floorL: 0.2, floorS: 0.15, cost: summary.cost, currentValue: summary.currentValue });
    const valuation = (await api(t, who, 'GET', `/api/trading/valuation?eventSlug=${eventId}`)).body;
    let expected = 0;
    detail.bands.forEach((band: any, i: number) => {
      const bid = valuation.slippage.bandPrices[i].bid;
      expect(band.currentPrice).toBe(bid);
      expect(band.tokens).toBe(bought.orders[i].filled);
      expect(band.label).toBe(valuation.bands[i].label);
      expect(value.bandValues[i]).toMatchObject({ bandId: band.bandId, tokens: band.tokens, price: bid });
      expect(value.bandValues[i].value).toBeCloseTo(band.tokens * bid, 5);
      expected += Math.floor(Math.round(band.tokens * 1e6) * bid);
    });
    expect(Math.round(summary.currentValue * 1e6)).toBe(expected);
    expect(value.currentValue).toBe(summary.currentValue);
    expect(summary.unrealizedPnl).toBeCloseTo(summary.currentValue - summary.cost, 6);
    expect(summary.unrealizedPnlPercent).toBeCloseTo(((summary.currentValue - summary.cost) / summary.cost) * 100, 4);
    expect(summary.currentPrice).toBeCloseTo(summary.currentValue / summary.size, 5);
  });

  test('selling 25% sells a quarter of every band, realises proceeds − cost·25%, keeps the rest open', async () => {
    const before = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    const { res, body } = await sell(t, who, { positionId, percentage: 25 });
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ positionId, status: 'open', percentage: 25 });
    body.orders.forEach((o: any, i: number) => {
      expect(o).toMatchObject({ side: 'SELL', status: 'MATCHED' });
      expect(Math.round(o.size * 1e6)).toBe(step(Math.floor((Math.round(before.bands[i].tokens * 1e6) * 25) / 100)));
    });
    // The cost basis leaves with the shares actually sold (25% rounded down to the 0.01-share step).
    const released = body.orders.reduce((s: number, o: any, i: number) => s + o.filled * before.bands[i].entryPrice, 0);
    expect(Math.abs(body.realizedPnl - (body.totalProceeds - released))).toBeLessThan(1e-4);
    expect(Math.abs(released - before.cost * 0.25)).toBeLessThan(0.01 * body.orders.length);
    const after = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    expect(Math.abs(after.cost - (before.cost - released))).toBeLessThan(1e-4);
    expect(after.realizedPnl).toBe(body.realizedPnl);
    await expectBooksAgree(t, who);
  });

  test('selling the rest closes it; closed positions are listed under status=closed', async () => {
    const before = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    const { body } = await sell(t, who, { positionId });
    expect(body.status).toBe('closed');
    expect(body.realizedPnl).toBeCloseTo(body.totalProceeds - before.cost, 5);
    expect((await api(t, who, 'GET', '/api/trading/positions')).body.positions).toEqual([]);
    const closed = (await api(t, who, 'GET', '/api/trading/positions?status=closed')).body.positions;
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ id: positionId, status: 'closed', size: 0, cost: 0, currentValue: 0 });
    expect(closed[0].closedAt).not.toBeNull();
    const again = await sell(t, who, { positionId });
    expect(again.res.status).toBe(422);
    expect(again.body.code).toBe('ORDER_REJECTED');
    await expectBooksAgree(t, who);
  });

  test.each([
    [{ positionId: 'pos_nope' }, 404, 'POSITION_NOT_FOUND'],
    [{ positionId: 'x', percentage: 0 }, 400, 'BAD_REQUEST'],
    [{ positionId: 'x', percentage: 100.5 }, 400, 'BAD_REQUEST'],
    [{ positionId: 'x', percentage: '50' }, 400, 'BAD_REQUEST'],
    [{ percentage: 50 }, 400, 'BAD_REQUEST'],
  ])('sell %j → %i %s', async (body, status, code) => {
    const { res, body: error } = await sell(t, who, body);
    expect(res.status).toBe(status);
    expect(error.code).toBe(code);
  });

  test('a partial sale below the venue minimum names the smallest percentage that works', async () => {
    const small = await trader(t);
    const { body } = await buy(t, small, { eventId: 'openai-ipo', side: 'LONG', amount: 40 });
    const { res, body: error } = await sell(t, small, { positionId: body.positionId, percentage: 1 });
    expect(res.status).toBe(422);
    expect(error.code).toBe('ORDER_REJECTED');
    expect(error.message).toMatch(/percentage: 1% of band \d+ \([^)]+\) is under the venue minimum order of 5 shares; sell (at least [\d.]+% or 100%|100%)/);
    const needed = Number(/at least ([\d.]+)%/.exec(error.message)?.[1] ?? 100);
    expect((await sell(t, small, { positionId: body.positionId, percentage: needed })).res.status).toBe(200);
    await expectBooksAgree(t, small);
  });
});

describe('orders and history', () => {
  let who: Trader;
  let first: any;
  let second: any;
  beforeAll(async () => {
    who = await trader(t);
    first = (await buy(t, who, { eventId: 'kraken-ipo', side: 'LONG', amount: 60 })).body;
    second = (await buy(t, who, { eventId: 'ledger-ipo', side: 'SHORT', amount: 60 })).body;
    await sell(t, who, { positionId: first.positionId, percentage: 100 });
  });

  test('orders: newest first, filters by status and position, limit; detail adds bandLabel, remaining, txHash', async () => {
    const all = (await api(t, who, 'GET', '/api/trading/orders')).body.orders;
    const count = first.orders.length * 2 + second.orders.length;
    expect(all).toHaveLength(count);
    expect(all.every((o: any, i: number) => i === 0 || o.createdAt <= all[i - 1].createdAt)).toBe(true);
    expect((await api(t, who, 'GET', '/api/trading/orders?status=matched')).body.orders).toHaveLength(count);
    expect((await api(t, who, 'GET', '/api/trading/orders?status=pending')).body.orders).toEqual([]);
    const ofFirst = (await api(t, who, 'GET', `/api/trading/orders?positionId=${first.positionId}&limit=500`)).body.orders;
    expect(ofFirst.map((o: any) => o.side).sort()).toEqual([...first.orders.map(() => 'BUY'), ...first.orders.map(() => 'SELL')].sort());
    expect((await api(t, who, 'GET', '/api/trading/orders?limit=2')).body.orders).toHaveLength(2);
    const detail = (await api(t, who, 'GET', `/api/trading/orders/${second.orders[0].orderId}`)).body;
    expect(detail).toMatchObject({ id: second.orders[0].orderId, positionId: second.positionId, side: 'BUY', status: 'MATCHED', remaining: 0, purpose: 'open' });
    // The settlement transaction: none on the paper venue; the CLOB reports one for a match.
    expect(detail.txHash).toEqual(TEST_VENUE === 'paper' ? null : expect.stringMatching(/^0x[0-9a-f]{64}$/));
    expect(detail.bandLabel).toEqual(expect.any(String));
    expect(detail.matchedAt).not.toBeNull();
    for (const [query, code] of [
      ['status=filled', 'BAD_REQUEST'],
      ['limit=0', 'BAD_REQUEST'],
      ['limit=501', 'BAD_REQUEST'],
      ['limit=1e2', 'BAD_REQUEST'],
    ]) {
      const { res, body } = await api(t, who, 'GET', `/api/trading/orders?${query}`);
      expect(`${query} ${res.status} ${body.code}`).toBe(`${query} 400 ${code}`);
    }
    const missing = await api(t, who, 'GET', '/api/trading/orders/ord_missing');
    expect(missing.res.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
  });

  test('history: one trade per fill, filters, paging, and a summary of the filtered set', async () => {
    const { body } = await api(t, who, 'GET', '/api/trading/history?limit=1000');
    const n = first.orders.length * 2 + second.orders.length;
    expect(body.trades).toHaveLength(n);
    const volume = body.trades.reduce((s: number, x: any) => s + Math.round(x.amount * 1e6), 0);
    const realized = body.trades.reduce((s: number, x: any) => s + Math.round(x.realizedPnl * 1e6), 0);
    expect(body.summary).toEqual({ totalTrades: n, totalVolume: volume / 1e6, totalFees: 0, realizedPnl: realized / 1e6 });
    for (const trade of body.trades) {
      expect(trade.price).toBeCloseTo(trade.amount / trade.shares, 5);
      if (trade.action === 'BUY') expect(trade.realizedPnl).toBe(0);
    }
    const kraken = (await api(t, who, 'GET', '/api/trading/history?eventId=kraken-ipo')).body;
    expect(kraken.summary.totalTrades).toBe(first.orders.length * 2);
    expect(kraken.trades.every((x: any) => x.eventId === 'kraken-ipo' && x.side === 'LONG')).toBe(true);
    const page = (await api(t, who, 'GET', '/api/trading/history?limit=3&offset=3')).body;
    expect(page.trades.map((x: any) => x.id)).toEqual(body.trades.slice(3, 6).map((x: any) => x.id));
    expect(page.summary.totalTrades).toBe(n);
    expect((await api(t, who, 'GET', '/api/trading/history?startDate=2099-01-01')).body).toEqual({
      trades: [],
      summary: { totalTrades: 0, totalVolume: 0, totalFees: 0, realizedPnl: 0 },
    });
    const today = new Date().toISOString().slice(0, 10);
    expect((await api(t, who, 'GET', `/api/trading/history?startDate=${today}&endDate=${today}`)).body.summary.totalTrades).toBe(n);
    const bad = await api(t, who, 'GET', '/api/trading/history?startDate=2026-02-01&endDate=2026-01-01');
    expect(bad.res.status).toBe(400);
  });
});

describe('Idempotency-Key', () => {
  test('same key and body: the first answer is replayed, with Idempotent-Replayed, and nothing is bought twice', async () => {
    const who = await trader(t);
    const order = { eventId: 'perplexity-ipo', side: 'LONG', amount: 60 };
    const first = await buy(t, who, order, { 'idempotency-key': 'buy-1' });
    expect(first.res.headers.get('idempotent-replayed')).toBeNull();
    const again = await buy(t, who, { amount: 60, side: 'LONG', eventId: 'perplexity-ipo' }, { 'idempotency-key': 'buy-1' });
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const mismatch = await buy(t, who, { ...order, amount: 61 }, { 'idempotency-key': 'buy-1' });
    expect(mismatch.res.status).toBe(422);
    expect(mismatch.body.code).toBe('IDEMPOTENCY_MISMATCH');
    const asSell = await sell(t, who, { positionId: first.body.positionId }, { 'idempotency-key': 'buy-1' });
    expect(asSell.body.code).toBe('IDEMPOTENCY_MISMATCH');
    expect((await api(t, who, 'GET', '/api/trading/positions')).body.positions).toHaveLength(1);
    await expectBooksAgree(t, who);
  });

  test('concurrent requests with one key: one executes, the others wait (409) or replay it', async () => {
    const who = await trader(t);
    const order = { eventId: 'consensys-ipo', side: 'SHORT', amount: 60 };
    const results = await Promise.all(Array.from({ length: 8 }, () => buy(t, who, order, { 'idempotency-key': 'race' })));
    const ok = results.filter((r) => r.res.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.positionId)).size).toBe(1);
    for (const r of results.filter((r) => r.res.status !== 200)) {
      expect(r.res.status).toBe(409);
      expect(r.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(r.res.headers.get('retry-after')).toBe('1');
    }
    expect((await api(t, who, 'GET', '/api/trading/positions')).body.positions).toHaveLength(1);
  });

  test('a request that failed before sending anything keeps nothing: the same key runs again', async () => {
    const who = await trader(t, { credentials: false });
    const order = { eventId: 'strava-ipo', side: 'LONG', amount: 60 };
    expect((await buy(t, who, order, { 'idempotency-key': 'later' })).res.status).toBe(403);
    await storeTraderCredentials(t, who);
    const retried = await buy(t, who, order, { 'idempotency-key': 'later' });
    expect(retried.res.status).toBe(200);
    expect(retried.res.headers.get('idempotent-replayed')).toBeNull();
  });

  test('a key held by a process that died before sending anything is taken over after its lease', async () => {
    const who = await trader(t);
    const order = { eventId: 'kraken-ipo', side: 'SHORT' as const, amount: 60 };
    const [account, user] = [who.account.accountId, who.userId];
    await t.database.db.insert(idempotencyKeys).values({
      accountId: account,
      userId: user,
      key: 'orphan',
      requestHash: requestHashOf('buy', order),
      state: 'running',
      owner: 'a-dead-process',
      leaseUntil: sql`now() - interval '1 second'`,
    });
    const { res, body } = await buy(t, who, order, { 'idempotency-key': 'orphan' });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect((await buy(t, who, order, { 'idempotency-key': 'orphan' })).body).toEqual(body);
  });

  test('keys are per user, and a malformed key is a 400', async () => {
    const [a, b] = [await trader(t), await trader(t)];
    const order = { eventId: 'kraken-ipo', side: 'LONG', amount: 60 };
    const one = await buy(t, a, order, { 'idempotency-key': 'shared' });
    const two = await buy(t, b, order, { 'idempotency-key': 'shared' });
    expect(two.res.headers.get('idempotent-replayed')).toBeNull();
    expect(two.body.positionId).not.toBe(one.body.positionId);
    const long = await buy(t, a, order, { 'idempotency-key': 'k'.repeat(256) });
    expect(long.res.status).toBe(400);
    expect(long.body.message).toContain('Idempotency-Key');
  });
});

describe('tenancy', () => {
  test('another user, and the same x-user-id under another account, see nothing and can sell nothing', async () => {
    const owner = await trader(t);
    const { body } = await buy(t, owner, { eventId: 'openai-ipo', side: 'LONG', amount: 60 });
    const orderId = body.orders[0].orderId;
    const sameAccount = await trader(t, { account: owner.account });
    const otherAccount = await fundedAccount(t, { usd: 10 });
    const twin = { headers: { ...otherAccount.headers, 'x-user-id': owner.userId } };
    for (const intruder of [sameAccount, twin]) {
      expect((await api(t, intruder, 'GET', '/api/trading/positions?status=all')).body.positions).toEqual([]);
      expect((await api(t, intruder, 'GET', '/api/trading/orders')).body.orders).toEqual([]);
      expect((await api(t, intruder, 'GET', '/api/trading/history')).body.summary.totalTrades).toBe(0);
      for (const path of [`/api/trading/positions/${body.positionId}`, `/api/trading/positions/${body.positionId}/value`]) {
        const r = await api(t, intruder, 'GET', path);
        expect(r.res.status).toBe(404);
        expect(r.body.code).toBe('POSITION_NOT_FOUND');
      }
      expect((await api(t, intruder, 'GET', `/api/trading/orders/${orderId}`)).res.status).toBe(404);
      const stolen = await api(t, intruder, 'POST', '/api/trading/sell', { positionId: body.positionId });
      expect(stolen.body.code).toBe('POSITION_NOT_FOUND');
    }
    expect((await api(t, owner, 'GET', `/api/trading/positions/${body.positionId}`)).body.status).toBe('open');
  });
});

describe('positions/sync (the paper ledger stands in for the chain)', () => {
  test('needs a wallet: from the body or the settings', async () => {
    const who = await trader(t);
    await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: null });
    const missing = await api(t, who, 'POST', '/api/trading/positions/sync', {});
    expect(missing.res.status).toBe(400);
    expect(missing.body.message).toContain('walletAddress');
    expect((await api(t, who, 'POST', '/api/trading/positions/sync', { walletAddress: '0x12' })).res.status).toBe(400);
    await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
    const synced = await api(t, who, 'POST', '/api/trading/positions/sync', {});
    expect(synced.body).toMatchObject({ walletAddress: who.userId, synced: 0, added: 0, removed: 0, positions: [], untracked: [] });
  });

  test('verifies held positions, closes one whose tokens left the wallet, reports tokens it does not track', async () => {
    const who = await trader(t);
    const kept = (await buy(t, who, { eventId: 'openai-ipo', side: 'LONG', amount: 60 })).body;
    const gone = (await buy(t, who, { eventId: 'kraken-ipo', side: 'SHORT', amount: 60 })).body;
    // The user moved the kraken tokens out, and received strava tokens we never bought.
    const held = new Map<string, number>(kept.orders.map((o: any) => [o.bandId, Math.round(o.filled * 1e6)]));
    held.set('paper-strava-ipo-1', 7_000_000);
    await ledgerOf(t).setHoldings(who, held);
    // Another address proves nothing about the user's positions: reported, never closed.
    const elsewhere = (await api(t, who, 'POST', '/api/trading/positions/sync', { walletAddress: newUserId() })).body;
    expect(elsewhere).toMatchObject({ synced: 2, removed: 0 });
    await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
    const { body } = await api(t, who, 'POST', '/api/trading/positions/sync', {});
    expect(body).toMatchObject({ synced: 2, added: 0, removed: 1 });
    expect(body.positions).toEqual([
      { id: kept.positionId, eventId: 'openai-ipo', side: 'LONG', status: 'open', onChainVerified: true },
      { id: gone.positionId, eventId: 'kraken-ipo', side: 'SHORT', status: 'closed', onChainVerified: false },
    ]);
    expect(body.untracked).toEqual([{ bandId: 'paper-strava-ipo-1', eventId: 'strava-ipo', label: expect.any(String), tokens: 7 }]);
    const closed = (await api(t, who, 'GET', `/api/trading/positions/${gone.positionId}`)).body;
    expect(closed).toMatchObject({ status: 'closed', cost: 0, currentValue: 0 });
  });
});

describe('value follows the paper prices', () => {
  test('with drift, the same position is worth different amounts at different times', async () => {
    let clock = Date.parse('2026-11-22T00:00:00Z');
    const drifting = await createTradingApp({ PAPER_DRIFT: '0.05', MARKET_DATA_TTL_MS: '0' }, { database: t.database, now: () => clock });
    const who = await trader(drifting);
    const { body } = await buy(drifting, who, { eventId: 'anthropic-ipo', side: 'LONG', amount: 100 });
    const seen = new Set<number>();
    for (let hour = 0; hour < 24; hour += 4) {
      clock += 4 * 3_600_000;
      const value = (await api(drifting, who, 'GET', `/api/trading/positions/${body.positionId}/value`)).body;
      expect(value.updatedAt).toBe(new Date(clock).toISOString());
      const sum = value.bandValues.reduce((s: number, b: any) => s + Math.round(b.value * 1e6), 0);
      expect(Math.round(value.currentValue * 1e6)).toBe(sum);
      expect(value.unrealizedPnl).toBeCloseTo(value.currentValue - body.totalCost, 6);
      seen.add(value.currentValue);
    }
    expect(seen.size).toBeGreaterThan(3);
    await drifting.close();
  });
});

describe('the typed tRPC client', () => {
  test('buy, list, value, sell and history over /trpc', async () => {
    const who = await trader(t);
    const client = trpcClient(t, who.headers);
    const bought = await client.trading.buy.mutate({ eventId: 'ledger-ipo', side: 'LONG', amount: 60 });
    expect(bought.status).toBe('open');
    const { positions: list } = await client.positions.list.query();
    expect(list.map((p) => p.id)).toEqual([bought.positionId]);
    const value = await client.positions.value.query({ id: bought.positionId });
    expect(value.bandValues).toHaveLength(bought.orders.length);
    const sold = await client.trading.sell.mutate({ positionId: bought.positionId, percentage: 100 });
    expect(sold.status).toBe('closed');
    const history = await client.orders.history.query({ eventId: 'ledger-ipo' });
    expect(history.summary.totalTrades).toBe(bought.orders.length * 2);
    const error = await client.positions.get.query({ id: 'pos_missing' }).catch((e) => e);
    expect(error.data.api).toMatchObject({ code: 'POSITION_NOT_FOUND', status: 404 });
    await expectBooksAgree(t, who);
  });
});

/**
 * Faults between us and the venue: a rejected band, a half fill, a lost request, a fill
 * whose answer is lost, a venue that is down, failures during sales, and 200 concurrent buys and
 * sells on one position. After each, our records and the venue's ledger agree to the micro-unit.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestApp } from '../harness/app.ts';
import { FaultyVenue, type Fault } from '../harness/faulty-venue.ts';
import { api, buy, expectBooksAgree, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const TIMEOUT_MS = 150;
let calm: TestApp;
let t: TestApp;
let venue: FaultyVenue;
let eventId: string;
let bandCount: number;

beforeAll(async () => {
  t = await createTradingApp({ VENUE_TIMEOUT_MS: String(TIMEOUT_MS) }, { wrap: (inner) => (venue = new FaultyVenue(inner)) });
  // Without injected faults and with the default venue deadline, for the race test.
  calm = await createTradingApp({}, { database: t.database });
  // An event with bids on every band, so that sales and sell-backs can fill.
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  for (const e of body.events.filter((e: any) => e.status === 'open')) {
    const bids = (await api(t, { headers: {} }, 'GET', `/api/trading/valuation?eventSlug=${e.id}`)).body.slippage.bandPrices.map((b: any) => b.bid);
    if (bids.every((b: number) => b > 0)) {
      eventId = e.id;
      bandCount = e.bands.length;
      break;
    }
  }
  // One trade first, under the default deadline (the same database and paper venue): a cold process's
  // first trade (connections, prepared statements, the first compile of the trade path) can outlast
  // the 150 ms these tests set, which made the first of them a 503 now and then.
  const warm = await buy(calm, await trader(calm), { eventId, side: 'LONG', amount: 100 });
  expect(warm.res.status).toBe(200);
});
afterAll(async () => {
  await calm.close();
  await t.close();
});

/** Injects `fault` into the k-th placement counted from now (1-based), or into every one. */
function inject(fault: Fault, k: number | 'all') {
  const start = venue.placements;
  venue.faultFor = (n) => (k === 'all' || n - start === k ? fault : undefined);
}
function heal() {
  venue.faultFor = () => undefined;
  venue.statusDown = false;
}
const positionOf = async (who: Trader, id: string) => (await api(t, who, 'GET', `/api/trading/positions/${id}`)).body;
const ordersOf = async (who: Trader, id: string) => (await api(t, who, 'GET', `/api/trading/orders?positionId=${id}&limit=500`)).body.orders;
const pendingPositionId = async (who: Trader) => (await api(t, who, 'GET', '/api/trading/positions?status=pending')).body.positions[0]?.id;
const pastGrace = () => Bun.sleep(TIMEOUT_MS * 3 + 50);

describe('buy', () => {
  test('the venue rejects the third band: the filled bands are sold back, everything is recorded, 422', async () => {
    const who = await trader(t);
    inject('rejected', 3);
    const { res, body } = await buy(t, who, { eventId, side: 'LONG', amount: 100 }, { 'idempotency-key': 'reject-3' });
    heal();
    expect(res.status).toBe(422);
    expect(body.code).toBe('ORDER_REJECTED');
    expect(body.message).toContain('rejected-by-venue');
    expect(body.message).toContain('sold back');
    const positionId = /position (pos_\w+)/.exec(body.message)![1]!;
    const position = await positionOf(who, positionId);
    expect(position).toMatchObject({ status: 'closed', cost: 0, failureReason: 'rejected-by-venue' });
    const orders = await ordersOf(who, positionId);
    expect(orders.filter((o: any) => o.purpose === 'open').map((o: any) => o.status).sort()).toEqual([...Array(bandCount - 1).fill('MATCHED'), 'REJECTED'].sort());
    expect(orders.filter((o: any) => o.purpose === 'unwind')).toHaveLength(bandCount - 1);
    const books = await expectBooksAgree(t, who);
    expect(books.trades.filter((x) => x.action === 'BUY')).toHaveLength(bandCount - 1);
    expect(books.trades.filter((x) => x.action === 'SELL')).toHaveLength(bandCount - 1);
    // The sell-back lost the spread, and says so in the history.
    expect((await api(t, who, 'GET', '/api/trading/history')).body.summary.realizedPnl).toBeLessThan(0);
    const replay = await buy(t, who, { eventId, side: 'LONG', amount: 100 }, { 'idempotency-key': 'reject-3' });
    expect(replay.res.status).toBe(422);
    expect(replay.res.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.message).toBe(body.message);
  });

  test('a band fills only half: the half and the other bands are sold back', async () => {
    const who = await trader(t);
    inject('half-filled', 2);
    const { res, body } = await buy(t, who, { eventId, side: 'SHORT', amount: 100 });
    heal();
    expect(res.status).toBe(422);
    expect(body.code).toBe('ORDER_REJECTED');
    const positionId = /position (pos_\w+)/.exec(body.message)![1]!;
    const open = (await ordersOf(who, positionId)).filter((o: any) => o.purpose === 'open');
    const half = open.find((o: any) => o.filled > 0 && o.filled < o.size);
    expect(half).toBeDefined();
    expect((await positionOf(who, positionId)).status).toBe('closed');
    await expectBooksAgree(t, who);
  });

  test('a placement is lost before reaching the venue: 503, PENDING, then orders/sync cancels it and unwinds', async () => {
    const who = await trader(t);
    inject('lost', 4);
    const { res, body } = await buy(t, who, { eventId, side: 'LONG', amount: 80 });
    heal();
    expect(res.status).toBe(503);
    expect(body.code).toBe('VENUE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBe('1');
    const positionId = await pendingPositionId(who);
    expect(body.message).toContain(positionId);
    const pending = (await api(t, who, 'GET', '/api/trading/orders?status=pending')).body.orders;
    expect(pending).toHaveLength(1);
    // Holdings never claim what the venue did not confirm, and a pending position cannot be sold.
    expect((await sell(t, who, { positionId })).body.code).toBe('ORDER_REJECTED');
    await expectBooksAgree(t, who);

    // Within the grace period the venue might still receive it: sync leaves it alone.
    const early = (await api(t, who, 'POST', '/api/trading/orders/sync', {})).body;
    expect(early).toMatchObject({ synced: 1, updated: 0 });
    await pastGrace();
    const sync = (await api(t, who, 'POST', '/api/trading/orders/sync', {})).body;
    expect(sync).toMatchObject({ synced: 1, updated: 1, orders: [{ id: pending[0].id, previousStatus: 'PENDING', currentStatus: 'CANCELLED' }] });
    expect(sync.positions).toEqual([{ id: positionId, status: 'closed' }]);
    // The lost message arriving now cannot fill: the venue holds a cancellation under its id.
    const late = await venue.inner.placeOrder(who.credentials, { clientOrderId: pending[0].id, tokenId: pending[0].bandId, side: 'BUY', sharesMicros: 5_000_000, limitPriceMicros: 990_000, timeInForce: 'FOK' });
    expect(late.status).toBe('CANCELLED');
    await expectBooksAgree(t, who);
  });

  test('the venue fills but the answer is lost: one status check finds the fill and the buy succeeds', async () => {
    const who = await trader(t);
    inject('filled-then-silent', 2);
    const { res, body } = await buy(t, who, { eventId, side: 'LONG', amount: 80 });
    heal();
    expect(res.status).toBe(200);
    expect(body.orders.every((o: any) => o.status === 'MATCHED')).toBe(true);
    await expectBooksAgree(t, who);
  });

  test('the venue fills, the connection breaks and status reads fail: PENDING until positions/sync completes the buy', async () => {
    const who = await trader(t);
    await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
    inject('filled-then-error', 5);
    venue.statusDown = true;
    const { res } = await buy(t, who, { eventId, side: 'SHORT', amount: 80 });
    expect(res.status).toBe(503);
    const positionId = await pendingPositionId(who);
    const down = await api(t, who, 'POST', '/api/trading/orders/sync', {});
    expect(down.res.status).toBe(503);
    heal();
    const sync = (await api(t, who, 'POST', '/api/trading/positions/sync', {})).body;
    expect(sync).toMatchObject({ synced: 1, added: 1, removed: 0, positions: [{ id: positionId, status: 'open', onChainVerified: true }] });
    expect((await positionOf(who, positionId)).status).toBe('open');
    await expectBooksAgree(t, who);
  });

  test('a buy whose outcome was unknown: a retry with the same key settles it and answers what it became', async () => {
    const who = await trader(t);
    const order = { eventId, side: 'LONG', amount: 80 };
    inject('filled-then-error', 2);
    venue.statusDown = true;
    const first = await buy(t, who, order, { 'idempotency-key': 'unknown-1' });
    expect(first.res.status).toBe(503);
    const stillDown = await buy(t, who, order, { 'idempotency-key': 'unknown-1' });
    expect(stillDown.res.status).toBe(503);
    heal();
    const retried = await buy(t, who, order, { 'idempotency-key': 'unknown-1' });
    expect(retried.res.status).toBe(200);
    expect(retried.res.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.status).toBe('open');
    const again = await buy(t, who, order, { 'idempotency-key': 'unknown-1' });
    expect(again.body).toEqual(retried.body);
    expect((await api(t, who, 'GET', '/api/trading/positions?status=all')).body.positions).toHaveLength(1);
    await expectBooksAgree(t, who);
  });

  test('the venue is down for every placement: nothing is filled, and orders/sync closes the attempt', async () => {
    const who = await trader(t);
    inject('down', 'all');
    const { res } = await buy(t, who, { eventId, side: 'LONG', amount: 80 });
    heal();
    expect(res.status).toBe(503);
    const positionId = await pendingPositionId(who);
    await pastGrace();
    const sync = (await api(t, who, 'POST', '/api/trading/orders/sync', {})).body;
    expect(sync.updated).toBe(bandCount);
    expect(sync.orders.every((o: any) => o.currentStatus === 'CANCELLED')).toBe(true);
    expect((await positionOf(who, positionId)).status).toBe('closed');
    const books = await expectBooksAgree(t, who);
    expect(books.trades).toEqual([]);
  });
});

describe('sell', () => {
  test('one band rejected: the others are sold, the answer says which, the rest stays open', async () => {
    const who = await trader(t);
    const { body: bought } = await buy(t, who, { eventId, side: 'LONG', amount: 100 });
    inject('rejected', 2);
    const { res, body } = await sell(t, who, { positionId: bought.positionId });
    heal();
    expect(res.status).toBe(200);
    expect(body.status).toBe('open');
    expect(body.orders.map((o: any) => o.status).sort()).toEqual([...Array(bandCount - 1).fill('MATCHED'), 'REJECTED'].sort());
    const rejected = body.orders.find((o: any) => o.status === 'REJECTED');
    const position = await positionOf(who, bought.positionId);
    for (const band of position.bands) expect(band.tokens).toBe(band.bandId === rejected.bandId ? rejected.size : 0);
    const rest = await sell(t, who, { positionId: bought.positionId });
    expect(rest.body.status).toBe('closed');
    await expectBooksAgree(t, who);
  });

  test('a sale whose outcome is unknown keeps its shares reserved: a second sale cannot sell them again', async () => {
    const who = await trader(t);
    const { body: bought } = await buy(t, who, { eventId, side: 'SHORT', amount: 100 });
    inject('filled-then-silent', 'all');
    venue.statusDown = true;
    const first = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
    heal();
    expect(first.res.status).toBe(503);
    const second = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
    expect(second.res.status).toBe(422);
    expect(second.body.message).toContain('nothing left to sell');
    const sync = (await api(t, who, 'POST', '/api/trading/orders/sync', {})).body;
    expect(sync.updated).toBe(bandCount);
    expect(sync.positions).toEqual([{ id: bought.positionId, status: 'closed' }]);
    await expectBooksAgree(t, who);
  });
});

describe('concurrency', () => {
  test('200 concurrent buys and sells by one user on one position: no double sale, holdings never negative', async () => {
    const t = calm;
    const who = await trader(t);
    const { body: bought } = await buy(t, who, { eventId, side: 'LONG', amount: 2000 });
    const before = (await api(t, who, 'GET', `/api/trading/positions/${bought.positionId}`)).body;
    const work = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? sell(t, who, { positionId: bought.positionId, percentage: 5 + (i % 7) * 10 })
        : buy(t, who, { eventId, side: i % 4 === 1 ? 'LONG' : 'SHORT', amount: 60 }),
    );
    const results = await Promise.all(work);
    const statuses = results.map((r) => r.res.status);
    expect(results.filter((r) => r.res.status !== 200 && r.res.status !== 422).map((r) => `${r.res.status} ${r.body.code} ${r.body.message}`).slice(0, 5)).toEqual([]);
    for (const r of results.filter((r) => r.res.status === 422)) expect(r.body.code).toBe('ORDER_REJECTED');
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(100);

    const books = await expectBooksAgree(t, who);
    const soldOfPosition = books.trades.filter((x) => x.positionId === bought.positionId && x.action === 'SELL');
    const after = (await api(t, who, 'GET', `/api/trading/positions/${bought.positionId}`)).body;
    after.bands.forEach((band: any, i: number) => {
      const sold = soldOfPosition.filter((x) => x.bandId === band.bandId).reduce((s, x) => s + x.sharesMicros, 0);
      expect(Math.round(band.tokens * 1e6) + sold).toBe(Math.round(before.bands[i].tokens * 1e6));
      expect(band.tokens).toBeGreaterThanOrEqual(0);
    });
  }, 180_000);
});

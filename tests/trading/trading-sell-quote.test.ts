/**
 * A sale's quote (POST /trading/sell/quote), a customer's session on the trading routes, and the
 * account's users (GET /trading/users) — what the dashboard's trading page stands on.
 * Through the real HTTP surface (/api and /trpc) on the test venue (paper, or the CLOB stand-in).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { orders } from '../../db/schema.ts';
import { trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount } from '../harness/factories.ts';
import { signIn } from '../harness/sign-in.ts';
import { api, buy, expectBooksAgree, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

let t: TestApp;
let openEvent: string;

beforeAll(async () => {
  t = await createTradingApp();
  const { body } = await api(t, { headers: {} }, 'GET', '/api/trading/events');
  openEvent = body.events.find((e: any) => e.status === 'open').id;
}, 60_000);
afterAll(() => t.close());

const quoteSale = (who: Pick<Trader, 'headers'>, body: Record<string, unknown>, extra?: Record<string, string>) => api(t, who, 'POST', '/api/trading/sell/quote', body, extra);

async function boughtPosition(who: Trader, amount = 200) {
  const bought = await buy(t, who, { eventId: openEvent, side: 'LONG', amount });
  expect(bought.res.status).toBe(200);
  return bought.body.positionId as string;
}

const ordersOf = async (positionId: string) => (await t.database.db.select().from(orders).where(eq(orders.positionId, positionId))).length;

describe('sell quote', () => {
  test('a sale right after sells exactly the quoted plan: shares per band, proceeds and P&L to the micro-unit', async () => {
    const who = await trader(t);
    const positionId = await boughtPosition(who);
    const before = await ordersOf(positionId);
    const quoted = await quoteSale(who, { positionId, percentage: 100 });
    expect(quoted.res.status).toBe(200);
    const q = quoted.body;
    expect(await ordersOf(positionId)).toBe(before); // a quote places nothing
    const detail = (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
    expect(q.bands.map((b: any) => b.shares)).toEqual(detail.bands.map((b: any) => b.tokens));
    expect(q.totalProceeds).toBeCloseTo(q.bands.reduce((s: number, b: any) => s + b.proceeds, 0), 6);
    expect(q.costBasis).toBeCloseTo(detail.cost, 6);
    expect(q.estimatedPnl).toBeCloseTo(q.totalProceeds - detail.cost, 6);
    expect(q.averagePrice).toBeCloseTo(q.totalProceeds / q.units, 5);
    expect(q.allSellable).toBe(true);

    // Protected at the quoted average: on unchanged books the sale goes through, for exactly the quote.
    const sold = await sell(t, who, { positionId, percentage: 100, minAveragePrice: q.averagePrice });
    expect(sold.res.status).toBe(200);
    expect(sold.body.status).toBe('closed');
    expect(sold.body.totalProceeds).toBe(q.totalProceeds);
    expect(sold.body.realizedPnl).toBe(q.estimatedPnl);
    expect(sold.body.orders.map((o: any) => o.filled)).toEqual(q.bands.map((b: any) => b.shares));
    await expectBooksAgree(t, who);
  });

  test('protection above the quote refuses the sale with nothing sent; a partial quote names the range that keeps the shape', async () => {
    const who = await trader(t);
    const positionId = await boughtPosition(who, 300);
    const q = (await quoteSale(who, { positionId, percentage: 100 })).body;
    const sent = await ordersOf(positionId);
    const refused = await sell(t, who, { positionId, percentage: 100, minAveragePrice: Math.min(1, q.averagePrice + 0.01) });
    expect(refused.res.status).toBe(422);
    expect(refused.body.message).toContain('minAveragePrice');
    expect(await ordersOf(positionId)).toBe(sent);

    const range = q.partialSaleRange;
    expect(range).not.toBeNull();
    const half = await quoteSale(who, { positionId, percentage: range.lowest });
    expect(half.res.status).toBe(200);
    expect(half.body.percentage).toBe(range.lowest);
    expect(half.body.units).toBeLessThan(q.units);
    if (range.lowest > 1) {
      const tooSmall = await quoteSale(who, { positionId, percentage: 1 });
      expect(tooSmall.res.status).toBe(422);
      // The refusal a sale would give, word for word.
      const sale = await sell(t, who, { positionId, percentage: 1 });
      expect(tooSmall.body.message).toBe(sale.body.message);
    }
  });

  test('bad input is a 4xx in our error shape; another user\'s position is 404; a closed one 422', async () => {
    const who = await trader(t);
    const other = await trader(t, { account: who.account });
    const positionId = await boughtPosition(who);
    for (const body of [{}, { positionId, percentage: 0 }, { positionId, percentage: 101 }, { positionId, percentage: 'all' }, { positionId, extra: 1 }]) {
      const res = await quoteSale(who, body);
      expect(`${JSON.stringify(body)} → ${res.res.status}`).toBe(`${JSON.stringify(body)} → 400`);
      expect(res.body).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    }
    expect((await quoteSale(other, { positionId })).res.status).toBe(404);
    expect((await sell(t, who, { positionId })).res.status).toBe(200);
    const closed = await quoteSale(who, { positionId });
    expect(closed.res.status).toBe(422);
    expect(closed.body.message).toContain('closed');
  });

  test('the typed client quotes a sale too', async () => {
    const who = await trader(t);
    const positionId = await boughtPosition(who);
    const q = await trpcClient(t, who.headers).trading.sellQuote.mutate({ positionId, percentage: 100 });
    expect(q.positionId).toBe(positionId);
    expect(q.totalProceeds).toBeGreaterThan(0);
  });
});

describe('a signed-in customer on the trading routes', () => {
  test('reads and sells any user of its own account, billed like a key; never another account\'s', async () => {
    const customer = await signIn(t);
    const account = await fundedAccount(t, { accountId: customer.accountId, usd: 1000 });
    const who = await trader(t, { account });
    const positionId = await boughtPosition(who);
    const session = { headers: { ...customer.headers, 'x-user-id': who.userId } };

    const listed = await api(t, session, 'GET', '/api/trading/positions?status=all');
    expect(listed.res.status).toBe(200);
    expect(listed.res.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(listed.body.positions.map((p: any) => p.id)).toEqual([positionId]);

    // Another customer naming the same user id sees nothing: users belong to accounts.
    const stranger = await signIn(t);
    await fundedAccount(t, { accountId: stranger.accountId });
    const theirs = await api(t, { headers: { ...stranger.headers, 'x-user-id': who.userId } }, 'GET', '/api/trading/positions?status=all');
    expect(theirs.body.positions).toEqual([]);
    expect((await api(t, { headers: { ...stranger.headers, 'x-user-id': who.userId } }, 'POST', '/api/trading/sell/quote', { positionId })).res.status).toBe(404);

    // A change needs the trusted Origin (CSRF), and a user id.
    const noOrigin = await api(t, { headers: { cookie: customer.cookie, 'x-user-id': who.userId } }, 'POST', '/api/trading/sell', { positionId });
    expect(noOrigin.res.status).toBe(403);
    const noUser = await api(t, { headers: customer.headers }, 'POST', '/api/trading/sell', { positionId });
    expect(noUser.res.status).toBe(400);
    expect(noUser.body.message).toContain('x-user-id');

    const balance = async () => {
      const { res, body } = await api(t, account, 'GET', '/api/billing');
      return { balance: body.balanceUsd as number, cost: Number(res.headers.get('x-request-cost-usd')) };
    };
    const before = await balance();
    const q = await api(t, session, 'POST', '/api/trading/sell/quote', { positionId, percentage: 100 });
    expect(q.res.status).toBe(200);
    const sold = await api(t, session, 'POST', '/api/trading/sell', { positionId, percentage: 100, minAveragePrice: q.body.averagePrice }, { 'idempotency-key': `dash-${positionId}` });
    expect(sold.res.status).toBe(200);
    expect(sold.body.status).toBe('closed');
    // The retry of the same click is answered from the record, not sold twice.
    const again = await api(t, session, 'POST', '/api/trading/sell', { positionId, percentage: 100, minAveragePrice: q.body.averagePrice }, { 'idempotency-key': `dash-${positionId}` });
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.totalProceeds).toBe(sold.body.totalProceeds);
    // Session calls cost what a key's do: between the key's two balance reads, the quote, the sale,
    // its replay and the second read were billed, each at the standard rate, to the session's account.
    const charged = [q, sold, again].map((r) => Number(r.res.headers.get('x-request-cost-usd')));
    expect(charged).toEqual([0.002, 0.002, 0.002]);
    const after = await balance();
    expect(before.balance - after.balance).toBeCloseTo(charged.reduce((a, b) => a + b, 0) + after.cost, 6);
    await expectBooksAgree(t, who);
  });
});

describe('the account\'s trading users', () => {
  test('every user the account traded for or configured, with position counts; other accounts\' users never', async () => {
    const account = await fundedAccount(t, { usd: 1000 });
    const a = await trader(t, { account });
    const b = await trader(t, { account });
    await boughtPosition(a);
    const second = await boughtPosition(a);
    await sell(t, a, { positionId: second });
    const stranger = await trader(t);
    await boughtPosition(stranger);

    const listed = await api(t, account, 'GET', '/api/trading/users');
    expect(listed.res.status).toBe(200);
    const byId = new Map(listed.body.users.map((u: any) => [u.userId, u]));
    expect(byId.get(a.userId)).toMatchObject({ positions: 2, openPositions: 1 });
    expect(byId.get(b.userId)).toMatchObject({ positions: 0, openPositions: 0 });
    expect(byId.has(stranger.userId)).toBe(false);
    expect(listed.body.users[0].userId).toBe(a.userId); // most recently active first
    expect((await api(t, account, 'GET', '/api/trading/users?limit=1')).body.users).toHaveLength(1);
    expect((await api(t, account, 'GET', '/api/trading/users?limit=0')).res.status).toBe(400);
    const viaClient = await trpcClient(t, account.headers).tradingUsers.list.query({});
    expect(viaClient.users.map((u) => u.userId).sort()).toEqual([a.userId, b.userId].sort());
  });
});

/**
 * Trading test helpers: a funded user with stored venue credentials (its own paper venue account),
 * calls over /api, and an independent check that our records agree with the venue's ledger.
 */
import { expect } from 'bun:test';
import { and, eq, inArray } from 'drizzle-orm';
import { orders, paperAccounts, paperHoldings, paperOrders, positionBands, positions, trades } from '../../db/schema.ts';
import type { TestApp } from './app.ts';
import { fundedAccount, newUserId, type FundedAccount } from './factories.ts';

export interface Trader {
  account: FundedAccount;
  userId: string;
  /** The paper venue account of this user's credentials. */
  venueKey: string;
  headers: Record<string, string>;
}

export async function trader(t: TestApp, opts: { account?: FundedAccount; credentials?: boolean } = {}): Promise<Trader> {
  const account = opts.account ?? (await fundedAccount(t, { usd: 1000 }));
  const userId = newUserId();
  const venueKey = `paper-${userId}`;
  const headers = { ...account.headers, 'x-user-id': userId };
  const who = { account, userId, venueKey, headers };
  if (opts.credentials !== false) {
    const { res } = await api(t, who, 'POST', '/api/trading/credentials', { apiKey: venueKey, secret: 'c2VjcmV0', passphrase: 'pass' });
    expect(res.status).toBe(200);
  }
  return who;
}

export async function api(t: TestApp, who: Pick<Trader, 'headers'>, method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  const res = await t.request(path, {
    method,
    headers: { ...who.headers, ...extra, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { res, body: (await res.json()) as any };
}

export const buy = (t: TestApp, who: Trader, body: Record<string, unknown>, extra?: Record<string, string>) => api(t, who, 'POST', '/api/trading/buy', body, extra);
export const sell = (t: TestApp, who: Trader, body: Record<string, unknown>, extra?: Record<string, string>) => api(t, who, 'POST', '/api/trading/sell', body, extra);

/**
 * Our records against the venue's own ledger, to the micro-unit:
 *  - the venue balance moved by exactly what our trades say was paid and received;
 *  - the venue holds exactly the shares our positions say the user holds, token by token;
 *  - every venue fill has one order and one trade of ours with the same shares and amount;
 *  - no holding or reservation is negative, nothing is reserved once no sale is pending.
 */
export async function expectBooksAgree(t: TestApp, who: Trader, startingMicros: number) {
  const db = t.database.db;
  const mine = and(eq(trades.accountId, who.account.accountId), eq(trades.userId, who.userId));
  const tradeRows = await db.select().from(trades).where(mine);
  const paid = tradeRows.filter((r) => r.action === 'BUY').reduce((s, r) => s + r.amountMicros + r.feesMicros, 0);
  const received = tradeRows.filter((r) => r.action === 'SELL').reduce((s, r) => s + r.amountMicros - r.feesMicros, 0);
  const [account] = await db.select().from(paperAccounts).where(eq(paperAccounts.accountKey, who.venueKey));
  expect(account?.collateralMicros ?? startingMicros).toBe(startingMicros - paid + received);

  const positionRows = await db.select().from(positions).where(and(eq(positions.accountId, who.account.accountId), eq(positions.userId, who.userId)));
  const bandRows = positionRows.length ? await db.select().from(positionBands).where(inArray(positionBands.positionId, positionRows.map((p) => p.id))) : [];
  const ours = new Map<string, number>();
  for (const b of bandRows) {
    expect(b.sharesMicros).toBeGreaterThanOrEqual(0);
    expect(b.reservedMicros).toBeGreaterThanOrEqual(0);
    expect(b.reservedMicros).toBeLessThanOrEqual(b.sharesMicros);
    if (b.sharesMicros) ours.set(b.bandId, (ours.get(b.bandId) ?? 0) + b.sharesMicros);
  }
  const venueHeld = await db.select().from(paperHoldings).where(eq(paperHoldings.accountKey, who.venueKey));
  expect(Object.fromEntries(venueHeld.filter((h) => h.sharesMicros > 0).map((h) => [h.tokenId, h.sharesMicros]))).toEqual(Object.fromEntries(ours));

  const orderRows = await db.select().from(orders).where(and(eq(orders.accountId, who.account.accountId), eq(orders.userId, who.userId)));
  const venueFills = await db.select().from(paperOrders).where(and(eq(paperOrders.accountKey, who.venueKey), eq(paperOrders.status, 'MATCHED')));
  const byId = new Map(orderRows.map((o) => [o.id, o]));
  const tradeByOrder = new Map(tradeRows.map((r) => [r.orderId, r]));
  for (const fill of venueFills) {
    const order = byId.get(fill.clientOrderId);
    expect(order).toBeDefined();
    expect({ filled: order!.filledMicros, amount: order!.notionalMicros }).toEqual({ filled: fill.filledMicros, amount: fill.notionalMicros });
    expect(tradeByOrder.get(fill.clientOrderId)).toMatchObject({ sharesMicros: fill.filledMicros, amountMicros: fill.notionalMicros });
  }
  expect(tradeRows.length).toBe(venueFills.length);
  if (!orderRows.some((o) => o.status === 'PENDING')) for (const b of bandRows) expect(b.reservedMicros).toBe(0);
  return { positions: positionRows, orders: orderRows, trades: tradeRows };
}

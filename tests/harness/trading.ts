/**
 * Trading test helpers: a funded user with stored venue credentials (its own venue account),
 * calls over /api, and an independent check that our records agree with the venue's ledger.
 */
import { expect } from 'bun:test';
import { and, eq, inArray } from 'drizzle-orm';
import { orders, positionBands, positions, trades, tradingTotals } from '../../db/schema.ts';
import type { VenueCredentials } from '../../server/venues/venue.ts';
import { ledgerOf } from './trading-venue.ts';
import type { TestApp } from './app.ts';
import { fundedAccount, newUserId, type FundedAccount } from './factories.ts';

export interface Trader {
  account: FundedAccount;
  userId: string;
  /** The venue credentials this user stored (the venue account behind the user). */
  credentials: VenueCredentials;
  headers: Record<string, string>;
}

/**
 * A trading user with stored venue credentials (its own venue account). On a live venue the user's
 * wallet is set first (the venue needs it) and the session key the service generated is authorised.
 */
export async function trader(t: TestApp, opts: { account?: FundedAccount; credentials?: boolean } = {}): Promise<Trader> {
  const ledger = ledgerOf(t);
  const account = opts.account ?? (await fundedAccount(t, { usd: 1000 }));
  const userId = newUserId();
  const headers = { ...account.headers, 'x-user-id': userId };
  const credentials = ledger.enrol(userId);
  const live = t.services.venue.usesSessionKeys;
  // As openCredentials gives them to the venue: with the wallet and their owner.
  const owner = { accountId: account.accountId, userId };
  const who: Trader = { account, userId, credentials: { ...credentials, walletAddress: live ? userId : null, owner }, headers };
  if (live) await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: userId });
  if (opts.credentials !== false) await storeTraderCredentials(t, who);
  return who;
}

export async function storeTraderCredentials(t: TestApp, who: Trader) {
  const { apiKey, secret, passphrase } = who.credentials;
  const { res } = await api(t, who, 'POST', '/api/trading/credentials', { apiKey, secret, passphrase });
  expect(res.status).toBe(200);
  const settings = (await api(t, who, 'GET', '/api/trading/settings')).body;
  ledgerOf(t).authorise(who.userId, settings.signerAddress);
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
 *  - no holding or reservation is negative, nothing is reserved once no sale is pending;
 *  - each band's shares and cost basis are what its trades add up to.
 */
export async function expectBooksAgree(t: TestApp, who: Trader, startingMicros = ledgerOf(t).startingMicros) {
  const db = t.database.db;
  const ledger = ledgerOf(t);
  const mine = and(eq(trades.accountId, who.account.accountId), eq(trades.userId, who.userId));
  const tradeRows = await db.select().from(trades).where(mine);
  const paid = tradeRows.filter((r) => r.action === 'BUY').reduce((s, r) => s + r.amountMicros + r.feesMicros, 0);
  const received = tradeRows.filter((r) => r.action === 'SELL').reduce((s, r) => s + r.amountMicros - r.feesMicros, 0);
  expect(await ledger.collateral(who)).toBe(startingMicros - paid + received);

  const positionRows = await db.select().from(positions).where(and(eq(positions.accountId, who.account.accountId), eq(positions.userId, who.userId)));
  const bandRows = positionRows.length ? await db.select().from(positionBands).where(inArray(positionBands.positionId, positionRows.map((p) => p.id))) : [];
  const ours = new Map<string, number>();
  for (const b of bandRows) {
    expect(b.sharesMicros).toBeGreaterThanOrEqual(0);
    expect(b.reservedMicros).toBeGreaterThanOrEqual(0);
    expect(b.reservedMicros).toBeLessThanOrEqual(b.sharesMicros);
    if (b.sharesMicros) ours.set(b.bandId, (ours.get(b.bandId) ?? 0) + b.sharesMicros);
  }
  expect(Object.fromEntries(await ledger.holdings(who))).toEqual(Object.fromEntries(ours));

  const orderRows = await db.select().from(orders).where(and(eq(orders.accountId, who.account.accountId), eq(orders.userId, who.userId)));
  const venueFills = await ledger.fills(who);
  const byId = new Map(orderRows.map((o) => [o.id, o]));
  const tradeByOrder = new Map(tradeRows.map((r) => [r.orderId, r]));
  for (const [orderId, fill] of venueFills) {
    const order = byId.get(orderId);
    expect(order).toBeDefined();
    expect({ filled: order!.filledMicros, amount: order!.notionalMicros }).toEqual({ filled: fill.filledMicros, amount: fill.notionalMicros });
    expect(tradeByOrder.get(orderId)).toMatchObject({ sharesMicros: fill.filledMicros, amountMicros: fill.notionalMicros });
  }
  expect(tradeRows.length).toBe(venueFills.size);

  // Each band's shares and cost basis follow its trades exactly: what was bought less what was sold,
  // and the entry cost less the basis each sale released (released = proceeds − fees − realised P&L).
  // (Not for a position closed because its tokens left the wallet: that clears holdings without a trade.)
  const tokensGone = new Set(positionRows.filter((p) => p.closeReason === 'tokens-gone').map((p) => p.id));
  for (const b of bandRows.filter((row) => !tokensGone.has(row.positionId))) {
    const sales = tradeRows.filter((r) => r.positionId === b.positionId && r.bandId === b.bandId && r.action === 'SELL');
    const sold = sales.reduce((s, r) => s + r.sharesMicros, 0);
    const released = sales.reduce((s, r) => s + r.amountMicros - r.feesMicros - r.realizedPnlMicros, 0);
    expect({ band: `${b.positionId}/${b.bandIndex}`, shares: b.sharesMicros, cost: b.costMicros }).toEqual({
      band: `${b.positionId}/${b.bandIndex}`,
      shares: b.boughtMicros - sold,
      cost: b.entryCostMicros - released,
    });
    if (b.sharesMicros === 0) expect(b.costMicros).toBe(0);
  }
  if (!orderRows.some((o) => o.status === 'PENDING')) for (const b of bandRows) expect(b.reservedMicros).toBe(0);
  // The user's running totals (trading_totals, kept by triggers) are its rows counted and summed.
  const [totals] = await db.select().from(tradingTotals).where(and(eq(tradingTotals.accountId, who.account.accountId), eq(tradingTotals.userId, who.userId)));
  const sum = (pick: (r: (typeof tradeRows)[number]) => number) => tradeRows.reduce((s, r) => s + pick(r), 0);
  const count = <T extends { status: string }>(rows: T[], status: string) => rows.filter((r) => r.status === status).length;
  expect(totals ?? { positionsPending: 0, positionsOpen: 0, positionsClosed: 0, positionsSettled: 0, ordersPending: 0, ordersMatched: 0, ordersCancelled: 0, ordersRejected: 0, trades: 0, volumeMicros: 0, feesMicros: 0, realizedPnlMicros: 0 }).toMatchObject({
    positionsPending: count(positionRows, 'pending'),
    positionsOpen: count(positionRows, 'open'),
    positionsClosed: count(positionRows, 'closed'),
    positionsSettled: count(positionRows, 'settled'),
    ordersPending: count(orderRows, 'PENDING'),
    ordersMatched: count(orderRows, 'MATCHED'),
    ordersCancelled: count(orderRows, 'CANCELLED'),
    ordersRejected: count(orderRows, 'REJECTED'),
    trades: tradeRows.length,
    volumeMicros: sum((r) => r.amountMicros),
    feesMicros: sum((r) => r.feesMicros),
    realizedPnlMicros: sum((r) => r.realizedPnlMicros),
  });
  return { positions: positionRows, orders: orderRows, trades: tradeRows };
}

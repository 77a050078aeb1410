/**
 * The paper venue's trading: marketable orders filled against the paper books, settled in the paper
 * ledger (db/tables/paper.ts). A fill walks the book's levels within the limit price, so size costs
 * more per share. Each order is one transaction: the order row (unique per client order id, so a
 * retried placement returns the first result), then collateral and shares moved by conditional writes.
 * Orders of one account are serialised on its account row.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { paperAccounts, paperHoldings, paperOrders } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { costToBuy, proceedsOfSale, type BookLevel, type VenueRules } from '../valuation/index.ts';
import type { MarketableOrder, OrderBook, VenueOrder } from './venue.ts';

type OrderRow = typeof paperOrders.$inferSelect;

const toVenueOrder = (row: OrderRow): VenueOrder => ({
  venueOrderId: row.id,
  clientOrderId: row.clientOrderId,
  tokenId: row.tokenId,
  side: row.side,
  status: row.status,
  requestedMicros: row.requestedMicros,
  filledMicros: row.filledMicros,
  notionalMicros: row.notionalMicros,
  feesMicros: 0,
  reason: row.reason,
});

export async function ensurePaperAccount(db: Db, accountKey: string, startingMicros: number) {
  await db.insert(paperAccounts).values({ accountKey, collateralMicros: startingMicros }).onConflictDoNothing({ target: paperAccounts.accountKey });
}

export async function paperCollateral(db: Db, accountKey: string): Promise<number> {
  const [row] = await db.select({ collateral: paperAccounts.collateralMicros }).from(paperAccounts).where(eq(paperAccounts.accountKey, accountKey));
  return row?.collateral ?? 0;
}

export async function paperTokenBalances(db: Db, accountKey: string, tokenIds: string[]): Promise<Map<string, number>> {
  const rows = tokenIds.length
    ? await db
        .select({ tokenId: paperHoldings.tokenId, shares: paperHoldings.sharesMicros })
        .from(paperHoldings)
        .where(and(eq(paperHoldings.accountKey, accountKey), inArray(paperHoldings.tokenId, tokenIds)))
    : [];
  const held = new Map(rows.map((r) => [r.tokenId, r.shares]));
  return new Map(tokenIds.map((id) => [id, held.get(id) ?? 0]));
}

/** Shares fillable now within the limit price, and the levels to fill them from. */
function fillable(book: OrderBook, order: MarketableOrder): { levels: BookLevel[]; shares: number } {
  const levels = order.side === 'BUY' ? book.asks.filter((l) => l.priceMicros <= order.limitPriceMicros) : book.bids.filter((l) => l.priceMicros >= order.limitPriceMicros);
  const available = levels.reduce((sum, l) => sum + l.sizeMicros, 0);
  return { levels, shares: Math.min(available, order.sharesMicros) };
}

export async function placePaperOrder(db: Db, accountKey: string, book: OrderBook, order: MarketableOrder, rules: VenueRules): Promise<VenueOrder> {
  return db.transaction(async (tx) => {
    // Every order of an account takes the account row first, so buys (account → holding) and sells
    // (holding → account) never lock in opposite orders and deadlock each other.
    await tx.select({ key: paperAccounts.accountKey }).from(paperAccounts).where(eq(paperAccounts.accountKey, accountKey)).for('update');
    const [existing] = await tx
      .select()
      .from(paperOrders)
      .where(and(eq(paperOrders.accountKey, accountKey), eq(paperOrders.clientOrderId, order.clientOrderId)));
    if (existing) return toVenueOrder(existing);

    const base = { id: newId('ord'), accountKey, clientOrderId: order.clientOrderId, tokenId: order.tokenId, side: order.side, requestedMicros: order.sharesMicros };
    const reject = async (reason: string) => {
      const [row] = await tx.insert(paperOrders).values({ ...base, filledMicros: 0, notionalMicros: 0, status: 'REJECTED', reason }).returning();
      return toVenueOrder(row!);
    };
    const onGrid = order.limitPriceMicros % book.tickMicros === 0 && order.limitPriceMicros > 0 && order.limitPriceMicros < 1_000_000;
    if (!onGrid || order.sharesMicros <= 0 || order.sharesMicros % rules.shareStepMicros !== 0) return reject('invalid');
    if (order.sharesMicros < rules.minOrderMicros) return reject('below-minimum');

    const { levels, shares } = fillable(book, order);
    if (shares === 0 || (order.timeInForce === 'FOK' && shares < order.sharesMicros)) return reject('no-liquidity');

    if (order.side === 'BUY') {
      const cost = costToBuy(levels, shares)!;
      const debited = await tx
        .update(paperAccounts)
        .set({ collateralMicros: sql`${paperAccounts.collateralMicros} - ${cost}` })
        .where(and(eq(paperAccounts.accountKey, accountKey), sql`${paperAccounts.collateralMicros} >= ${cost}`))
        .returning({ accountKey: paperAccounts.accountKey });
      if (!debited.length) return reject('insufficient-balance');
      await tx
        .insert(paperHoldings)
        .values({ accountKey, tokenId: order.tokenId, sharesMicros: shares })
        .onConflictDoUpdate({ target: [paperHoldings.accountKey, paperHoldings.tokenId], set: { sharesMicros: sql`${paperHoldings.sharesMicros} + ${shares}` } });
      const [row] = await tx.insert(paperOrders).values({ ...base, filledMicros: shares, notionalMicros: cost, status: 'MATCHED' }).returning();
      return toVenueOrder(row!);
    }

    const taken = await tx
      .update(paperHoldings)
      .set({ sharesMicros: sql`${paperHoldings.sharesMicros} - ${shares}` })
      .where(and(eq(paperHoldings.accountKey, accountKey), eq(paperHoldings.tokenId, order.tokenId), sql`${paperHoldings.sharesMicros} >= ${shares}`))
      .returning({ tokenId: paperHoldings.tokenId });
    if (!taken.length) return reject('insufficient-shares');
    const { proceeds } = proceedsOfSale(levels, shares);
    await tx
      .update(paperAccounts)
      .set({ collateralMicros: sql`${paperAccounts.collateralMicros} + ${proceeds}` })
      .where(eq(paperAccounts.accountKey, accountKey));
    const [row] = await tx.insert(paperOrders).values({ ...base, filledMicros: shares, notionalMicros: proceeds, status: 'MATCHED' }).returning();
    return toVenueOrder(row!);
  });
}

export async function findPaperOrder(db: Db, accountKey: string, clientOrderId: string): Promise<VenueOrder | null> {
  const [row] = await db.select().from(paperOrders).where(and(eq(paperOrders.accountKey, accountKey), eq(paperOrders.clientOrderId, clientOrderId)));
  return row ? toVenueOrder(row) : null;
}

/**
 * Paper orders fill or fail at once, so only a PENDING one (never created here) could be cancelled.
 * Cancelling an order the venue never saw leaves a CANCELLED record under its client order id, so
 * the order can never be placed afterwards (a late delivery of a message the caller gave up on).
 */
export async function cancelPaperOrder(db: Db, accountKey: string, clientOrderId: string): Promise<VenueOrder | null> {
  const [row] = await db
    .update(paperOrders)
    .set({ status: 'CANCELLED' })
    .where(and(eq(paperOrders.accountKey, accountKey), eq(paperOrders.clientOrderId, clientOrderId), eq(paperOrders.status, 'PENDING')))
    .returning();
  if (row) return toVenueOrder(row);
  await db
    .insert(paperOrders)
    .values({ id: newId('ord'), accountKey, clientOrderId, tokenId: '', side: 'BUY', requestedMicros: 0, filledMicros: 0, notionalMicros: 0, status: 'CANCELLED', reason: 'cancelled-before-placement' })
    .onConflictDoNothing();
  return findPaperOrder(db, accountKey, clientOrderId);
}

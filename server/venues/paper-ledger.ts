/**
 * The paper venue's trading: marketable orders filled against the paper books, settled in the paper
 * ledger (db/tables/paper.ts). A fill walks the book's levels within the limit price, so size costs
 * more per share. Each order is one call of one database function (the order row, unique per client
 * order id, so a retried placement returns the first result; collateral and shares moved by
 * conditional writes), and the orders an account sends together are one statement. Orders of one
 * account are serialised on its account row. A paper account is its owner's,
 * (account id, user id): every statement here filters by both.
 */
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { prepared, preparedSql } from '../../db/prepared.ts';
import { paperAccounts, paperHoldings, paperOrders, paperPayouts } from '../../db/schema.ts';
import { newId } from '../lib/ids.ts';
import { MICROS_PER_USD } from '../lib/money.ts';
import { costToBuy, proceedsOfSale, type BookLevel, type VenueRules } from '../valuation/index.ts';
import type { MarketableOrder, OrderBook, Redemption, VenueOrder, VenueOwner } from './venue.ts';

type OrderRow = typeof paperOrders.$inferSelect;
/** An order row from drizzle, or from a hand-written statement (bigint columns as text on PostgreSQL). */
type OrderFields = Pick<OrderRow, 'id' | 'clientOrderId' | 'tokenId' | 'side' | 'status' | 'reason'> &
  Record<'requestedMicros' | 'filledMicros' | 'notionalMicros', number | string | bigint>;

const toVenueOrder = (row: OrderFields): VenueOrder => ({
  venueOrderId: row.id,
  clientOrderId: row.clientOrderId,
  tokenId: row.tokenId,
  side: row.side,
  status: row.status,
  requestedMicros: Number(row.requestedMicros),
  filledMicros: Number(row.filledMicros),
  notionalMicros: Number(row.notionalMicros),
  feesMicros: 0,
  reason: row.reason,
});

type OwnedTable = typeof paperAccounts | typeof paperHoldings | typeof paperOrders;
const ownedBy = (table: OwnedTable, owner: VenueOwner): SQL => and(eq(table.accountId, owner.accountId), eq(table.userId, owner.userId))!;

export async function ensurePaperAccount(db: Db, owner: VenueOwner, startingMicros: number) {
  await db
    .insert(paperAccounts)
    .values({ accountId: owner.accountId, userId: owner.userId, collateralMicros: startingMicros })
    .onConflictDoNothing({ target: [paperAccounts.accountId, paperAccounts.userId] });
}

/** The owner's paper account as new: the starting collateral, no holdings, orders or payouts (test mode's reset). */
export async function resetPaperAccount(db: Db, owner: VenueOwner, startingMicros: number) {
  await db.transaction(async (tx) => {
    for (const table of [paperHoldings, paperOrders, paperPayouts]) await tx.delete(table).where(and(eq(table.accountId, owner.accountId), eq(table.userId, owner.userId)));
    await tx
      .insert(paperAccounts)
      .values({ accountId: owner.accountId, userId: owner.userId, collateralMicros: startingMicros })
      .onConflictDoUpdate({ target: [paperAccounts.accountId, paperAccounts.userId], set: { collateralMicros: startingMicros } });
  });
}

export async function paperCollateral(db: Db, owner: VenueOwner): Promise<number> {
  // Prepared: every buy checks the balance first.
  const statement = prepared(db, 'paper_collateral_of', (d) =>
    d
      .select({ collateral: paperAccounts.collateralMicros })
      .from(paperAccounts)
      .where(and(eq(paperAccounts.accountId, sql.placeholder('accountId')), eq(paperAccounts.userId, sql.placeholder('userId'))))
      .prepare('paper_collateral_of'),
  );
  const [row] = await statement.execute({ accountId: owner.accountId, userId: owner.userId });
  return row?.collateral ?? 0;
}

export async function paperTokenBalances(db: Db, owner: VenueOwner, tokenIds: string[]): Promise<Map<string, number>> {
  const rows = tokenIds.length
    ? await db
        .select({ tokenId: paperHoldings.tokenId, shares: paperHoldings.sharesMicros })
        .from(paperHoldings)
        .where(and(ownedBy(paperHoldings, owner), inArray(paperHoldings.tokenId, tokenIds)))
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

/** What the book says of an order before the ledger is asked: refused (why), or the fill it gets. */
function quote(book: OrderBook, order: MarketableOrder, rules: VenueRules): { refused: string } | { shares: number; amountMicros: number } {
  const onGrid = order.limitPriceMicros % book.tickMicros === 0 && order.limitPriceMicros > 0 && order.limitPriceMicros < MICROS_PER_USD;
  if (!onGrid || order.sharesMicros <= 0 || order.sharesMicros % rules.shareStepMicros !== 0) return { refused: 'invalid' };
  if (order.sharesMicros < rules.minOrderMicros) return { refused: 'below-minimum' };
  const { levels, shares } = fillable(book, order);
  if (shares === 0 || (order.timeInForce === 'FOK' && shares < order.sharesMicros)) return { refused: 'no-liquidity' };
  return { shares, amountMicros: order.side === 'BUY' ? costToBuy(levels, shares)! : proceedsOfSale(levels, shares).proceeds };
}

/** One order to place, priced: what the book gave it (quote) and the order row's id. */
export interface PricedPaperOrder {
  order: MarketableOrder;
  book: OrderBook;
}

/**
 * Places orders of ONE paper account in one statement, in the order given: `paper_place_order`
 * (db/migrations/0029_paper_place_order.sql) per order, each call seeing what the previous ones
 * changed. Per order it is what one statement per order did: the account row locked first, an order
 * already placed under its client order id answered as it was (a retried placement), a fill moving
 * collateral and shares by conditional writes (`>=`) or the order recorded REJECTED with nothing
 * moved. An order placed concurrently under the same client order id fails the whole statement (the
 * unique index), so nothing of it happened; the caller then places the orders one by one.
 */
export async function placePaperOrders(db: Db, owner: VenueOwner, priced: PricedPaperOrder[], rules: VenueRules): Promise<Map<PricedPaperOrder, VenueOrder>> {
  const statement = preparedSql<OrderFields & { ord: number }>(
    db,
    'place_paper_orders',
    sql`
      select o.ord, r.* from jsonb_to_recordset(${sql.placeholder('orders')}::jsonb)
        as o(ord int, client_order_id text, token_id text, side text, requested bigint, refused text, shares bigint, amount bigint, id text)
       cross join lateral paper_place_order(${sql.placeholder('accountId')}::text, ${sql.placeholder('userId')}::text, o.client_order_id,
             o.token_id, o.side, o.requested, o.refused, o.shares, o.amount, o.id) r
       order by o.ord`,
  );
  const rows = await statement.execute({
    accountId: owner.accountId,
    userId: owner.userId,
    orders: JSON.stringify(
      priced.map(({ order, book }, ord) => {
        const quoted = quote(book, order, rules);
        return {
          ord,
          client_order_id: order.clientOrderId,
          token_id: order.tokenId,
          side: order.side,
          requested: order.sharesMicros,
          refused: 'refused' in quoted ? quoted.refused : null,
          shares: 'refused' in quoted ? 0 : quoted.shares,
          amount: 'refused' in quoted ? 0 : quoted.amountMicros,
          id: newId('ord'),
        };
      }),
    ),
  });
  if (rows.length !== priced.length) throw new Error(`the paper account of user ${owner.userId} in account ${owner.accountId} does not exist`);
  return new Map(rows.map((row) => [priced[Number(row.ord)]!, toVenueOrder(row)]));
}

export async function findPaperOrder(db: Db, owner: VenueOwner, clientOrderId: string): Promise<VenueOrder | null> {
  const [row] = await db.select().from(paperOrders).where(and(ownedBy(paperOrders, owner), eq(paperOrders.clientOrderId, clientOrderId)));
  return row ? toVenueOrder(row) : null;
}

/**
 * Paper orders fill or fail at once, so only a PENDING one (never created here) could be cancelled.
 * Cancelling an order the venue never saw leaves a CANCELLED record under its client order id, so
 * the order can never be placed afterwards (a late delivery of a message the caller gave up on).
 */
export async function cancelPaperOrder(db: Db, owner: VenueOwner, clientOrderId: string): Promise<VenueOrder | null> {
  const [row] = await db
    .update(paperOrders)
    .set({ status: 'CANCELLED' })
    .where(and(ownedBy(paperOrders, owner), eq(paperOrders.clientOrderId, clientOrderId), eq(paperOrders.status, 'PENDING')))
    .returning();
  if (row) return toVenueOrder(row);
  await db
    .insert(paperOrders)
    .values({ id: newId('ord'), accountId: owner.accountId, userId: owner.userId, clientOrderId, tokenId: '', side: 'BUY', requestedMicros: 0, filledMicros: 0, notionalMicros: 0, status: 'CANCELLED', reason: 'cancelled-before-placement' })
    .onConflictDoNothing();
  return findPaperOrder(db, owner, clientOrderId);
}

/**
 * Pays a settled position (server/trading/settlement.ts) in one transaction, at most once per
 * settlement id: the payout row is inserted first (its primary key is the settlement), and only the
 * transaction that inserted it takes the position's tokens (winners redeemed, losers worthless) and
 * credits the proceeds. A second payment of the same settlement (a retry, another instance) finds
 * the row and moves nothing. Returns whether this call paid.
 */
export async function payPaperSettlement(db: Db, redemption: Redemption): Promise<boolean> {
  const { owner } = redemption;
  return db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(paperPayouts)
      .values({ accountId: owner.accountId, userId: owner.userId, settlementId: redemption.settlementId, amountMicros: redemption.payoutMicros })
      .onConflictDoNothing()
      .returning({ id: paperPayouts.settlementId });
    if (!inserted) return false;
    for (const held of redemption.holdings) {
      await tx
        .update(paperHoldings)
        .set({ sharesMicros: sql`greatest(${paperHoldings.sharesMicros} - ${held.sharesMicros}, 0)` })
        .where(and(ownedBy(paperHoldings, owner), eq(paperHoldings.tokenId, held.tokenId)));
    }
    await tx
      .update(paperAccounts)
      .set({ collateralMicros: sql`${paperAccounts.collateralMicros} + ${redemption.payoutMicros}` })
      .where(ownedBy(paperAccounts, owner));
    return true;
  });
}

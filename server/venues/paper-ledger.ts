/**
 * The paper venue's trading: marketable orders filled against the paper books, settled in the paper
 * ledger (db/tables/paper.ts). A fill walks the book's levels within the limit price, so size costs
 * more per share. Each order is one statement: the order row (unique per client order id, so a
 * retried placement returns the first result), and collateral and shares moved by conditional writes.
 * Orders of one account are serialised on its account row. A paper account is its owner's,
 * (account id, user id): every statement here filters by both.
 */
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
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

export async function paperCollateral(db: Db, owner: VenueOwner): Promise<number> {
  const [row] = await db.select({ collateral: paperAccounts.collateralMicros }).from(paperAccounts).where(ownedBy(paperAccounts, owner));
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

/**
 * Places one order on the ledger in ONE statement (it was a seven-round-trip transaction):
 *  - the account row is locked first, so buys (account → holding) and sells (holding → account) of one
 *    account never lock in opposite orders and deadlock, and its orders run one after another;
 *  - an order already placed under this client order id is answered as it was (a retried placement);
 *    one placed concurrently makes the insert fail on the unique index, which rolls back the whole
 *    statement (no money moves) — the caller then reads the winner's result;
 *  - a fill moves collateral and shares by conditional writes (`>=`), and when the condition fails
 *    the order is recorded REJECTED (insufficient balance or shares) with nothing moved.
 */
export async function placePaperOrder(db: Db, owner: VenueOwner, book: OrderBook, order: MarketableOrder, rules: VenueRules): Promise<VenueOrder> {
  const statement = preparedSql<OrderFields>(
    db,
    'place_paper_order',
    sql`
      with account as (
        select account_id, user_id from paper_accounts
         where account_id = ${sql.placeholder('accountId')}::text and user_id = ${sql.placeholder('userId')}::text for update
      ), earlier as (
        select id, client_order_id as "clientOrderId", token_id as "tokenId", side, status, requested_micros as "requestedMicros",
               filled_micros as "filledMicros", notional_micros as "notionalMicros", reason
          from paper_orders
         where account_id = ${sql.placeholder('accountId')}::text and user_id = ${sql.placeholder('userId')}::text
           and client_order_id = ${sql.placeholder('clientOrderId')}::text
      ), proceed as (
        select account_id, user_id from account where not exists (select 1 from earlier)
      ), debit as (
        update paper_accounts a set collateral_micros = a.collateral_micros - ${sql.placeholder('amount')}::bigint
          from proceed
         where ${sql.placeholder('refused')}::text is null and ${sql.placeholder('side')}::text = 'BUY'
           and a.account_id = proceed.account_id and a.user_id = proceed.user_id and a.collateral_micros >= ${sql.placeholder('amount')}::bigint
        returning a.account_id, a.user_id
      ), bought as (
        insert into paper_holdings (account_id, user_id, token_id, shares_micros)
        select account_id, user_id, ${sql.placeholder('tokenId')}::text, ${sql.placeholder('shares')}::bigint from debit
        on conflict (account_id, user_id, token_id) do update set shares_micros = paper_holdings.shares_micros + excluded.shares_micros
        returning account_id
      ), taken as (
        update paper_holdings h set shares_micros = h.shares_micros - ${sql.placeholder('shares')}::bigint
          from proceed
         where ${sql.placeholder('refused')}::text is null and ${sql.placeholder('side')}::text = 'SELL'
           and h.account_id = proceed.account_id and h.user_id = proceed.user_id and h.token_id = ${sql.placeholder('tokenId')}::text
           and h.shares_micros >= ${sql.placeholder('shares')}::bigint
        returning h.account_id, h.user_id
      ), sold as (
        update paper_accounts a set collateral_micros = a.collateral_micros + ${sql.placeholder('amount')}::bigint
          from taken
         where a.account_id = taken.account_id and a.user_id = taken.user_id
        returning a.account_id
      ), outcome as (
        select case when ${sql.placeholder('refused')}::text is not null then ${sql.placeholder('refused')}::text
                    when exists (select 1 from debit) or exists (select 1 from taken) then null
                    when ${sql.placeholder('side')}::text = 'BUY' then 'insufficient-balance'
                    else 'insufficient-shares' end as reason
      ), placed as (
        insert into paper_orders (id, account_id, user_id, client_order_id, token_id, side, requested_micros, filled_micros, notional_micros, status, reason)
        select ${sql.placeholder('id')}::text, proceed.account_id, proceed.user_id, ${sql.placeholder('clientOrderId')}::text, ${sql.placeholder('tokenId')}::text,
               ${sql.placeholder('side')}::text, ${sql.placeholder('requested')}::bigint,
               case when outcome.reason is null then ${sql.placeholder('shares')}::bigint else 0 end,
               case when outcome.reason is null then ${sql.placeholder('amount')}::bigint else 0 end,
               case when outcome.reason is null then 'MATCHED' else 'REJECTED' end, outcome.reason
          from proceed, outcome
        returning id, client_order_id as "clientOrderId", token_id as "tokenId", side, status, requested_micros as "requestedMicros",
               filled_micros as "filledMicros", notional_micros as "notionalMicros", reason
      )
      select * from placed union all select * from earlier`,
  );
  const quoted = quote(book, order, rules);
  const [row] = await statement.execute({
    accountId: owner.accountId,
    userId: owner.userId,
    clientOrderId: order.clientOrderId,
    tokenId: order.tokenId,
    side: order.side,
    requested: order.sharesMicros,
    refused: 'refused' in quoted ? quoted.refused : null,
    shares: 'refused' in quoted ? 0 : quoted.shares,
    amount: 'refused' in quoted ? 0 : quoted.amountMicros,
    id: newId('ord'),
  });
  if (!row) throw new Error(`the paper account of user ${owner.userId} in account ${owner.accountId} does not exist`);
  return toVenueOrder(row);
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

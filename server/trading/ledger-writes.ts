/**
 * Writes the trading records: the ledger's row types and the only functions that change orders, trades
 * and holdings (reads live in queries.ts, API answers in answers.ts). Two rules keep them true under
 * concurrency and faults:
 *  - intent first: a buy or sell writes its orders (PENDING), and for a sale reserves the shares,
 *    before the venue is called;
 *  - an order's outcome is applied by the one conditional update that moves it out of PENDING, in the
 *    same transaction as its trade and the holdings change, so it is applied exactly once however many
 *    paths (the request, orders/sync, a retry) learn it.
 */
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { events, orders, positionBands, positions, type OrderPurpose } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import type { Side } from '../valuation/index.ts';
import type { OrderSide, VenueOrder, VenueOrderStatus } from '../venues/venue.ts';
import type { TradingUser } from './settings.ts';
import { accountEventCtes, emitPositionStatus, orderEventRows } from '../notifications/announce.ts';

export type PositionRow = typeof positions.$inferSelect;
export type PositionBandRow = typeof positionBands.$inferSelect;
export type OrderRow = typeof orders.$inferSelect;

export interface NewOrder {
  bandIndex: number;
  bandId: string;
  side: OrderSide;
  limitPriceMicros: number;
  requestedMicros: number;
  /** Refused before it is sent (e.g. a sale into a book without bids): recorded, never placed. */
  refusedLocally?: string;
}

export interface BuyIntent {
  position: { id: string; eventId: string; side: Side; floorL: number; floorS: number; unitsMicros: number };
  bands: { bandIndex: number; bandId: string; targetMicros: number }[];
  orders: NewOrder[];
}

const orderValues = (user: TradingUser, positionId: string, operationId: string, purpose: OrderPurpose, o: NewOrder) => ({
  id: newId('ord'),
  accountId: user.accountId,
  userId: user.userId,
  positionId,
  operationId,
  purpose,
  bandIndex: o.bandIndex,
  bandId: o.bandId,
  side: o.side,
  limitPriceMicros: o.limitPriceMicros,
  requestedMicros: o.requestedMicros,
  status: 'PENDING' as const,
});

/**
 * The position (PENDING) and its BUY orders, in one transaction, before any order is sent — only
 * while its event is open and listed, read under a share lock on the event's row: an operator hiding
 * the event (listing.ts, which locks the row for update and then counts positions) or resolving it
 * either waits for this buy and sees its position, or goes first and this buy is refused (422).
 */
export async function recordBuyIntent(db: Db, user: TradingUser, intent: BuyIntent): Promise<{ operationId: string; orders: OrderRow[] }> {
  const operationId = newId('op');
  const written = await db.transaction(async (tx) => {
    const [event] = await tx.select({ status: events.status, listing: events.listing }).from(events).where(eq(events.id, intent.position.eventId)).for('share');
    const state = event && (event.listing === 'listed' ? event.status : event.listing);
    if (state !== 'open') throw new ApiError('ORDER_REJECTED', `eventId: ${intent.position.eventId} is ${state ?? 'gone'}; buys are accepted while an event is open`);
    await tx.insert(positions).values({ ...intent.position, ...user, status: 'pending' });
    await tx.insert(positionBands).values(intent.bands.map((b) => ({ positionId: intent.position.id, ...b })));
    return tx
      .insert(orders)
      .values(intent.orders.map((o) => orderValues(user, intent.position.id, operationId, 'open', o)))
      .returning();
  });
  return { operationId, orders: written };
}

/**
 * Reserves shares for SELL orders and records the orders, in one transaction that locks the position
 * row, so concurrent sales of one position are planned one after another against what is left.
 * `plan` sees the position and its bands as they are inside the lock and may throw an ApiError.
 */
export async function recordSaleIntent(
  db: Db,
  user: TradingUser,
  positionId: string,
  purpose: Exclude<OrderPurpose, 'open'>,
  plan: (position: PositionRow, bands: PositionBandRow[]) => NewOrder[],
): Promise<{ operationId: string; orders: (OrderRow & { refusedLocally?: string })[] }> {
  const operationId = newId('op');
  return db.transaction(async (tx) => {
    const [position] = await tx.select().from(positions).where(and(eq(positions.id, positionId), eq(positions.accountId, user.accountId), eq(positions.userId, user.userId))).for('update');
    if (!position) throw new ApiError('POSITION_NOT_FOUND', `positionId: no position ${positionId}`);
    const bands = await tx.select().from(positionBands).where(eq(positionBands.positionId, positionId)).orderBy(asc(positionBands.bandIndex));
    const planned = plan(position, bands);
    const written: (OrderRow & { refusedLocally?: string })[] = [];
    for (const order of planned) {
      const reserved = await tx
        .update(positionBands)
        .set({ reservedMicros: sql`${positionBands.reservedMicros} + ${order.requestedMicros}` })
        .where(
          and(
            eq(positionBands.positionId, positionId),
            eq(positionBands.bandIndex, order.bandIndex),
            sql`${positionBands.sharesMicros} - ${positionBands.reservedMicros} >= ${order.requestedMicros}`,
          ),
        )
        .returning({ bandIndex: positionBands.bandIndex });
      // The row lock makes this unreachable; it stays as the guard that shares are never sold twice.
      if (!reserved.length) throw new Error(`sale of position ${positionId} band ${order.bandIndex} exceeds its free shares`);
      const [row] = await tx.insert(orders).values(orderValues(user, positionId, operationId, purpose, order)).returning();
      written.push({ ...row!, refusedLocally: order.refusedLocally });
    }
    return { operationId, orders: written };
  });
}

export interface OrderOutcome {
  status: VenueOrderStatus;
  filledMicros: number;
  notionalMicros: number;
  feesMicros: number;
  reason: string | null;
  venueOrderId?: string | null;
  txHash?: string | null;
}

export const outcomeOf = (v: VenueOrder): OrderOutcome => ({
  status: v.status,
  filledMicros: v.filledMicros,
  notionalMicros: v.notionalMicros,
  feesMicros: v.feesMicros,
  reason: v.reason,
  venueOrderId: v.venueOrderId,
  txHash: v.txHash ?? null,
});

export const refusal = (reason: string): OrderOutcome => ({ status: 'REJECTED', filledMicros: 0, notionalMicros: 0, feesMicros: 0, reason });

/** The reason an order is closed with when the venue's report of it cannot be accounted for. */
const IMPLAUSIBLE_REPORT = 'implausible-venue-report';

interface AppliedRow {
  applied: boolean;
}

/**
 * Moves an order out of PENDING with its final outcome and, in the same statement, records its
 * trade and changes the position's holdings. Returns false when the order had already left PENDING
 * (someone else applied it) or the venue still reports it PENDING.
 *
 * One statement, so one round trip and one atomic commit (it was a seven-round-trip transaction, a
 * third of a buy's database time). The band row is read `FOR UPDATE` in a subquery of the UPDATE that
 * changes it: under READ COMMITTED that subquery waits for a concurrent sale of the same band and
 * then reads its committed row, so the cost basis released by a sale is computed from the shares and
 * cost the update applies to (the same guarantee the locked read inside a transaction gave).
 */
export async function applyOrderOutcome(db: Db, orderId: string, reported: OrderOutcome): Promise<boolean> {
  if (reported.status === 'PENDING') return false;
  // A venue report we cannot account for (negative or unsafe amounts here, more shares than asked
  // below, in the statement) is not applied as a fill: the order is closed as REJECTED, and
  // positions/sync shows any tokens it did deliver.
  const sane = (n: number) => Number.isSafeInteger(n) && n >= 0;
  const saneReport = sane(reported.filledMicros) && sane(reported.notionalMicros) && sane(reported.feesMicros);
  const outcome = saneReport ? reported : { ...refusal(IMPLAUSIBLE_REPORT), venueOrderId: reported.venueOrderId };
  const statement = preparedSql<AppliedRow>(
    db,
    'apply_order_outcome',
    sql`
      with requested as (
        select id, (${sql.placeholder('filled')}::bigint <= requested_micros) as plausible
          from orders where id = ${sql.placeholder('orderId')}::text
      ), applied as (
        update orders o
           set status = case when r.plausible then ${sql.placeholder('status')}::text else 'REJECTED' end,
               filled_micros = case when r.plausible then ${sql.placeholder('filled')}::bigint else 0 end,
               notional_micros = case when r.plausible then ${sql.placeholder('notional')}::bigint else 0 end,
               fees_micros = case when r.plausible then ${sql.placeholder('fees')}::bigint else 0 end,
               reason = case when r.plausible then ${sql.placeholder('reason')}::text else ${sql.placeholder('implausibleReason')}::text end,
               venue_order_id = ${sql.placeholder('venueOrderId')}::text,
               tx_hash = case when r.plausible then ${sql.placeholder('txHash')}::text end,
               matched_at = case when r.plausible and ${sql.placeholder('filled')}::bigint > 0 then now() end,
               updated_at = now()
          from requested r
         where o.id = r.id and o.status = 'PENDING'
        returning o.id, o.account_id, o.user_id, o.position_id, o.band_index, o.band_id, o.side,
                  o.requested_micros, o.filled_micros, o.notional_micros, o.fees_micros,
                  o.status, o.reason, o.purpose, o.limit_price_micros
      ), band as (
        update position_bands b
           set shares_micros = b.shares_micros + case when a.side = 'BUY' then a.filled_micros else -a.filled_micros end,
               bought_micros = b.bought_micros + case when a.side = 'BUY' then a.filled_micros else 0 end,
               entry_cost_micros = b.entry_cost_micros + case when a.side = 'BUY' then a.notional_micros + a.fees_micros else 0 end,
               reserved_micros = b.reserved_micros - case when a.side = 'SELL' then a.requested_micros else 0 end,
               cost_micros = case when a.side = 'BUY' then b.cost_micros + a.notional_micros + a.fees_micros
                                  else b.cost_micros - locked.released end
          from applied a,
               lateral (
                 -- The cost basis leaves with the shares, in proportion (all of it with the last share).
                 select case when a.side = 'BUY' then 0
                             when a.filled_micros >= l.shares_micros then l.cost_micros
                             else div(l.cost_micros::numeric * a.filled_micros, nullif(l.shares_micros, 0))::bigint end as released
                   from position_bands l
                  where l.position_id = a.position_id and l.band_index = a.band_index
                    for update
               ) locked
         where b.position_id = a.position_id and b.band_index = a.band_index
        returning locked.released
      ), trade as (
        insert into trades (id, account_id, user_id, position_id, event_id, order_id, band_id, side, action,
                            shares_micros, amount_micros, fees_micros, realized_pnl_micros)
        select ${sql.placeholder('tradeId')}::text, a.account_id, a.user_id, a.position_id, p.event_id, a.id, a.band_id,
               p.side, a.side, a.filled_micros, a.notional_micros, a.fees_micros,
               case when a.side = 'SELL' then a.notional_micros - a.fees_micros - band.released else 0 end
          from applied a join positions p on p.id = a.position_id, band
         where a.filled_micros > 0
      ),
      -- order.filled / order.rejected, committed with the outcome it announces.
      ${accountEventCtes('order', orderEventRows(sql`${sql.placeholder('eventId')}::text`))}
      select exists (select 1 from applied) as applied`,
  );
  const [row] = await statement.execute({
    orderId,
    status: outcome.status,
    filled: outcome.filledMicros,
    notional: outcome.notionalMicros,
    fees: outcome.feesMicros,
    reason: outcome.reason,
    venueOrderId: outcome.venueOrderId ?? null,
    txHash: outcome.txHash ?? null,
    tradeId: newId('trd'),
    implausibleReason: IMPLAUSIBLE_REPORT,
    eventId: newId('evt'),
  });
  return row?.applied === true;
}

export async function markBuyFailed(db: Db, positionId: string, reason: string) {
  await db
    .update(positions)
    .set({ buyFailed: true, failureReason: sql`coalesce(${positions.failureReason}, ${reason})`, updatedAt: sql`now()` })
    .where(eq(positions.id, positionId));
}

/**
 * Once no order of the position is PENDING, its status follows its holdings: open while it holds
 * shares, closed when it holds none. Returns the status after the call.
 */
export async function settleStatus(db: Db, positionId: string): Promise<PositionRow['status']> {
  return db.transaction(async (tx) => {
    const [position] = await tx.select({ status: positions.status }).from(positions).where(eq(positions.id, positionId)).for('update');
    const [pending] = await tx.select({ n: count() }).from(orders).where(and(eq(orders.positionId, positionId), eq(orders.status, 'PENDING')));
    if (!position || pending!.n > 0) return position?.status ?? 'closed';
    const [held] = await tx
      .select({ shares: sql<string>`coalesce(sum(${positionBands.sharesMicros}), 0)` })
      .from(positionBands)
      .where(eq(positionBands.positionId, positionId));
    const next = Number(held!.shares) > 0 ? 'open' : 'closed';
    if (next !== position.status) {
      await tx
        .update(positions)
        .set({ status: next, closedAt: next === 'closed' ? sql`now()` : null, updatedAt: sql`now()` })
        .where(eq(positions.id, positionId));
      await emitPositionStatus(tx, positionId, next === 'open' ? 'position.opened' : 'position.closed');
    }
    return next;
  });
}

/**
 * Closes an open position whose tokens left the wallet (positions/sync), unless a sale is pending.
 * No trade is invented (what the tokens fetched, if anything, is unknown): holdings and basis are cleared.
 */
export async function closeAsGone(db: Db, positionId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    // Lock first, then look for pending sales in a statement of its own: a sale recorded while we
    // waited for the lock is then seen (a condition inside the UPDATE would use the older snapshot).
    const [position] = await tx.select({ status: positions.status }).from(positions).where(eq(positions.id, positionId)).for('update');
    if (position?.status !== 'open') return false;
    const [pending] = await tx.select({ n: count() }).from(orders).where(and(eq(orders.positionId, positionId), eq(orders.status, 'PENDING')));
    if (pending!.n > 0) return false;
    await tx
      .update(positions)
      .set({ status: 'closed', closeReason: 'tokens-gone', closedAt: sql`now()`, updatedAt: sql`now()` })
      .where(eq(positions.id, positionId));
    await tx.update(positionBands).set({ sharesMicros: 0, reservedMicros: 0, costMicros: 0 }).where(eq(positionBands.positionId, positionId));
    await emitPositionStatus(tx, positionId, 'position.closed');
    return true;
  });
}

export async function loadPosition(db: Db, positionId: string): Promise<{ position: PositionRow; bands: PositionBandRow[]; orders: OrderRow[] }> {
  const [position] = await db.select().from(positions).where(eq(positions.id, positionId));
  if (!position) throw new Error(`position ${positionId} vanished`);
  const [bands, orderRows] = await Promise.all([
    db.select().from(positionBands).where(eq(positionBands.positionId, positionId)).orderBy(asc(positionBands.bandIndex)),
    db.select().from(orders).where(eq(orders.positionId, positionId)).orderBy(asc(orders.createdAt), asc(orders.bandIndex)),
  ]);
  return { position, bands, orders: orderRows };
}

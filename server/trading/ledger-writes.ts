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
import { preparedSql, tableRows } from '../../db/prepared.ts';
import { orders, positionBands, positions, type OrderPurpose } from '../../db/schema.ts';
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
 * The position (PENDING), its bands and its BUY orders, in one statement (one atomic commit), before
 * any order is sent — only while its event is open and listed, read under a share lock on the event's
 * row: an operator hiding the event (listing.ts, which locks the row for update and then counts
 * positions) or resolving it either waits for this buy and sees its position, or goes first and this
 * buy is refused (422). It was a six-round-trip transaction.
 */
export async function recordBuyIntent(db: Db, user: TradingUser, intent: BuyIntent): Promise<{ operationId: string; orders: OrderRow[] }> {
  const operationId = newId('op');
  const p = intent.position;
  const rows = await preparedSql<Record<string, unknown> & { state: string | null }>(db, 'record_buy_intent', BUY_INTENT_SQL).execute({
    eventId: p.eventId,
    positionId: p.id,
    accountId: user.accountId,
    userId: user.userId,
    side: p.side,
    floorL: p.floorL,
    floorS: p.floorS,
    units: p.unitsMicros,
    operationId,
    bands: JSON.stringify(intent.bands.map((b) => ({ band_index: b.bandIndex, band_id: b.bandId, target_micros: b.targetMicros }))),
    orders: JSON.stringify(
      intent.orders.map((o, ord) => ({ ord, id: newId('ord'), band_index: o.bandIndex, band_id: o.bandId, side: o.side, limit_price_micros: o.limitPriceMicros, requested_micros: o.requestedMicros })),
    ),
  });
  const state = rows[0]?.state ?? null;
  if (state !== 'open') throw new ApiError('ORDER_REJECTED', `eventId: ${p.eventId} is ${state ?? 'gone'}; buys are accepted while an event is open`);
  return { operationId, orders: tableRows(orders, rows.filter((r) => r.id != null)) };
}

const BUY_INTENT_SQL = sql`
  with event as (
    select case when listing = 'listed' then status else listing end as state
      from events where id = ${sql.placeholder('eventId')}::text
       for share
  ), opened as (
    insert into positions (id, account_id, user_id, event_id, side, floor_l, floor_s, units_micros, status)
    select ${sql.placeholder('positionId')}::text, ${sql.placeholder('accountId')}::text, ${sql.placeholder('userId')}::text,
           ${sql.placeholder('eventId')}::text, ${sql.placeholder('side')}::text, ${sql.placeholder('floorL')}::double precision,
           ${sql.placeholder('floorS')}::double precision, ${sql.placeholder('units')}::bigint, 'pending'
      from event where state = 'open'
    returning id, account_id, user_id
  ), bands as (
    insert into position_bands (position_id, band_index, band_id, target_micros)
    select opened.id, b.band_index, b.band_id, b.target_micros
      from opened, jsonb_to_recordset(${sql.placeholder('bands')}::jsonb) as b(band_index int, band_id text, target_micros bigint)
  ), placed as (
    insert into orders (id, account_id, user_id, position_id, operation_id, purpose, band_index, band_id, side, limit_price_micros, requested_micros, status)
    select o.id, opened.account_id, opened.user_id, opened.id, ${sql.placeholder('operationId')}::text, 'open', o.band_index, o.band_id, o.side,
           o.limit_price_micros, o.requested_micros, 'PENDING'
      from opened, jsonb_to_recordset(${sql.placeholder('orders')}::jsonb)
        as o(ord int, id text, band_index int, band_id text, side text, limit_price_micros bigint, requested_micros bigint)
     order by o.ord
    returning *
  )
  select e.state, placed.* from (select (select state from event) as state) e left join placed on true`;

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

/** One order's outcome to apply: the order (its position and band decide which statement takes it) and what the venue said. */
export interface OutcomeToApply {
  order: Pick<OrderRow, 'id' | 'positionId' | 'bandIndex'>;
  outcome: OrderOutcome;
}

/**
 * Moves orders out of PENDING with their final outcomes and, in the same statement, records their
 * trades and changes the positions' holdings. Returns the ids of the orders applied here: not those
 * that had already left PENDING (someone else applied them) or that the venue still reports PENDING.
 *
 * One statement for all the orders of a buy or a sale (one per band), so one round trip and one atomic
 * commit (it was a seven-round-trip transaction per order, then one statement per order). Orders of the
 * same band go to separate statements, one after another (an UPDATE … FROM changes a row once). The
 * band rows are locked first, in (position, band) order, so two statements on the same bands (two
 * sales of one position) wait for each other instead of deadlocking; each band row is then read
 * `FOR UPDATE` in a subquery of the UPDATE that changes it: under READ COMMITTED that subquery waits
 * for a concurrent sale of the same band and then reads its committed row, so the cost basis released
 * by a sale is computed from the shares and cost the update applies to.
 */
export async function applyOrderOutcomes(db: Db, items: OutcomeToApply[]): Promise<Set<string>> {
  const applied = new Set<string>();
  for (const batch of distinctBands(items.filter((i) => i.outcome.status !== 'PENDING'))) {
    const rows = await preparedSql<{ id: string }>(db, 'apply_order_outcomes', APPLY_SQL).execute({
      items: JSON.stringify(
        batch.map(({ order, outcome: reported }) => {
          // A venue report we cannot account for (negative or unsafe amounts here, more shares than
          // asked in the statement) is not applied as a fill: the order is closed as REJECTED, and
          // positions/sync shows any tokens it did deliver.
          const sane = (n: number) => Number.isSafeInteger(n) && n >= 0;
          const saneReport = sane(reported.filledMicros) && sane(reported.notionalMicros) && sane(reported.feesMicros);
          const outcome = saneReport ? reported : { ...refusal(IMPLAUSIBLE_REPORT), venueOrderId: reported.venueOrderId };
          return {
            order_id: order.id,
            position_id: order.positionId,
            band_index: order.bandIndex,
            status: outcome.status,
            filled: outcome.filledMicros,
            notional: outcome.notionalMicros,
            fees: outcome.feesMicros,
            reason: outcome.reason,
            venue_order_id: outcome.venueOrderId ?? null,
            tx_hash: outcome.txHash ?? null,
            trade_id: newId('trd'),
            event_id: newId('evt'),
          };
        }),
      ),
      implausibleReason: IMPLAUSIBLE_REPORT,
    });
    for (const row of rows) applied.add(row.id);
  }
  return applied;
}

/** One order's outcome applied (applyOrderOutcomes); false when it was not PENDING any more. */
export async function applyOrderOutcome(db: Db, order: OutcomeToApply['order'], outcome: OrderOutcome): Promise<boolean> {
  return (await applyOrderOutcomes(db, [{ order, outcome }])).has(order.id);
}

/** The items in batches whose orders are distinct and touch distinct (position, band) rows, in order. */
function distinctBands(items: OutcomeToApply[]): OutcomeToApply[][] {
  const batches: { keys: Set<string>; items: OutcomeToApply[] }[] = [];
  for (const item of items) {
    const key = `${item.order.positionId}\n${item.order.bandIndex}`;
    let batch = batches.find((b) => !b.keys.has(key) && !b.items.some((i) => i.order.id === item.order.id));
    if (!batch) batches.push((batch = { keys: new Set(), items: [] }));
    batch.keys.add(key);
    batch.items.push(item);
  }
  return batches.map((b) => b.items);
}

const APPLY_SQL = sql`
  with input as (
    select * from jsonb_to_recordset(${sql.placeholder('items')}::jsonb)
      as r(order_id text, position_id text, band_index int, status text, filled bigint, notional bigint, fees bigint,
           reason text, venue_order_id text, tx_hash text, trade_id text, event_id text)
  ), band_locks as (
    -- Lock order: (position, band), whatever order the statement's plan visits them in.
    select b.position_id from position_bands b join input i on i.position_id = b.position_id and i.band_index = b.band_index
     order by b.position_id, b.band_index
       for update of b
  ), requested as materialized (
    select i.*, o.id, (i.filled <= o.requested_micros) as plausible, 'PENDING'::text as from_status
      from input i join orders o on o.id = i.order_id
     where (select count(*) from band_locks) >= 0
  ), applied as (
    -- \`o.status = r.from_status\`, not \`= 'PENDING'\`: against a constant the planner walked the partial
    -- index of every user's PENDING orders (estimated at one row; a buy's 7 orders took 5 ms of a 7 ms
    -- statement under load) instead of looking the statement's orders up by id.
    update orders o
       set status = case when r.plausible then r.status else 'REJECTED' end,
           filled_micros = case when r.plausible then r.filled else 0 end,
           notional_micros = case when r.plausible then r.notional else 0 end,
           fees_micros = case when r.plausible then r.fees else 0 end,
           reason = case when r.plausible then r.reason else ${sql.placeholder('implausibleReason')}::text end,
           venue_order_id = r.venue_order_id,
           tx_hash = case when r.plausible then r.tx_hash end,
           matched_at = case when r.plausible and r.filled > 0 then now() end,
           updated_at = now()
      from requested r
     where o.id = r.id and o.status = r.from_status
    returning o.id, o.account_id, o.user_id, o.position_id, o.band_index, o.band_id, o.side,
              o.requested_micros, o.filled_micros, o.notional_micros, o.fees_micros,
              o.status, o.reason, o.purpose, o.limit_price_micros, r.trade_id, r.event_id
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
    returning b.position_id, b.band_index, locked.released
  ), trade as (
    insert into trades (id, account_id, user_id, position_id, event_id, order_id, band_id, side, action,
                        shares_micros, amount_micros, fees_micros, realized_pnl_micros)
    select a.trade_id, a.account_id, a.user_id, a.position_id, p.event_id, a.id, a.band_id,
           p.side, a.side, a.filled_micros, a.notional_micros, a.fees_micros,
           case when a.side = 'SELL' then a.notional_micros - a.fees_micros - band.released else 0 end
      from applied a join positions p on p.id = a.position_id
      join band on band.position_id = a.position_id and band.band_index = a.band_index
     where a.filled_micros > 0
  ),
  -- order.filled / order.rejected, committed with the outcome it announces.
  ${accountEventCtes('order', orderEventRows(sql`a.event_id`))}
  select id from applied`;

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
    if (!position) return 'closed';
    // After the lock, in a statement of its own, so orders recorded while we waited are seen.
    const [state] = await tx
      .select({
        // Counted over the position's orders (a handful), not by the partial index of every user's PENDING ones.
        pending: sql<number>`(select count(*) filter (where ${orders.status} = 'PENDING')::int from ${orders} where ${orders.positionId} = ${positionId})`,
        shares: sql<string>`coalesce(sum(${positionBands.sharesMicros}), 0)`,
      })
      .from(positionBands)
      .where(eq(positionBands.positionId, positionId));
    if (Number(state!.pending) > 0) return position.status;
    const next = Number(state!.shares) > 0 ? 'open' : 'closed';
    if (next !== position.status) {
      await tx
        .update(positions)
        .set({ status: next, closedAt: next === 'closed' ? sql`now()` : null, updatedAt: sql`now()` })
        .where(eq(positions.id, positionId));
      await emitPositionStatus(tx, await loadPosition(tx, positionId), next === 'open' ? 'position.opened' : 'position.closed');
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
    await emitPositionStatus(tx, await loadPosition(tx, positionId), 'position.closed');
    return true;
  });
}

/** A position as recorded: its row, its bands (by index), its orders (oldest first) and the P&L its sales and settlement realised. */
export interface PositionRecord {
  position: PositionRow;
  bands: PositionBandRow[];
  orders: OrderRow[];
  realizedPnlMicros: number;
}

/** The position's whole record, read by one statement (it was three, and a fourth for the P&L). */
export async function loadPosition(db: Db, positionId: string): Promise<PositionRecord> {
  const [row] = await preparedSql<PositionRecordJson>(db, 'load_position', LOAD_POSITION_SQL).execute({ positionId });
  const record = row && positionRecordOf(row);
  if (!record) throw new Error(`position ${positionId} vanished`);
  return record;
}

/** A position record as a statement returns it: the rows as JSON (`to_jsonb`), the realised P&L. */
export interface PositionRecordJson {
  position: unknown;
  bands: unknown;
  orders: unknown;
  realized: string | number | null;
}

/** The record a PositionRecordJson holds (null when its position is null). */
export function positionRecordOf(row: PositionRecordJson): PositionRecord | null {
  const json = <T>(value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as T;
  const position = json<Record<string, unknown> | null>(row.position);
  if (!position) return null;
  return {
    position: tableRows(positions, [position])[0]!,
    bands: tableRows(positionBands, json(row.bands)),
    orders: tableRows(orders, json(row.orders)),
    realizedPnlMicros: Number(row.realized ?? 0),
  };
}

const LOAD_POSITION_SQL = sql`
  select to_jsonb(p) as position,
         coalesce((select jsonb_agg(to_jsonb(b) order by b.band_index) from position_bands b where b.position_id = p.id), '[]') as bands,
         coalesce((select jsonb_agg(to_jsonb(o) order by o.created_at, o.band_index) from orders o where o.position_id = p.id), '[]') as orders,
         (select coalesce(sum(t.realized_pnl_micros), 0) from trades t
           where t.account_id = p.account_id and t.user_id = p.user_id and t.position_id = p.id and t.action in ('SELL', 'SETTLE')) as realized
    from (select ${sql.placeholder('positionId')}::text as id) wanted
    left join positions p on p.id = wanted.id`;

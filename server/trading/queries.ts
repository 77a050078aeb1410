/** Reads of a user's positions, orders and trades. Every query filters by (account, user). */
import { and, asc, count, desc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { orders, positionBands, positions, trades, tradingTotals, type OrderStatus, type PositionStatus } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import { MICROS_PER_USD } from '../lib/money.ts';
import { unfilteredOrderPage, unfilteredTradePage } from './page-batches.ts';
import type { OrderRow, PositionBandRow, PositionRow } from './ledger-writes.ts';
import type { TradingUser } from './settings.ts';

/**
 * `column = any($1)`: one array parameter, so the statement text is the same for any number of ids
 * (an IN list of 200 placeholders was built by drizzle and parsed by the database on every call).
 */
const anyOf = (column: PgColumn, values: string[]) => sql`${column} = any(${sql.param(values)}::text[])`;

export interface PositionFilter {
  status: PositionStatus | 'all';
  /** Our event id (routes resolve aliases first: server/events/resolve.ts). */
  eventId?: string;
  limit: number;
  offset: number;
}

/** A page of a filtered list and the size of the whole filtered set. */
export interface Page<Row> {
  rows: Row[];
  total: number;
}

/**
 * The total of a page whose rows carry `count(*) over ()` (the window counts the filtered set before
 * limit and offset apply). A page past the end has no row to carry it: only then is `count` asked.
 */
async function totalOf(rows: { total: string | number }[], offset: number, count: () => Promise<number>): Promise<number> {
  if (rows.length) return Number(rows[0]!.total);
  return offset > 0 ? count() : 0;
}

/**
 * A position's bands added up, valued at the bids (micro-units). The position list gets these from
 * the database in one statement (positionSummaries below, the arithmetic in SQL); detail and value
 * add them up in answers.ts (totalsOf).
 */
export interface BandTotals {
  targetMicros: number;
  boughtMicros: number;
  heldMicros: number;
  entryCostMicros: number;
  costMicros: number;
  valueMicros: number;
}

/** What a position summary shows of the position row. */
export type SummaryPositionRow = Pick<PositionRow, 'id' | 'eventId' | 'side' | 'status' | 'unitsMicros' | 'createdAt' | 'closedAt'>;

export interface PositionSummaryRow {
  position: SummaryPositionRow;
  totals: BandTotals;
  realizedMicros: number;
}

interface SummaryRow {
  id: string;
  eventId: string;
  side: PositionRow['side'];
  status: PositionRow['status'];
  unitsMicros: string | number;
  createdAt: Date | string;
  closedAt: Date | string | null;
  target: string | number;
  bought: string | number;
  held: string | number;
  entryCost: string | number;
  cost: string | number;
  value: string | number;
  realized: string | number;
  total: string | number;
}

const asDate = (d: Date | string) => (d instanceof Date ? d : new Date(d));

/** Which of the user's positions a filter keeps (shared by the page and its count). */
const positionsWhere = sql`p.account_id = ${sql.placeholder('accountId')}::text and p.user_id = ${sql.placeholder('userId')}::text
         and (${sql.placeholder('status')}::text = 'all' or p.status = ${sql.placeholder('status')}::text)
         and (${sql.placeholder('eventId')}::text is null or p.event_id = ${sql.placeholder('eventId')}::text)`;

/**
 * A page of the user's positions, newest first, each with its bands added up and valued at `bids`
 * (band id → best bid, micro-USD) and its realised P&L, and the size of the filtered set: ONE
 * prepared statement, whatever the number of positions (the list is the user's hottest read; it used
 * to be three queries and every band row). The page is cut first (positions_user_idx, with the count
 * as a window over the filtered positions), so only its own positions are summed and valued. The
 * value of a band is floor(shares × bid / 10^6), as answers.ts valueOf computes it.
 */
export async function positionSummaries(db: Db, user: TradingUser, filter: PositionFilter, bids: Map<string, number>): Promise<Page<PositionSummaryRow>> {
  const statement = preparedSql<SummaryRow>(
    db,
    'position_summaries',
    sql`
      with bids as (
        select band_id, bid from unnest(${sql.placeholder('bandIds')}::text[], ${sql.placeholder('bids')}::bigint[]) as b(band_id, bid)
      ),
      page as (
        select p.id, p.account_id, p.user_id, p.event_id, p.side, p.status, p.units_micros, p.created_at, p.closed_at,
               -- Unfiltered: the user's running total (trading_totals); filtered: counted (an InitPlan, run only then).
               case when ${sql.placeholder('eventId')}::text is null
                    then (select case ${sql.placeholder('status')}::text
                                   when 'all' then t.positions_pending + t.positions_open + t.positions_closed + t.positions_settled
                                   when 'pending' then t.positions_pending when 'open' then t.positions_open
                                   when 'closed' then t.positions_closed else t.positions_settled end
                            from trading_totals t where t.account_id = ${sql.placeholder('accountId')}::text and t.user_id = ${sql.placeholder('userId')}::text)
                    else (select count(*) from positions p where ${positionsWhere}) end as total
          from positions p
         where ${positionsWhere}
         order by p.created_at desc, p.id desc
         limit ${sql.placeholder('limit')}::int offset ${sql.placeholder('offset')}::int
      )
      select p.id, p.event_id as "eventId", p.side, p.status, p.units_micros as "unitsMicros",
             p.created_at as "createdAt", p.closed_at as "closedAt",
             b.target, b.bought, b.held, b.entry_cost as "entryCost", b.cost, b.value,
             coalesce(r.realized, 0) as realized, p.total
        from page p
        cross join lateral (
          select coalesce(sum(pb.target_micros), 0) as target, coalesce(sum(pb.bought_micros), 0) as bought,
                 coalesce(sum(pb.shares_micros), 0) as held, coalesce(sum(pb.entry_cost_micros), 0) as entry_cost,
                 coalesce(sum(pb.cost_micros), 0) as cost,
                 coalesce(sum(floor(pb.shares_micros::numeric * coalesce(bids.bid, 0) / ${sql.raw(String(MICROS_PER_USD))})), 0) as value
            from position_bands pb left join bids on bids.band_id = pb.band_id
           where pb.position_id = p.id
        ) b
        left join lateral (
          select sum(t.realized_pnl_micros) as realized
            from trades t
           where t.account_id = p.account_id and t.user_id = p.user_id and t.position_id = p.id
        ) r on true
       order by p.created_at desc, p.id desc`,
  );
  const where = { accountId: user.accountId, userId: user.userId, status: filter.status, eventId: filter.eventId ?? null };
  const rows = await statement.execute({ bandIds: [...bids.keys()], bids: [...bids.values()], ...where, limit: filter.limit, offset: filter.offset });
  const total = await totalOf(rows, filter.offset, async () => {
    const count = preparedSql<{ total: string | number }>(db, 'position_count', sql`select count(*) as total from positions p where ${positionsWhere}`);
    return Number((await count.execute(where))[0]!.total);
  });
  return {
    total,
    rows: rows.map((r) => ({
      position: { id: r.id, eventId: r.eventId, side: r.side, status: r.status, unitsMicros: Number(r.unitsMicros), createdAt: asDate(r.createdAt), closedAt: r.closedAt === null ? null : asDate(r.closedAt) },
      totals: {
        targetMicros: Number(r.target),
        boughtMicros: Number(r.bought),
        heldMicros: Number(r.held),
        entryCostMicros: Number(r.entryCost),
        costMicros: Number(r.cost),
        valueMicros: Number(r.value),
      },
      realizedMicros: Number(r.realized),
    })),
  };
}

/** The band columns that value a holding. */
const valuedBandColumns = {
  positionId: positionBands.positionId,
  bandIndex: positionBands.bandIndex,
  bandId: positionBands.bandId,
  targetMicros: positionBands.targetMicros,
  boughtMicros: positionBands.boughtMicros,
  entryCostMicros: positionBands.entryCostMicros,
  sharesMicros: positionBands.sharesMicros,
  /** Shares held back by sales still running: what a new sale cannot sell (a position's partial-sale range counts without them). */
  reservedMicros: positionBands.reservedMicros,
  costMicros: positionBands.costMicros,
};
export type ValuedBandRow = Pick<PositionBandRow, keyof typeof valuedBandColumns>;

/** Bands of many positions in one query (the columns that value them). */
export async function bandsOf(db: Db, positionIds: string[]): Promise<Map<string, ValuedBandRow[]>> {
  const byPosition = new Map(positionIds.map((id) => [id, [] as ValuedBandRow[]]));
  if (!positionIds.length) return byPosition;
  const rows = await db
    .select(valuedBandColumns)
    .from(positionBands)
    .where(anyOf(positionBands.positionId, positionIds))
    .orderBy(asc(positionBands.positionId), asc(positionBands.bandIndex));
  for (const row of rows) byPosition.get(row.positionId)!.push(row);
  return byPosition;
}

/** Realised P&L per position, from its trades. */
export async function realizedOf(db: Db, user: TradingUser, positionIds: string[]): Promise<Map<string, number>> {
  if (!positionIds.length) return new Map();
  const rows = await db
    .select({ positionId: trades.positionId, pnl: sql<string>`sum(${trades.realizedPnlMicros})` })
    .from(trades)
    .where(and(eq(trades.accountId, user.accountId), eq(trades.userId, user.userId), anyOf(trades.positionId, positionIds)))
    .groupBy(trades.positionId);
  return new Map(rows.map((r) => [r.positionId, Number(r.pnl)]));
}

/** The user's position, or POSITION_NOT_FOUND naming `param` (another user's position is not found). */
export async function findUserPosition(db: Db, user: TradingUser, positionId: string, param = 'positionId'): Promise<PositionRow> {
  const [position] = await db.select().from(positions).where(and(eq(positions.id, positionId), eq(positions.accountId, user.accountId), eq(positions.userId, user.userId)));
  if (!position) throw new ApiError('POSITION_NOT_FOUND', `${param}: no position ${positionId}`);
  return position;
}

export async function getPosition(db: Db, user: TradingUser, positionId: string) {
  const position = await findUserPosition(db, user, positionId, 'id');
  const [bands, realized] = await Promise.all([bandsOf(db, [positionId]), realizedOf(db, user, [positionId])]);
  return { position, bands: bands.get(positionId)!, realizedMicros: realized.get(positionId) ?? 0 };
}

export interface OrderFilter {
  status: OrderStatus | 'all';
  positionId?: string;
  limit: number;
  offset: number;
}

/** The user's running totals (trading_totals, kept by triggers): zeros for a user with nothing yet. */
async function totalsOf(db: Db, user: TradingUser) {
  const [row] = await db.select().from(tradingTotals).where(and(eq(tradingTotals.accountId, user.accountId), eq(tradingTotals.userId, user.userId)));
  return row ?? { ordersPending: 0, ordersMatched: 0, ordersCancelled: 0, ordersRejected: 0, trades: 0, volumeMicros: 0, feesMicros: 0, realizedPnlMicros: 0 };
}

const ORDER_COLUMNS = { PENDING: 'ordersPending', MATCHED: 'ordersMatched', CANCELLED: 'ordersCancelled', REJECTED: 'ordersRejected' } as const;

/**
 * A page of the user's orders, newest first, and the size of the filtered set: by status (or all),
 * the user's running totals; of one position, counted (a position has a handful of orders).
 */
export async function listOrders(db: Db, user: TradingUser, filter: OrderFilter): Promise<Page<OrderRow>> {
  const { status, positionId } = filter;
  if (status === 'all' && !positionId) return unfilteredOrderPage(db, user, filter); // page-batches.ts
  const where: SQL[] = [eq(orders.accountId, user.accountId), eq(orders.userId, user.userId)];
  if (status !== 'all') where.push(eq(orders.status, status));
  if (positionId) where.push(eq(orders.positionId, positionId));
  const condition = and(...where);
  const [rows, total] = await Promise.all([
    db.select().from(orders).where(condition).orderBy(desc(orders.createdAt), asc(orders.bandIndex), asc(orders.id)).limit(filter.limit).offset(filter.offset),
    positionId || status === 'all'
      ? db.select({ total: count() }).from(orders).where(condition).then((r) => r[0]!.total)
      : totalsOf(db, user).then((t) => t[ORDER_COLUMNS[status]]),
  ]);
  return { rows, total };
}

export async function getOrder(db: Db, user: TradingUser, orderId: string): Promise<OrderRow> {
  const [row] = await db.select().from(orders).where(and(eq(orders.id, orderId), eq(orders.accountId, user.accountId), eq(orders.userId, user.userId)));
  if (!row) throw new ApiError('NOT_FOUND', `orderId: no order ${orderId}`);
  return row;
}

/** The user's PENDING orders, with their age by the database clock (no app/database clock skew). */
export async function pendingOrders(db: Db, user: TradingUser): Promise<(OrderRow & { ageMs: number })[]> {
  const rows = await db
    .select({ order: orders, ageMs: sql<string>`extract(epoch from now() - ${orders.createdAt}) * 1000` })
    .from(orders)
    .where(and(eq(orders.accountId, user.accountId), eq(orders.userId, user.userId), eq(orders.status, 'PENDING')))
    .orderBy(asc(orders.createdAt));
  return rows.map((r) => ({ ...r.order, ageMs: Number(r.ageMs) }));
}

export interface HistoryFilter {
  eventId?: string;
  startDate?: Date;
  endDate?: Date;
  limit: number;
  offset: number;
}

/**
 * A page of the user's trades, newest first, and the summary of the filtered set: unfiltered, the
 * user's running totals; filtered by event or dates, summed over the matching trades.
 */
export async function tradeHistory(db: Db, user: TradingUser, filter: HistoryFilter) {
  const where: SQL[] = [eq(trades.accountId, user.accountId), eq(trades.userId, user.userId)];
  if (filter.eventId) where.push(eq(trades.eventId, filter.eventId));
  if (filter.startDate) where.push(gte(trades.createdAt, filter.startDate));
  if (filter.endDate) where.push(lte(trades.createdAt, filter.endDate));
  const condition = and(...where);
  if (!filter.eventId && !filter.startDate && !filter.endDate) return unfilteredTradePage(db, user, filter); // page-batches.ts
  const summed = async () => {
    const [row] = await db
      .select({
        totalTrades: count(),
        volume: sql<string>`coalesce(sum(${trades.amountMicros}), 0)`,
        fees: sql<string>`coalesce(sum(${trades.feesMicros}), 0)`,
        pnl: sql<string>`coalesce(sum(${trades.realizedPnlMicros}), 0)`,
      })
      .from(trades)
      .where(condition);
    return { totalTrades: row!.totalTrades, volumeMicros: Number(row!.volume), feesMicros: Number(row!.fees), realizedPnlMicros: Number(row!.pnl) };
  };
  const [rows, summary] = await Promise.all([db.select().from(trades).where(condition).orderBy(desc(trades.createdAt), desc(trades.id)).limit(filter.limit).offset(filter.offset), summed()]);
  return { rows, summary };
}

/** Reads of a user's positions, orders and trades. Every query filters by (account, user). */
import { and, asc, count, desc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { orders, positionBands, positions, trades, type OrderStatus, type PositionStatus } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { OrderRow, PositionBandRow, PositionRow } from './records.ts';
import type { TradingUser } from './settings.ts';

export interface PositionFilter {
  status: PositionStatus | 'all';
  eventId?: string;
  limit: number;
}

export async function listPositions(db: Db, user: TradingUser, filter: PositionFilter): Promise<PositionRow[]> {
  const where: SQL[] = [eq(positions.accountId, user.accountId), eq(positions.userId, user.userId)];
  if (filter.status !== 'all') where.push(eq(positions.status, filter.status));
  if (filter.eventId) where.push(eq(positions.eventId, filter.eventId));
  return db
    .select()
    .from(positions)
    .where(and(...where))
    .orderBy(desc(positions.createdAt), desc(positions.id))
    .limit(filter.limit);
}

/** Bands of many positions in one query. */
export async function bandsOf(db: Db, positionIds: string[]): Promise<Map<string, PositionBandRow[]>> {
  const byPosition = new Map(positionIds.map((id) => [id, [] as PositionBandRow[]]));
  if (!positionIds.length) return byPosition;
  const rows = await db.select().from(positionBands).where(inArray(positionBands.positionId, positionIds)).orderBy(asc(positionBands.positionId), asc(positionBands.bandIndex));
  for (const row of rows) byPosition.get(row.positionId)!.push(row);
  return byPosition;
}

/** Realised P&L per position, from its trades. */
export async function realizedOf(db: Db, user: TradingUser, positionIds: string[]): Promise<Map<string, number>> {
  if (!positionIds.length) return new Map();
  const rows = await db
    .select({ positionId: trades.positionId, pnl: sql<string>`sum(${trades.realizedPnlMicros})` })
    .from(trades)
    .where(and(eq(trades.accountId, user.accountId), eq(trades.userId, user.userId), inArray(trades.positionId, positionIds)))
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
}

export async function listOrders(db: Db, user: TradingUser, filter: OrderFilter): Promise<OrderRow[]> {
  const where: SQL[] = [eq(orders.accountId, user.accountId), eq(orders.userId, user.userId)];
  if (filter.status !== 'all') where.push(eq(orders.status, filter.status));
  if (filter.positionId) where.push(eq(orders.positionId, filter.positionId));
  return db
    .select()
    .from(orders)
    .where(and(...where))
    .orderBy(desc(orders.createdAt), asc(orders.bandIndex))
    .limit(filter.limit);
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

export async function tradeHistory(db: Db, user: TradingUser, filter: HistoryFilter) {
  const where: SQL[] = [eq(trades.accountId, user.accountId), eq(trades.userId, user.userId)];
  if (filter.eventId) where.push(eq(trades.eventId, filter.eventId));
  if (filter.startDate) where.push(gte(trades.createdAt, filter.startDate));
  if (filter.endDate) where.push(lte(trades.createdAt, filter.endDate));
  const condition = and(...where);
  const [rows, [summary]] = await Promise.all([
    db.select().from(trades).where(condition).orderBy(desc(trades.createdAt), desc(trades.id)).limit(filter.limit).offset(filter.offset),
    db
      .select({
        totalTrades: count(),
        volume: sql<string>`coalesce(sum(${trades.amountMicros}), 0)`,
        fees: sql<string>`coalesce(sum(${trades.feesMicros}), 0)`,
        pnl: sql<string>`coalesce(sum(${trades.realizedPnlMicros}), 0)`,
      })
      .from(trades)
      .where(condition),
  ]);
  return { rows, summary: { totalTrades: summary!.totalTrades, volumeMicros: Number(summary!.volume), feesMicros: Number(summary!.fees), realizedPnlMicros: Number(summary!.pnl) } };
}

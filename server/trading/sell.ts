/**
 * Selling `percentage`% of a position (docs/decisions.md §7 "Sell"): reserve the shares and record the SELL
 * orders under the position's row lock (so concurrent sales never sell a share twice), send FAK
 * orders at the bids, apply what fills. A partial sale keeps the position's shape (sale-shape.ts) or
 * is refused; `minAveragePrice` refuses a plan that would fetch less per unit. What does not fill is
 * reported per band (`unsold`) and stays in the position.
 */
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { trades } from '../../db/schema.ts';
import { bandLabels, currentEventStatus } from '../events/queries.ts';
import { ApiError } from '../errors.ts';
import { formatUsd, MICROS_PER_USD_BIGINT, microsToUsd } from '../lib/money.ts';
import type { TradingHandles } from './handles.ts';
import type { VenueRules } from '../valuation/index.ts';
import type { OrderBook } from '../venues/venue.ts';
import type { TradeHooks } from './buy.ts';
import { openCredentials } from './credentials.ts';
import { executionOf, freshBooks, placeAll, planSale, settlePosition, type PlannedSale } from './execution.ts';
import { findUserPosition } from './queries.ts';
import { loadPosition, recordSaleIntent, type OrderRow, type PositionBandRow, type PositionRow } from './ledger-writes.ts';
import { partialSaleRange, shapeBreak } from './sale-shape.ts';
import type { TradingUser } from './settings.ts';
import { operationOrder } from './answers.ts';

export interface SellRequest {
  positionId: string;
  percentage: number;
  /** Least micro-USD per unit sold the plan may fetch (proceeds / units sold); below it nothing is sent. */
  minAveragePriceMicros?: number;
}

function assertSellable(position: PositionRow) {
  if (position.status === 'closed') throw new ApiError('ORDER_REJECTED', `positionId: position ${position.id} is closed`);
  if (position.status === 'settled') throw new ApiError('ORDER_REJECTED', `positionId: position ${position.id} settled when its event resolved; GET /api/trading/settlements shows its payout`);
  if (position.status === 'pending') {
    throw new ApiError('ORDER_REJECTED', `positionId: position ${position.id} is still settling its buy; POST /api/trading/orders/sync completes it`);
  }
}

/**
 * A position of an event that stopped trading cannot be sold: it settles when the event resolves
 * (read from the database now, not from the market-data snapshot).
 */
async function assertEventTrades(db: Db, position: PositionRow) {
  const status = await currentEventStatus(db, position.eventId);
  if (status === 'resolved' || status === 'voided') {
    throw new ApiError('ORDER_REJECTED', `positionId: the event ${position.eventId} is ${status}; position ${position.id} settles at its resolution (GET /api/trading/settlements shows the payout)`);
  }
  if (status !== 'open') {
    throw new ApiError('ORDER_REJECTED', `positionId: the event ${position.eventId} is ${status}: trading has stopped, and position ${position.id} settles when the event resolves`);
  }
}

const pct = (p: number) => `${p}%`;

/** Refuses a partial sale that would change the position's shape, naming the band (by its label) and the percentages that keep it. */
function assertKeepsShape(bands: PositionBandRow[], percentage: number, rules: VenueRules, labels: Map<number, string>) {
  const free = bands.map((b) => ({ bandIndex: b.bandIndex, freeMicros: b.sharesMicros - b.reservedMicros }));
  const broken = shapeBreak(free, percentage, rules);
  if (!broken) return;
  const range = partialSaleRange(free, rules);
  const minimum = `the venue minimum order of ${microsToUsd(rules.minOrderMicros)} shares`;
  const shares = microsToUsd(broken.sharesMicros);
  const band = labels.has(broken.bandIndex) ? `band ${broken.bandIndex} (${labels.get(broken.bandIndex)})` : `band ${broken.bandIndex}`;
  if (broken.problem === 'order-under-minimum') {
    const advice = range ? `sell at least ${pct(range.lowest)} or 100% (partial sales from ${pct(range.lowest)} to ${pct(range.highest)} keep the position's shape)` : 'sell 100%';
    throw new ApiError('ORDER_REJECTED', `percentage: ${pct(percentage)} of ${band} is under ${minimum}; ${advice}`);
  }
  const advice = range ? `the largest partial sale that keeps the position's shape is ${pct(range.highest)} (the smallest ${pct(range.lowest)}); or sell 100%` : 'only a 100% sale keeps its shape';
  throw new ApiError('ORDER_REJECTED', `percentage: ${pct(percentage)} would leave ${band} with ${shares} shares, under ${minimum}; ${advice}`);
}

/** Refuses a plan whose proceeds per unit sold are under `minAveragePriceMicros` (nothing is sent). */
function assertMinAveragePrice(plan: PlannedSale, position: PositionRow, bands: PositionBandRow[], minAveragePriceMicros: number | undefined) {
  if (minAveragePriceMicros === undefined) return;
  const units = unitsSold(position, bands, plan.sharesMicros);
  if (units > 0n && BigInt(plan.proceedsMicros) * MICROS_PER_USD_BIGINT >= BigInt(minAveragePriceMicros) * units) return;
  // Free (errors are refunded), so it says the minimum was not met, never the price: a sale quote sells that.
  throw new ApiError('ORDER_REJECTED', `minAveragePrice: the sale would fetch less per unit at the current bids than the minimum $${formatUsd(minAveragePriceMicros)}; nothing was sent (POST /api/trading/sell/quote prices it)`);
}

/**
 * The sale of `request.percentage`% of a position against `books`, with every refusal a sale has
 * (closed, settled or pending position; a partial sale that breaks the shape; under
 * minAveragePrice; nothing free to sell). A sale runs it under the position's row lock; a sale
 * quote (sell-quote.ts) runs it on the rows as they are, so a sale right after sends these orders.
 */
export function checkedSalePlan(position: PositionRow, bands: PositionBandRow[], books: Map<string, OrderBook>, request: SellRequest, rules: VenueRules, labels: Map<number, string> = new Map()): PlannedSale {
  assertSellable(position);
  assertKeepsShape(bands, request.percentage, rules, labels);
  const plan = planSale(bands, books, request.percentage, rules);
  assertMinAveragePrice(plan, position, bands, request.minAveragePriceMicros);
  if (!plan.orders.length) {
    throw new ApiError('ORDER_REJECTED', `positionId: nothing left to sell in position ${position.id} (its shares are in other pending sales)`);
  }
  return plan;
}

/** Units sold, as positions count units: U × shares sold / shares the buy targeted (micro-units). */
export function unitsSold(position: PositionRow, bands: PositionBandRow[], sharesMicros: number): bigint {
  const target = bands.reduce((s, b) => s + b.targetMicros, 0);
  return target === 0 ? 0n : (BigInt(position.unitsMicros) * BigInt(sharesMicros)) / BigInt(target);
}

/** The checks a sale makes before reading the books: the position is the user's, sellable, and its event trades. */
export async function sellablePosition(db: Db, user: TradingUser, positionId: string): Promise<PositionRow> {
  const position = await findUserPosition(db, user, positionId);
  assertSellable(position);
  await assertEventTrades(db, position);
  return position;
}

export async function sell(services: TradingHandles, user: TradingUser, request: SellRequest, hooks: TradeHooks = {}) {
  const execution = executionOf(services, user.accountId);
  const position = await sellablePosition(execution.db, user, request.positionId);
  const credentials = await openCredentials(execution.db, services.credentialCipher, user);
  const { bands } = await loadPosition(execution.db, position.id);
  const [books, labels] = await Promise.all([freshBooks(execution, bands.map((b) => b.bandId)), bandLabels(execution.db, position.eventId)]);

  const { operationId, orders } = await recordSaleIntent(execution.db, user, position.id, 'close', (locked, lockedBands) => checkedSalePlan(locked, lockedBands, books, request, execution.venue.rules, labels).orders);
  await hooks.onIntent?.(position.id, operationId);

  await placeAll(execution, credentials, orders);
  await settlePosition(execution, credentials, position.id).catch((error) => execution.logger.warn('position not settled; left for orders/sync', { positionId: position.id, error: String(error.message) }));

  return saleOutcome(execution.db, position.id, operationId, request.percentage);
}

/** How a sale ended, from its records (the answer to the request, or to its retry). */
export async function saleOutcome(db: Db, positionId: string, operationId: string, percentage: number) {
  const after = await loadPosition(db, positionId);
  const mine = after.orders.filter((o) => o.operationId === operationId);
  if (mine.some((o) => o.status === 'PENDING')) {
    throw new ApiError('VENUE_UNAVAILABLE', `The venue has not confirmed every sell order of position ${positionId}; POST /api/trading/orders/sync completes it`);
  }
  const unsold = unsoldOf(mine);
  if (!mine.some((o) => o.filledMicros > 0)) {
    const bands = unsold.map((u) => `${u.bandId} (${u.shares} shares, ${u.reason})`).join(', ');
    throw new ApiError('ORDER_REJECTED', `The venue filled none of the sell orders; unsold: ${bands}; position ${positionId} is unchanged and stays ${after.position.status}`);
  }
  const [realized] = await db
    .select({ pnl: sql<string>`coalesce(sum(${trades.realizedPnlMicros}), 0)` })
    .from(trades)
    .where(inArray(trades.orderId, mine.map((o) => o.id)));
  return {
    positionId,
    status: after.position.status,
    percentage,
    orders: mine.map(operationOrder),
    totalProceeds: microsToUsd(mine.reduce((s, o) => s + o.notionalMicros - o.feesMicros, 0)),
    realizedPnl: microsToUsd(Number(realized!.pnl)),
    unsold,
  };
}

/** Each band's shares a sale ordered but did not sell, and why (they stay in the position). */
function unsoldOf(sale: OrderRow[]) {
  return sale
    .filter((o) => o.filledMicros < o.requestedMicros)
    .map((o) => ({ bandId: o.bandId, shares: microsToUsd(o.requestedMicros - o.filledMicros), reason: o.reason ?? (o.filledMicros > 0 ? 'partly-filled' : 'unfilled') }));
}

/**
 * Selling `percentage`% of a position (decisions §7 "Sell"): reserve the shares and record the SELL
 * orders under the position's row lock (so concurrent sales never sell a share twice), send FAK
 * orders at the bids, apply what fills. Partial fills are reported as they are; the rest stays open.
 */
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { trades } from '../../db/schema.ts';
import { ApiError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { VenueRules } from '../valuation/index.ts';
import type { TradeHooks } from './buy.ts';
import { openCredentials } from './credentials.ts';
import { executionOf, freshBooks, placeAll, planSale, settlePosition, type SalePlan } from './execution.ts';
import { findUserPosition } from './queries.ts';
import { loadPosition, recordSaleIntent, type PositionRow } from './records.ts';
import type { TradingUser } from './settings.ts';
import { fromMicros, operationOrder } from './views.ts';

export interface SellRequest {
  positionId: string;
  percentage: number;
}

function assertSellable(position: PositionRow) {
  if (position.status === 'closed') throw new ApiError('ORDER_REJECTED', `positionId: position ${position.id} is closed`);
  if (position.status === 'pending') {
    throw new ApiError('ORDER_REJECTED', `positionId: position ${position.id} is still settling its buy; POST /api/trading/orders/sync completes it`);
  }
}

/** Refuses a partial sale that would send some band an order under the venue minimum. */
function assertAboveMinimum(plan: SalePlan, percentage: number, rules: VenueRules) {
  if (percentage >= 100 || !plan.belowMinimum.length) return;
  const needed = Math.max(...plan.belowMinimum.map((b) => Math.ceil((rules.minOrderMicros / b.freeMicros) * 10_000) / 100));
  const advice = needed < 100 ? `sell at least ${needed}% or 100%` : 'sell 100%';
  const band = plan.belowMinimum[0]!;
  throw new ApiError(
    'ORDER_REJECTED',
    `percentage: ${percentage}% of band ${band.bandIndex} is under the venue minimum order of ${fromMicros(rules.minOrderMicros)} shares; ${advice}`,
  );
}

export async function sell(services: Services, user: TradingUser, request: SellRequest, hooks: TradeHooks = {}) {
  const x = executionOf(services);
  const position = await findUserPosition(x.db, user, request.positionId);
  assertSellable(position);
  const credentials = await openCredentials(x.db, services.credentialCipher, user);
  const { bands } = await loadPosition(x.db, position.id);
  const books = await freshBooks(x, bands.map((b) => b.bandId));

  const { operationId, orders } = await recordSaleIntent(x.db, user, position.id, 'close', (locked, lockedBands) => {
    assertSellable(locked);
    const plan = planSale(lockedBands, books, request.percentage, x.venue.rules);
    assertAboveMinimum(plan, request.percentage, x.venue.rules);
    if (!plan.orders.length) {
      throw new ApiError('ORDER_REJECTED', `positionId: nothing left to sell in position ${position.id} (shares are in other pending sales or under the venue minimum)`);
    }
    return plan.orders;
  });
  await hooks.onIntent?.(position.id, operationId);

  await placeAll(x, credentials, orders);
  await settlePosition(x, credentials, position.id).catch((error) => x.logger.warn('position not settled; left for orders/sync', { positionId: position.id, error: String(error.message) }));

  return saleOutcome(x.db, position.id, operationId, request.percentage);
}

/** How a sale ended, from its records (the answer to the request, or to its retry). */
export async function saleOutcome(db: Db, positionId: string, operationId: string, percentage: number) {
  const after = await loadPosition(db, positionId);
  const mine = after.orders.filter((o) => o.operationId === operationId);
  if (mine.some((o) => o.status === 'PENDING')) {
    throw new ApiError('VENUE_UNAVAILABLE', `The venue has not confirmed every sell order of position ${positionId}; POST /api/trading/orders/sync completes it`);
  }
  if (!mine.some((o) => o.filledMicros > 0)) {
    const reasons = [...new Set(mine.map((o) => o.reason ?? 'unfilled'))].join(', ');
    throw new ApiError('ORDER_REJECTED', `The venue filled none of the sell orders (${reasons}); position ${positionId} is unchanged`);
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
    totalProceeds: fromMicros(mine.reduce((s, o) => s + o.notionalMicros - o.feesMicros, 0)),
    realizedPnl: fromMicros(Number(realized!.pnl)),
  };
}

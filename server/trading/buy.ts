/**
 * Opening a position (decisions §7 "Buy"): size it against the live asks, check the venue balance,
 * record the position and its orders (PENDING), send one FOK order per band, and settle. Every band
 * fills or the buy is unwound (the filled bands sold back) and answers ORDER_REJECTED.
 */
import type { Db } from '../../db/client.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { formatUsd } from '../lib/money.ts';
import type { Services } from '../services.ts';
import { sizeBuy, weightsFor, type Floors, type Side } from '../valuation/index.ts';
import { openCredentials } from './credentials.ts';
import { executionOf, freshBooks, placeAll, settlePosition, worstPriceFor } from './execution.ts';
import { loadPosition, recordBuyIntent, type OrderRow, type PositionRow } from './records.ts';
import { getSettings, type TradingUser } from './settings.ts';
import { callVenue } from './venue-calls.ts';
import { fromMicros, microRatio, operationOrder } from './views.ts';

export interface BuyRequest {
  eventId: string;
  side: Side;
  amountMicros: number;
  floorL?: number;
  floorS?: number;
}

export interface TradeHooks {
  /** Called once the request's intent is recorded (orders may reach the venue from here on). */
  onIntent?: (positionId: string, operationId: string) => Promise<void>;
}

/** The buy's answer, rebuilt from the records (so a replay or a late settlement says the same). */
export function buyResult(position: PositionRow, orders: OrderRow[]) {
  const buys = orders.filter((o) => o.purpose === 'open');
  const paid = buys.reduce((sum, o) => sum + o.notionalMicros + o.feesMicros, 0);
  return {
    positionId: position.id,
    eventId: position.eventId,
    side: position.side,
    status: position.status,
    orders: buys.map(operationOrder),
    totalCost: fromMicros(paid),
    averagePrice: microRatio(paid, position.unitsMicros),
    size: fromMicros(position.unitsMicros),
    floorL: position.floorL,
    floorS: position.floorS,
  };
}

function failureError(position: PositionRow, orders: OrderRow[]): ApiError {
  const failed = orders.find((o) => o.purpose === 'open' && o.status !== 'PENDING' && o.filledMicros < o.requestedMicros);
  const reason = position.failureReason ?? failed?.reason ?? 'unfilled';
  const paid = orders.filter((o) => o.side === 'BUY').reduce((s, o) => s + o.notionalMicros + o.feesMicros, 0);
  const got = orders.filter((o) => o.side === 'SELL').reduce((s, o) => s + o.notionalMicros - o.feesMicros, 0);
  const held = position.status === 'open' ? ` Some shares could not be sold back and stay in position ${position.id}.` : '';
  const money = paid > 0 ? ` The filled bands were sold back: paid $${formatUsd(paid)}, received $${formatUsd(got)}.` : ' Nothing was filled.';
  const text = `The venue did not fill band ${failed?.bandIndex ?? '?'} (${reason}); the buy is cancelled (position ${position.id}).${money}${held}`;
  return new ApiError(reason === 'insufficient-balance' ? 'INSUFFICIENT_BALANCE' : 'ORDER_REJECTED', text);
}

export async function buy(services: Services, user: TradingUser, request: BuyRequest, hooks: TradeHooks = {}) {
  const x = executionOf(services);
  const snapshot = await services.marketData.snapshot();
  const event = snapshot.events.find((e) => e.id === request.eventId);
  if (!event) throw new ApiError('NOT_FOUND', `eventId: no event ${request.eventId}; GET /api/trading/events lists them`);
  if (event.status !== 'open') throw new ApiError('ORDER_REJECTED', `eventId: ${event.id} is ${event.status}; buys are accepted while an event is open`);

  const settings = await getSettings(x.db, user);
  const floors: Floors = { floorL: request.floorL ?? settings.floorL, floorS: request.floorS ?? settings.floorS };
  const credentials = await openCredentials(x.db, services.credentialCipher, user, settings);

  const tokenIds = event.bands.map((b) => b.id);
  const books = await freshBooks(x, tokenIds);
  const asks = tokenIds.map((id) => books.get(id)?.asks ?? []);
  const weights = weightsFor(request.side, tokenIds.length, floors);
  if (!tokenIds.length) throw new ApiError('ORDER_REJECTED', `eventId: ${event.id} has no bands to trade`);
  const sizing = sizeBuy(weights, asks, request.amountMicros, x.venue.rules);
  if (!sizing.ok) {
    if (sizing.reason === 'no-liquidity') throw new ApiError('ORDER_REJECTED', `The books of ${event.id} are too thin for even the smallest position`);
    const minimum = sizing.minimumAmountMicros === null ? 'no amount reaches it with these floors' : `the minimum amount for ${event.id} ${request.side} is $${formatUsd(sizing.minimumAmountMicros)}`;
    throw new ApiError('ORDER_REJECTED', `amount: every band needs at least the venue minimum order; ${minimum}`);
  }
  const plan = sizing.plan;

  const collateral = await callVenue('the balance', x.timeoutMs, () => x.venue.getCollateral(credentials));
  if (collateral < plan.totalCostMicros) {
    throw new ApiError('INSUFFICIENT_BALANCE', `amount: this buy costs $${formatUsd(plan.totalCostMicros)}; the venue balance is $${formatUsd(collateral)}`);
  }

  const positionId = newId('pos');
  const { operationId, orders } = await recordBuyIntent(x.db, user, {
    position: { id: positionId, eventId: event.id, side: request.side, ...floors, unitsMicros: plan.unitsMicros },
    bands: plan.bands.map((b) => ({ bandIndex: b.bandIndex, bandId: tokenIds[b.bandIndex]!, targetMicros: b.shares })),
    orders: plan.bands
      .filter((b) => b.shares > 0)
      .map((b) => ({ bandIndex: b.bandIndex, bandId: tokenIds[b.bandIndex]!, side: 'BUY' as const, requestedMicros: b.shares, limitPriceMicros: worstPriceFor(asks[b.bandIndex]!, b.shares)! })),
  });
  await hooks.onIntent?.(positionId, operationId);

  await placeAll(x, credentials, orders);
  await settlePosition(x, credentials, positionId).catch((error) => x.logger.warn('position not settled; left for orders/sync', { positionId, error: String(error.message) }));

  return buyOutcome(x.db, positionId);
}

/** How a buy ended, from its records: the result, or the error that says what happened. */
export async function buyOutcome(db: Db, positionId: string) {
  const after = await loadPosition(db, positionId);
  if (after.position.status === 'pending') {
    throw new ApiError('VENUE_UNAVAILABLE', `The venue has not confirmed every order of position ${positionId}; POST /api/trading/orders/sync completes it`);
  }
  if (after.position.buyFailed) throw failureError(after.position, after.orders);
  return buyResult(after.position, after.orders);
}

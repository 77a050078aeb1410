/**
 * Opening a position (docs/decisions.md §7, the "Buy" rules): size it against the live asks, check the venue balance,
 * record the position and its orders (PENDING), send one FOK order per band, and settle. Every band
 * fills or the buy is unwound (the filled bands sold back) and answers ORDER_REJECTED.
 *
 * `planBuy` is the one plan both this and POST /trading/quote (quote.ts) answer from, so a quote is
 * exactly the orders a buy against the same books sends. Each order is limited to the worst ask level
 * its band needs and sizing keeps Σ shares × limit within the amount (sizing.ts), so a buy never
 * spends more than `amount`, however the books move before the fill.
 */
import type { Db } from '../../db/client.ts';
import { currentEventStatus } from '../events/queries.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { formatUsd, MICROS_PER_USD_BIGINT, microRatio, microsToUsd } from '../lib/money.ts';
import type { TradingHandles } from './handles.ts';
import { sizeBuy, weightsFor, type BuyPlan, type EventToken, type Floors, type Side } from '../valuation/index.ts';
import { isLadder, tokenHolding } from '../events/tokens.ts';
import { openCredentials } from './credentials.ts';
import { executionOf, freshBooks, placeAll, settlePosition, type Execution } from './execution.ts';
import { loadPosition, recordBuyIntent, type BuyIntent, type OrderRow, type PositionRow } from './ledger-writes.ts';
import { openFilledBuy } from './filled-buy.ts';
import { errorMessage } from '../lib/error-message.ts';
import { getSettings, type Settings, type TradingUser } from './settings.ts';
import { callVenue } from './venue-calls.ts';
import { operationOrder } from './answers.ts';

export interface BuyRequest {
  eventId: string;
  side: Side;
  amountMicros: number;
  floorL?: number;
  floorS?: number;
  /** Most micro-USD per unit (totalCost / units) the plan may reach; above it nothing is sent. */
  maxAveragePriceMicros?: number;
}

export interface TradeHooks {
  /** Called once the request's intent is recorded (orders may reach the venue from here on). */
  onIntent?: (positionId: string, operationId: string) => Promise<void>;
}

/** The buy's answer, rebuilt from the records (so a replay or a late settlement says the same). */
export function buyResult(position: PositionRow, orders: OrderRow[], requestedMicros: number) {
  const buys = orders.filter((o) => o.purpose === 'open');
  const paid = buys.reduce((sum, o) => sum + o.notionalMicros + o.feesMicros, 0);
  return {
    positionId: position.id,
    eventId: position.eventId,
    side: position.side,
    status: position.status,
    orders: buys.map(operationOrder),
    totalCost: microsToUsd(paid),
    averagePrice: microRatio(paid, position.unitsMicros),
    size: microsToUsd(position.unitsMicros),
    floorL: position.floorL,
    floorS: position.floorS,
    requestedAmount: microsToUsd(requestedMicros),
    unspentAmount: microsToUsd(requestedMicros - paid),
  };
}

function failureError(position: PositionRow, orders: OrderRow[]): ApiError {
  const failed = orders.find((o) => o.purpose === 'open' && o.status !== 'PENDING' && o.filledMicros < o.requestedMicros);
  const reason = position.failureReason ?? failed?.reason ?? 'unfilled';
  const paid = orders.filter((o) => o.side === 'BUY').reduce((s, o) => s + o.notionalMicros + o.feesMicros, 0);
  const got = orders.filter((o) => o.side === 'SELL').reduce((s, o) => s + o.notionalMicros - o.feesMicros, 0);
  const held = position.status === 'open' ? ` Some shares could not be sold back and stay in position ${position.id}.` : '';
  const money = paid > 0 ? ` The filled bands were sold back: paid $${formatUsd(paid)}, received $${formatUsd(got)}.` : ' Nothing was filled.';
  const text = `The venue did not fill ${failed ? `${failed.bandId.includes(':') ? 'token' : 'band'} ${failed.bandId}` : 'an order'} (${reason}); the buy is cancelled (position ${position.id}).${money}${held}`;
  return new ApiError(reason === 'insufficient-balance' ? 'INSUFFICIENT_BALANCE' : 'ORDER_REJECTED', text);
}

/**
 * The open event `eventId` names in the current snapshot (404, or 422 when it does not trade). The
 * snapshot may be up to MARKET_DATA_TTL_MS old, so the event must also be open now, as stored: a quote
 * or a buy never slips in just after an event stopped trading or resolved.
 */
export async function tradableEvent(services: TradingHandles, eventId: string) {
  const snapshot = await services.marketData.snapshot();
  const event = snapshot.events.find((e) => e.id === eventId);
  if (!event) throw new ApiError('NOT_FOUND', `eventId: no event ${eventId}; GET /api/trading/events lists them`);
  const status = event.status === 'open' ? await currentEventStatus(services.database.db, event.id) : event.status;
  if (status !== 'open') throw new ApiError('ORDER_REJECTED', `eventId: ${event.id} is ${status}; buys are accepted while an event is open`);
  return event;
}

export interface PlannedBuy {
  eventId: string;
  floors: Floors;
  /**
   * The tokens the plan buys, in the plan's order (plan.bands[i] is tokens[i]): every band of a band
   * event; a ladder's threshold tokens with a positive amount (valuation/ladder.ts).
   */
  tokens: EventToken[];
  plan: BuyPlan;
  /** The least amount a buy of this event and side (and floors) accepts on these books. */
  minimumAmountMicros: number;
}

/**
 * The buy's plan against the books of this moment, or the refusal a buy would answer: books too
 * thin, an amount under the minimum (stated), or an average price above `maxAveragePriceMicros`.
 */
export async function planBuy(execution: Execution, event: Awaited<ReturnType<typeof tradableEvent>>, settings: Settings, request: BuyRequest): Promise<PlannedBuy> {
  const floors: Floors = { floorL: request.floorL ?? settings.floorL, floorS: request.floorS ?? settings.floorS };
  if (!event.bands.length || (isLadder(event) && event.bands.length < 2)) throw new ApiError('ORDER_REJECTED', `eventId: ${event.id} has no bands to trade`);
  const weights = weightsFor(request.side, event.bands.length, floors);
  const { tokens, holding } = tokenHolding(event, weights);
  const books = await freshBooks(execution, tokens.map((t) => t.id));
  const asks = tokens.map((t) => books.get(t.id)?.asks ?? []);
  const sizing = sizeBuy(weights, asks, request.amountMicros, execution.venue.rules, holding);
  if (!sizing.ok) {
    if (sizing.reason === 'no-liquidity') throw new ApiError('ORDER_REJECTED', `The books of ${event.id} are too thin for even the smallest position`);
    const minimum = sizing.minimumAmountMicros === null ? 'no amount reaches it with these floors' : `the minimum amount for ${event.id} ${request.side} is $${formatUsd(sizing.minimumAmountMicros)}`;
    throw new ApiError('ORDER_REJECTED', `amount: every token bought (a band's, or a ladder threshold's) needs at least the venue minimum order; ${minimum}`);
  }
  const plan = sizing.plan;
  const limit = request.maxAveragePriceMicros;
  if (limit !== undefined && BigInt(plan.totalCostMicros) * MICROS_PER_USD_BIGINT > BigInt(limit) * BigInt(plan.unitsMicros)) {
    // The refusal costs nothing (errors are refunded), so it says that the limit was not met, never
    // the price reached: that is what a quote sells (docs/decisions.md §7).
    throw new ApiError('ORDER_REJECTED', `maxAveragePrice: the plan's average price per unit at the current asks is above the $${formatUsd(limit)} allowed; nothing was sent (POST /api/trading/quote prices it)`);
  }
  return { eventId: event.id, floors, tokens, plan, minimumAmountMicros: sizing.minimumAmountMicros };
}

export async function buy(services: TradingHandles, user: TradingUser, request: BuyRequest, hooks: TradeHooks = {}) {
  const execution = executionOf(services, user.accountId);
  const event = await tradableEvent(services, request.eventId);
  const settings = await getSettings(execution.db, user);
  const credentials = await openCredentials(execution.db, services.credentialCipher, user, settings);
  const { floors, tokens, plan } = await planBuy(execution, event, settings, request);

  // The orders commit up to their limits (Σ maxCost), which is what the venue holds them to.
  const collateral = await callVenue('the balance', execution.timeoutMs, () => execution.venue.getCollateral(credentials));
  if (collateral < plan.maxCostMicros) {
    throw new ApiError('INSUFFICIENT_BALANCE', `amount: this buy costs up to $${formatUsd(plan.maxCostMicros)}; the venue balance is $${formatUsd(collateral)}`);
  }

  const positionId = newId('pos');
  const intent: BuyIntent = {
    position: { id: positionId, eventId: event.id, side: request.side, ...floors, unitsMicros: plan.unitsMicros },
    // A record per token, at the token's index (a band's index for a band event: valuation/ladder.ts).
    bands: plan.bands.map((b) => ({ bandIndex: tokens[b.bandIndex]!.index, bandId: tokens[b.bandIndex]!.id, targetMicros: b.shares })),
    orders: plan.bands
      .filter((b) => b.shares > 0)
      .map((b) => ({ bandIndex: tokens[b.bandIndex]!.index, bandId: tokens[b.bandIndex]!.id, side: 'BUY' as const, requestedMicros: b.shares, limitPriceMicros: b.worstPrice })),
  };
  const { operationId, orders } = await recordBuyIntent(execution.db, user, intent);
  await hooks.onIntent?.(positionId, operationId);

  const placed = await placeAll(execution, credentials, orders);
  // Every order filled (almost every buy): opened in one statement. Anything else, the general way.
  const opened = await openFilledBuy(execution.db, user, intent, orders, placed).catch((error) => {
    execution.logger.warn('filled buy not opened in one statement; settling it the general way', { positionId, error: errorMessage(error) });
    return null;
  });
  if (opened) return buyResult(opened.position, opened.orders, request.amountMicros);
  await settlePosition(execution, credentials, positionId).catch((error) => execution.logger.warn('position not settled; left for orders/sync', { positionId, error: String(error.message) }));

  return buyOutcome(execution.db, positionId, request.amountMicros);
}

/** How a buy ended, from its records: the result, or the error that says what happened. */
export async function buyOutcome(db: Db, positionId: string, requestedMicros: number) {
  const after = await loadPosition(db, positionId);
  if (after.position.status === 'pending') {
    throw new ApiError('VENUE_UNAVAILABLE', `The venue has not confirmed every order of position ${positionId}; POST /api/trading/orders/sync completes it`);
  }
  if (after.position.buyFailed) throw failureError(after.position, after.orders);
  return buyResult(after.position, after.orders, requestedMicros);
}

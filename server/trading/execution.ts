/**
 * Sending recorded orders to the venue and settling a position afterwards. An order whose outcome
 * the venue does not confirm (a timeout, a crash, a network error) stays PENDING; `refreshOrder`
 * (from orders/sync) applies it later. A buy that did not fill every band is unwound: whatever it
 * holds is sold back, now or as soon as its missing outcomes are known.
 */
import type { Db } from '../../db/client.ts';
import type { Logger } from '../lib/logger.ts';
import type { TradingHandles } from './handles.ts';
import { proceedsOfSale, type BookLevel, type VenueRules } from '../valuation/index.ts';
import type { OrderBook, Venue, VenueCredentials } from '../venues/venue.ts';
import {
  applyOrderOutcomes,
  loadPosition,
  markBuyFailed,
  outcomeOf,
  recordSaleIntent,
  refusal,
  settleStatus,
  type NewOrder,
  type OrderOutcome,
  type OrderRow,
  type PositionBandRow,
  type PositionRow,
} from './ledger-writes.ts';
import { portion } from './sale-shape.ts';
import { callVenue, isDefiniteRefusal } from './venue-calls.ts';
import { venueOf } from './venue-of.ts';
import { errorMessage } from '../lib/error-message.ts';

export interface Execution {
  db: Db;
  venue: Venue;
  timeoutMs: number;
  logger: Logger;
}

/** What trading calls for `accountId` use: its mode's venue (venue-of.ts). */
export const executionOf = (s: TradingHandles, accountId: string): Execution => ({ db: s.database.db, venue: venueOf(s, accountId), timeoutMs: s.config.venueTimeoutMs, logger: s.logger });

/** The price of the last level a marketable order for `shares` reaches (null for an empty side). */
export function worstPriceFor(levels: BookLevel[], shares: number): number | null {
  let remaining = shares;
  let last: number | null = null;
  for (const level of levels) {
    last = level.priceMicros;
    remaining -= level.sizeMicros;
    if (remaining <= 0) break;
  }
  return last;
}

const REFUSAL_REASONS: Record<string, string> = {
  INSUFFICIENT_BALANCE: 'insufficient-balance',
  INVALID_CREDENTIALS: 'invalid-credentials',
  ORDER_REJECTED: 'rejected',
  BAD_REQUEST: 'invalid',
};

/**
 * What the venue says of one recorded order once it is sent: its outcome, a refusal, or null when the
 * venue cannot say (a timeout, a network error, and then one status check that could not say either):
 * the order stays PENDING and orders/sync settles it later.
 */
async function sendOrder(execution: Execution, credentials: VenueCredentials, order: OrderRow & { refusedLocally?: string }): Promise<OrderOutcome | null> {
  if (order.refusedLocally) return refusal(order.refusedLocally);
  try {
    const placed = await callVenue(`order ${order.id}`, execution.timeoutMs, () =>
      execution.venue.placeOrder(credentials, {
        clientOrderId: order.id,
        tokenId: order.bandId,
        side: order.side,
        sharesMicros: order.requestedMicros,
        limitPriceMicros: order.limitPriceMicros,
        // A buy is all-or-nothing per band; a sale takes what the bids allow now.
        timeInForce: order.purpose === 'open' ? 'FOK' : 'FAK',
      }),
    );
    return outcomeOf(placed);
  } catch (error) {
    if (isDefiniteRefusal(error)) return refusal(REFUSAL_REASONS[error.apiCode] ?? 'rejected');
    execution.logger.warn('order outcome unknown; asking the venue', { orderId: order.id, error: errorMessage(error) });
    const seen = await callVenue(`the status of order ${order.id}`, execution.timeoutMs, () => execution.venue.getOrder(credentials, order.id)).catch(() => null);
    return seen && outcomeOf(seen);
  }
}

/**
 * Sends the recorded orders (all at once) and applies the outcomes the venue reported, together: one
 * statement for the orders of a buy or a sale (applyOrderOutcomes).
 */
export async function placeAll(execution: Execution, credentials: VenueCredentials, orders: (OrderRow & { refusedLocally?: string })[]): Promise<PlacedOrders> {
  const outcomes = await Promise.all(orders.map((o) => sendOrder(execution, credentials, o)));
  const applied = await applyOrderOutcomes(
    execution.db,
    orders.flatMap((order, i) => (outcomes[i] ? [{ order, outcome: outcomes[i] }] : [])),
  );
  return { outcomes, applied };
}

/** What placeAll learnt: each order's outcome (null: unknown, left PENDING), and the ids of the orders whose outcome it applied. */
export interface PlacedOrders {
  outcomes: (OrderOutcome | null)[];
  applied: Set<string>;
}

export interface PlannedSale {
  orders: NewOrder[];
  /** Σ proceeds the orders get from the books they were planned on, in micro-USD. */
  proceedsMicros: number;
  /** Σ shares ordered, in micro-shares. */
  sharesMicros: number;
}

/**
 * SELL orders for `percentage`% of each band's free (unreserved) shares, priced to walk the bids
 * (100% sells everything). Whether a partial percentage keeps the position's shape is the caller's
 * check (sale-shape.ts). A band that cannot be sold — no bids, or fewer shares than the venue
 * minimum — gets an order refused locally, so the record (and the answer's unsold bands) is complete.
 */
export function planSale(bands: PositionBandRow[], books: Map<string, OrderBook>, percentage: number, rules: VenueRules): PlannedSale {
  const plan: PlannedSale = { orders: [], proceedsMicros: 0, sharesMicros: 0 };
  for (const band of bands) {
    const free = band.sharesMicros - band.reservedMicros;
    if (free <= 0) continue;
    const shares = portion(free, percentage, rules);
    if (shares <= 0) continue;
    const bids = books.get(band.bandId)?.bids ?? [];
    const limit = worstPriceFor(bids, shares);
    const refusedLocally = shares < rules.minOrderMicros ? 'below-minimum' : limit === null ? 'no-liquidity' : undefined;
    plan.orders.push({ bandIndex: band.bandIndex, bandId: band.bandId, side: 'SELL', limitPriceMicros: limit ?? 0, requestedMicros: shares, refusedLocally });
    plan.sharesMicros += shares;
    if (!refusedLocally) plan.proceedsMicros += proceedsOfSale(bids, shares).proceeds;
  }
  return plan;
}

export async function freshBooks(execution: Execution, tokenIds: string[]) {
  return callVenue('the order books', execution.timeoutMs, () => execution.venue.getOrderBooks(tokenIds));
}

/** Sells back everything a failed buy holds (what is free of pending sales). */
async function unwind(execution: Execution, credentials: VenueCredentials, position: PositionRow, bands: PositionBandRow[]) {
  if (!bands.some((b) => b.sharesMicros - b.reservedMicros > 0)) return;
  const books = await freshBooks(execution, bands.map((b) => b.bandId));
  const user = { accountId: position.accountId, userId: position.userId };
  const { orders } = await recordSaleIntent(execution.db, user, position.id, 'unwind', (_, locked) => planSale(locked, books, 100, execution.venue.rules).orders);
  await placeAll(execution, credentials, orders);
}

/**
 * Brings a position in line with its orders: a buy with an unfilled band is marked failed and
 * unwound; once nothing is PENDING the status follows the holdings (open / closed).
 */
export async function settlePosition(execution: Execution, credentials: VenueCredentials, positionId: string) {
  const { position, bands, orders } = await loadPosition(execution.db, positionId);
  if (position.status === 'pending') {
    const unfilled = orders.find((o) => o.purpose === 'open' && o.status !== 'PENDING' && o.filledMicros < o.requestedMicros);
    if (unfilled && !position.buyFailed) await markBuyFailed(execution.db, positionId, unfilled.reason ?? 'unfilled');
    if (unfilled || position.buyFailed) await unwind(execution, credentials, position, bands);
  }
  return settleStatus(execution.db, positionId);
}

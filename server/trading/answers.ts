/**
 * The API's answers for positions and orders (docs/api.md "Position", "Order", "Trade"; docs/decisions.md §7),
 * computed from the trading records and the current books; routers/trading-outputs.ts holds their zod
 * shapes. Integers (micro-USD, micro-shares) become JSON numbers here, through server/lib/money.ts.
 * Valuation is at the bids: what the holdings would fetch if sold now.
 */
import type { EventWithBands } from '../events/queries.ts';
import { isLadder, tokenLabel } from '../events/tokens.ts';
import { bandExposure } from '../valuation/index.ts';
import { MICROS_PER_USD, microRatio, microsToUsd, roundToMicro } from '../lib/money.ts';
import type { MarketSnapshot } from '../market/market-data.ts';
import type { OrderBook } from '../venues/venue.ts';
import type { BandTotals, SummaryPositionRow, ValuedBandRow } from './queries.ts';
import type { OrderRow, PositionRow } from './ledger-writes.ts';
import { partialSaleRange } from './sale-shape.ts';
import type { VenueRules } from '../valuation/index.ts';

const percent = (a: number, b: number) => (b === 0 ? 0 : roundToMicro((a / b) * 100));

const bidOf = (book: OrderBook | undefined) => book?.bids[0]?.priceMicros ?? 0;

/** Band id → best bid (micro-USD) of every book: what the position list values holdings at. */
export function bestBids(books: Map<string, OrderBook>): Map<string, number> {
  return new Map([...books].map(([bandId, book]) => [bandId, bidOf(book)]));
}
/**
 * shares × price in micro-USD, rounded down (a holding is never valued above what it fetches).
 * Exact without BigInt: split the shares into whole shares and micro-shares, so neither product can
 * pass 2^53 (whole shares × price stays below 9e15 for any holding under 9 billion shares).
 */
export const valueOf = (sharesMicros: number, priceMicros: number) =>
  Math.floor(sharesMicros / MICROS_PER_USD) * priceMicros + Math.floor(((sharesMicros % MICROS_PER_USD) * priceMicros) / MICROS_PER_USD);

interface Figures {
  sizeMicros: number;
  costMicros: number;
  valueMicros: number;
  entryPrice: number;
}

function totalsOf(bands: ValuedBandRow[], books: Map<string, OrderBook>): BandTotals {
  const t: BandTotals = { targetMicros: 0, boughtMicros: 0, heldMicros: 0, entryCostMicros: 0, costMicros: 0, valueMicros: 0 };
  for (const b of bands) {
    t.targetMicros += b.targetMicros;
    t.boughtMicros += b.boughtMicros;
    t.heldMicros += b.sharesMicros;
    t.entryCostMicros += b.entryCostMicros;
    t.costMicros += b.costMicros;
    t.valueMicros += valueOf(b.sharesMicros, bidOf(books.get(b.bandId)));
  }
  return t;
}

/** The position's numbers at the current bids (docs/decisions.md §7 "Position figures"). */
function figures(position: Pick<PositionRow, 'unitsMicros'>, t: BandTotals): Figures {
  // Units scale with the shares: U for a full buy, in proportion after fills fall short or sales.
  const units = (shares: number) => (t.targetMicros === 0 ? 0 : Number((BigInt(position.unitsMicros) * BigInt(shares)) / BigInt(t.targetMicros)));
  return { sizeMicros: units(t.heldMicros), costMicros: t.costMicros, valueMicros: t.valueMicros, entryPrice: microRatio(t.entryCostMicros, units(t.boughtMicros)) };
}

/** The members both position shapes share. */
function positionCore(position: SummaryPositionRow, f: Figures, realizedMicros: number) {
  return {
    id: position.id,
    eventId: position.eventId,
    side: position.side,
    status: position.status,
    entryPrice: f.entryPrice,
    currentPrice: microRatio(f.valueMicros, f.sizeMicros),
    cost: microsToUsd(f.costMicros),
    currentValue: microsToUsd(f.valueMicros),
    unrealizedPnl: microsToUsd(f.valueMicros - f.costMicros),
    realizedPnl: microsToUsd(realizedMicros),
    createdAt: position.createdAt.toISOString(),
    closedAt: position.closedAt?.toISOString() ?? null,
  };
}

export function positionSummary(position: SummaryPositionRow, totals: BandTotals, realizedMicros: number) {
  const f = figures(position, totals);
  return {
    ...positionCore(position, f, realizedMicros),
    size: microsToUsd(f.sizeMicros),
    unrealizedPnlPercent: percent(f.valueMicros - f.costMicros, f.costMicros),
  };
}

/**
 * The detail shape: no size and no unrealizedPnlPercent (docs/api.md "Position"). `holdings` are the
 * tokens held; `bands` what they pay band by band — the same rows for a band event, the sum of the
 * threshold tokens for a ladder (valuation/ladder.ts `bandExposure`).
 */
/**
 * The partial percentages a sale of this position accepts now — the rule a sale itself applies
 * (sale-shape.ts `partialSaleRange`, on each band's free shares, as sell.ts counts them) — or null
 * when only a 100% sale works, or when the position is not open (nothing to sell).
 */
export function saleRangeOf(position: PositionRow, bands: ValuedBandRow[], rules: VenueRules): { lowest: number; highest: number } | null {
  if (position.status !== 'open') return null;
  return partialSaleRange(
    bands.map((b) => ({ bandIndex: b.bandIndex, freeMicros: b.sharesMicros - b.reservedMicros })),
    rules,
  );
}

export function positionDetail(
  position: PositionRow,
  bands: ValuedBandRow[],
  event: EventWithBands | undefined,
  books: Map<string, OrderBook>,
  realizedMicros: number,
  rules: VenueRules,
) {
  const f = figures(position, totalsOf(bands, books));
  const events = event ? [event] : [];
  const holdings = bands.map((b) => ({
    tokenId: b.bandId,
    label: tokenLabel(events, b.bandId),
    tokens: microsToUsd(b.sharesMicros),
    entryPrice: microRatio(b.entryCostMicros, b.boughtMicros),
    currentPrice: microsToUsd(bidOf(books.get(b.bandId))),
  }));
  const bandTerms =
    event && isLadder(event)
      ? bandExposure(bands.map((b) => ({ tokenId: b.bandId, sharesMicros: b.sharesMicros })), event.bands.map((b) => b.id)).map((shares, i) => ({
          bandId: event.bands[i]!.id,
          label: event.bands[i]!.label,
          tokens: microsToUsd(shares),
          entryPrice: null,
          currentPrice: microsToUsd(bidOf(books.get(event.bands[i]!.id))),
        }))
      : holdings.map(({ tokenId, ...rest }) => ({ bandId: tokenId, ...rest }));
  return {
    ...positionCore(position, f, realizedMicros),
    floorL: position.floorL,
    floorS: position.floorS,
    failureReason: position.failureReason,
    bands: bandTerms,
    holdings,
    partialSaleRange: saleRangeOf(position, bands, rules),
  };
}

export function positionValue(position: PositionRow, bands: ValuedBandRow[], snapshot: MarketSnapshot) {
  const f = figures(position, totalsOf(bands, snapshot.books));
  const pnl = f.valueMicros - f.costMicros;
  return {
    positionId: position.id,
    currentValue: microsToUsd(f.valueMicros),
    unrealizedPnl: microsToUsd(pnl),
    unrealizedPnlPercent: percent(pnl, f.costMicros),
    bandValues: bands.map((b) => {
      const bid = bidOf(snapshot.books.get(b.bandId));
      return { bandId: b.bandId, tokens: microsToUsd(b.sharesMicros), price: microsToUsd(bid), value: microsToUsd(valueOf(b.sharesMicros, bid)) };
    }),
    updatedAt: snapshot.fetchedAt.toISOString(),
  };
}

/** Average fill price per share, or the limit price while nothing is filled. */
const orderPrice = (o: OrderRow) => (o.filledMicros > 0 ? microRatio(o.notionalMicros, o.filledMicros) : microsToUsd(o.limitPriceMicros));

export function orderSummary(o: OrderRow) {
  return {
    id: o.id,
    positionId: o.positionId,
    bandId: o.bandId,
    side: o.side,
    purpose: o.purpose,
    price: orderPrice(o),
    limitPrice: microsToUsd(o.limitPriceMicros),
    size: microsToUsd(o.requestedMicros),
    filled: microsToUsd(o.filledMicros),
    fees: microsToUsd(o.feesMicros),
    status: o.status,
    reason: o.reason,
    createdAt: o.createdAt.toISOString(),
    matchedAt: o.matchedAt?.toISOString() ?? null,
  };
}

/** `bandLabel`: the band's label, or a ladder threshold token's ("Yes: above $10B"). */
export function orderDetail(o: OrderRow, bandLabel: string | null) {
  return { ...orderSummary(o), bandLabel, remaining: microsToUsd(o.requestedMicros - o.filledMicros), txHash: o.txHash };
}

/** An order as it appears in a buy or sell response. */
export function operationOrder(o: OrderRow) {
  return { orderId: o.id, bandId: o.bandId, side: o.side, price: orderPrice(o), size: microsToUsd(o.requestedMicros), filled: microsToUsd(o.filledMicros), status: o.status, reason: o.reason };
}


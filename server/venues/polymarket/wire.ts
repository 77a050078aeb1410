/**
 * The CLOB's wire formats, read tolerantly: decimal strings to micro-units without floating point,
 * books re-sorted best first (the CLOB sends bids ascending and asks descending), and the three
 * status vocabularies (post-order lowercase, ORDER_STATUS_* on reads, short forms on the socket)
 * mapped to ours.
 */
import { MICROS_PER_USD } from '../../lib/money.ts';
import type { BookLevel } from '../../valuation/index.ts';
import type { OrderBook, VenueOrderStatus } from '../venue.ts';

/** "0.45" / "100.0000" / 12.5 → micro-units, exact; null when it is not a decimal number. */
export function decimalToMicros(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  const fraction = (match[2] ?? '').padEnd(6, '0');
  // Digits beyond a micro are cut (rounded down): never claim more than was said.
  return Number(match[1]) * MICROS_PER_USD + Number(fraction.slice(0, 6));
}

/** Fixed-point 6-decimal integer strings (balances): "1000000" → 1 USD. */
export function fixed6ToMicros(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  return /^\d{1,16}$/.test(text) ? Number(text) : null;
}

export function microsToDecimal(micros: number): string {
  const whole = Math.floor(micros / MICROS_PER_USD);
  const fraction = String(micros % MICROS_PER_USD).padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

interface WireLevel {
  price: string;
  size: string;
}

export interface WireBook {
  asset_id: string;
  bids?: WireLevel[];
  asks?: WireLevel[];
  tick_size?: string | number;
  min_order_size?: string | number;
  last_trade_price?: string;
  neg_risk?: boolean;
}

function levels(wire: WireLevel[] | undefined, bestFirst: (a: BookLevel, b: BookLevel) => number): BookLevel[] {
  const out: BookLevel[] = [];
  for (const level of wire ?? []) {
    const priceMicros = decimalToMicros(level.price);
    const sizeMicros = decimalToMicros(level.size);
    if (priceMicros !== null && sizeMicros !== null && sizeMicros > 0) out.push({ priceMicros, sizeMicros });
  }
  return out.sort(bestFirst);
}

/** A CLOB book as ours (keyed by our band id): bids descending, asks ascending. */
export function toOrderBook(bandId: string, wire: WireBook): OrderBook {
  return {
    tokenId: bandId,
    bids: levels(wire.bids, (a, b) => b.priceMicros - a.priceMicros),
    asks: levels(wire.asks, (a, b) => a.priceMicros - b.priceMicros),
    lastTradeMicros: decimalToMicros(wire.last_trade_price),
    tickMicros: decimalToMicros(wire.tick_size) ?? 10_000,
  };
}

/**
 * Any of the CLOB's status words → ours, given how much filled. A terminal order that filled
 * something is MATCHED (a partly filled FAK order is MATCHED with filled < requested).
 */
export function mapStatus(raw: unknown, filledMicros: number): VenueOrderStatus {
  const word = String(raw ?? '')
    .toUpperCase()
    .replace(/^ORDER_STATUS_/, '');
  switch (word) {
    case 'LIVE':
    case 'DELAYED':
      return 'PENDING';
    case 'MATCHED':
      return 'MATCHED';
    case 'CANCELED':
    case 'CANCELLED':
    case 'CANCELED_MARKET_RESOLVED':
    case 'UNMATCHED':
      return filledMicros > 0 ? 'MATCHED' : 'CANCELLED';
    case 'INVALID':
      return 'REJECTED';
    default:
      // An unknown word: not terminal as far as we can tell; orders/sync will ask again.
      return 'PENDING';
  }
}

/** A refusal text from POST /order → our reason vocabulary (docs/decisions.md §7). */
export function refusalReason(message: string): string {
  const text = message.toLowerCase();
  if (text.includes('not enough balance') || text.includes('allowance')) return 'insufficient-balance';
  if (text.includes('fully filled or killed') || text.includes('no orders found to match') || text.includes('no match')) return 'no-liquidity';
  if (text.includes('lower than the minimum') || text.includes('minimum')) return 'below-minimum';
  if (text.includes('not yet ready') || text.includes('closed') || text.includes('resolved')) return 'market-closed';
  return 'rejected';
}

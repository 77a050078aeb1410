/**
 * The paper venue's order books, shaped like the live venue's so that what trades here also trades
 * there: a pure function of a seed, a token's reference price and the time.
 *  - Tick: Polymarket's rule, 0.001 while the price is under 0.04 or over 0.96, 0.01 otherwise.
 *  - Five levels a side, one tick apart around the (optionally drifting) reference price; the mid is
 *    kept two ticks inside [0, 1], so every book has a bid and an ask.
 *  - Depth sized in dollars: a level holds (level + 1) × the book's top dollars ($1,000–$2,999, fixed
 *    per token by the seed) in shares at its price, so a band at 0.002 carries a million shares where
 *    one at 0.50 carries thousands, and a sale of a cheap band never runs out of bids.
 */
import { MICROS_PER_USD } from '../lib/money.ts';
import type { BookLevel } from '../valuation/index.ts';
import type { OrderBook } from './venue.ts';

export const CENT_TICK = 10_000;
export const FINE_TICK = 1_000;
const LEVELS = 5;
const SHARE_STEP = 10_000;
/**
 * The drift: three cycles added, a day's (most of the amplitude), two hours' and seven minutes'
 * (the smallest), each with its own phase per token. The slow ones give the charts a shape over days
 * and hours; the fast one makes some book on the service tick every few seconds, as a live market
 * does. Their weights add up to 1, so the price stays within ± the amplitude of its reference.
 */
const DRIFT_CYCLES = [
  { periodMs: 86_400_000, weight: 0.6 },
  { periodMs: 7_200_000, weight: 0.25 },
  { periodMs: 420_000, weight: 0.15 },
] as const;

/**
 * `polymarket`: the tick rule above. `cent`: 0.01 everywhere (for a counterpart that signs orders at
 * a 0.01 tick only).
 */
export type TickRule = 'polymarket' | 'cent';

export interface PaperBookShape {
  seed: number;
  /** Amplitude of the price drift (0 = none): the reference price moves by up to ± this much. */
  drift: number;
  tickRule?: TickRule;
}

/** FNV-1a over the seed and a string: a stable 32-bit hash. */
export function stableHash(seed: number, text: string): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

/** Polymarket's tick size for a price (in micro-USD): 0.001 under 0.04 or over 0.96, else 0.01. */
export function tickFor(priceMicros: number, rule: TickRule = 'polymarket'): number {
  if (rule === 'cent') return CENT_TICK;
  return priceMicros < 40_000 || priceMicros > 960_000 ? FINE_TICK : CENT_TICK;
}

/** The drift's shape at a moment, from −1 to 1 (DRIFT_CYCLES). */
function driftAt(seed: number, tokenId: string, nowMs: number): number {
  const hash = stableHash(seed, tokenId);
  let sum = 0;
  for (let i = 0; i < DRIFT_CYCLES.length; i++) {
    const { periodMs, weight } = DRIFT_CYCLES[i]!;
    // The first cycle keeps the phase it always had (hash mod 3600); the others take other digits of the hash.
    const phase = ((Math.floor(hash / 3600 ** i) % 3600) / 3600) * 2 * Math.PI;
    sum += weight * Math.sin((2 * Math.PI * (nowMs % periodMs)) / periodMs + phase);
  }
  return sum;
}

/** The reference price after drift, on its tick grid, two ticks inside (0, 1); and that tick. */
export function paperMid(shape: PaperBookShape, tokenId: string, reference: number, nowMs: number): { midMicros: number; tickMicros: number } {
  const drifted = (reference + shape.drift * driftAt(shape.seed, tokenId, nowMs)) * MICROS_PER_USD;
  const tick = tickFor(drifted, shape.tickRule);
  const onGrid = Math.round(drifted / tick) * tick;
  return { midMicros: Math.min(MICROS_PER_USD - 2 * tick, Math.max(2 * tick, onGrid)), tickMicros: tick };
}

/** Dollars (micro-USD) at the top level of a token's book: $1,000–$2,999, fixed by the seed. */
export const topDollarsMicros = (seed: number, tokenId: string) => (1_000 + (stableHash(seed, `size:${tokenId}`) % 2_000)) * MICROS_PER_USD;

/** Shares (micro) worth `dollarsMicros` at `priceMicros`, down to the 0.01 share step. */
const sharesWorth = (dollarsMicros: number, priceMicros: number) => Math.floor((dollarsMicros * 100) / priceMicros) * SHARE_STEP;

export function paperBook(shape: PaperBookShape, tokenId: string, reference: number | undefined, nowMs: number): OrderBook {
  if (reference === undefined) return { tokenId, bids: [], asks: [], lastTradeMicros: null, tickMicros: tickFor(0, shape.tickRule) };
  const { midMicros, tickMicros } = paperMid(shape, tokenId, reference, nowMs);
  const top = topDollarsMicros(shape.seed, tokenId);
  const bids: BookLevel[] = [];
  const asks: BookLevel[] = [];
  for (let level = 0; level < LEVELS; level++) {
    const dollars = top * (level + 1);
    const bid = midMicros - tickMicros * (level + 1);
    const ask = midMicros + tickMicros * (level + 1);
    if (bid >= tickMicros) bids.push({ priceMicros: bid, sizeMicros: sharesWorth(dollars, bid) });
    if (ask <= MICROS_PER_USD - tickMicros) asks.push({ priceMicros: ask, sizeMicros: sharesWorth(dollars, ask) });
  }
  return { tokenId, bids, asks, lastTradeMicros: midMicros, tickMicros };
}

/**
 * The book of a token's complement (a ladder threshold's No against its Yes): what buys one sells
 * the other, at 1 − the price, as the live venue's matching of complementary orders makes them.
 */
export function mirrorBook(book: OrderBook, tokenId: string): OrderBook {
  const flip = (l: BookLevel) => ({ priceMicros: MICROS_PER_USD - l.priceMicros, sizeMicros: l.sizeMicros });
  return { tokenId, bids: book.asks.map(flip), asks: book.bids.map(flip), lastTradeMicros: book.lastTradeMicros === null ? null : MICROS_PER_USD - book.lastTradeMicros, tickMicros: book.tickMicros };
}

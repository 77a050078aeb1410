/**
 * A partial sale keeps the position's shape: every band sells the same fraction of its free shares
 * (each rounded down to the venue's share step), and no band is left with an order, or a remainder,
 * under the venue minimum — a remainder that small could never be sold, so the next 100% sale would
 * strand it, and selling the band out instead (as sales once did) changes what the position pays.
 * A percentage that would break this is refused with the range that works. Pure.
 */
import type { VenueRules } from '../valuation/index.ts';

/** Micro-shares of `free` that `percentage`% sells: floored to the share step, exact in BigInt. */
export function portion(free: number, percentage: number, rules: VenueRules): number {
  if (percentage >= 100) return free - (free % rules.shareStepMicros);
  const raw = (BigInt(free) * BigInt(Math.round(percentage * 10_000))) / 1_000_000n;
  return Number(raw - (raw % BigInt(rules.shareStepMicros)));
}

export interface ShapeBreak {
  bandIndex: number;
  /** The band's order would be under the minimum, or its remainder would be. */
  problem: 'order-under-minimum' | 'remainder-under-minimum';
  /** Micro-shares of the order (order-under-minimum) or of the remainder. */
  sharesMicros: number;
}

/** The first band a partial sale of `percentage`% would break, or null when it keeps the shape. */
export function shapeBreak(bands: { bandIndex: number; freeMicros: number }[], percentage: number, rules: VenueRules): ShapeBreak | null {
  if (percentage >= 100) return null;
  for (const band of bands) {
    if (band.freeMicros <= 0) continue;
    const sold = portion(band.freeMicros, percentage, rules);
    if (sold < rules.minOrderMicros) return { bandIndex: band.bandIndex, problem: 'order-under-minimum', sharesMicros: sold };
    const left = band.freeMicros - sold;
    if (left < rules.minOrderMicros) return { bandIndex: band.bandIndex, problem: 'remainder-under-minimum', sharesMicros: left };
  }
  return null;
}

/**
 * The partial percentages (two decimals) that keep the shape: [lowest, highest], or null when only a
 * 100% sale works. Found from each band's bounds, then checked with `shapeBreak` itself.
 */
export function partialSaleRange(bands: { bandIndex: number; freeMicros: number }[], rules: VenueRules): { lowest: number; highest: number } | null {
  const held = bands.filter((b) => b.freeMicros > 0);
  if (!held.length) return null;
  // order ≥ min  ⇔  p ≥ 100·min/free;   remainder ≥ min  ⇔  p < 100·(step-floored(free − min) + step)/free.
  let low = 1;
  let high = 100;
  for (const b of held) {
    low = Math.max(low, (100 * rules.minOrderMicros) / b.freeMicros);
    const keep = b.freeMicros - rules.minOrderMicros;
    const top = keep < 0 ? 0 : keep - (keep % rules.shareStepMicros) + rules.shareStepMicros;
    high = Math.min(high, (100 * top) / b.freeMicros);
  }
  let lowest = Math.ceil(low * 100) / 100;
  let highest = Math.min(99.99, Math.floor(high * 100) / 100);
  // The bounds are exact up to float rounding: settle them with the check the sale itself uses.
  while (lowest <= highest && shapeBreak(held, lowest, rules)) lowest = Math.round(lowest * 100 + 1) / 100;
  while (highest >= lowest && shapeBreak(held, highest, rules)) highest = Math.round(highest * 100 - 1) / 100;
  return lowest <= highest ? { lowest, highest } : null;
}

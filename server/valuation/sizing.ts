/**
 * Sizing a buy (decisions §7): the largest number of units whose cost, walking every band's ask
 * levels from the best, fits the amount; band i gets w(i)·U shares rounded down to the venue's share
 * step. Everything is integer: micro-USD, micro-shares (1 share = 1,000,000), and prices in micro-USD
 * per share. Products run in BigInt, so nothing is lost to floating point.
 */
export const MICRO = 1_000_000;

export interface BookLevel {
  /** Micro-USD per share, e.g. 570000 for 0.57. */
  priceMicros: number;
  /** Micro-shares available at this price. */
  sizeMicros: number;
}

export interface VenueRules {
  /** Shares are traded in multiples of this many micro-shares (e.g. 10,000 = 0.01 share). */
  shareStepMicros: number;
  /** An order below this many micro-shares is refused by the venue (e.g. 5 shares). */
  minOrderMicros: number;
}

/** Takes up to `shares` from `levels` (best first): shares filled and Σ shares·price (micro² units). */
function walk(levels: BookLevel[], shares: number): { filled: bigint; amount: bigint; remaining: bigint } {
  let remaining = BigInt(shares);
  let amount = 0n;
  for (const level of levels) {
    if (remaining === 0n) break;
    const take = remaining < BigInt(level.sizeMicros) ? remaining : BigInt(level.sizeMicros);
    amount += take * BigInt(level.priceMicros);
    remaining -= take;
  }
  return { filled: BigInt(shares) - remaining, amount, remaining };
}

/** Cost in micro-USD of taking `shares` micro-shares from `levels` (best first), or null if too thin. */
export function costToBuy(levels: BookLevel[], shares: number): number | null {
  const { amount, remaining } = walk(levels, shares);
  if (remaining > 0n) return null;
  // Round a fraction of a micro-USD up: the buyer never pays less than the book says.
  return Number((amount + BigInt(MICRO) - 1n) / BigInt(MICRO));
}

/** Proceeds in micro-USD of selling `shares` into `levels` (best bid first), rounded down. */
export function proceedsOfSale(levels: BookLevel[], shares: number): { proceeds: number; filled: number } {
  const { amount, filled } = walk(levels, shares);
  return { proceeds: Number(amount / BigInt(MICRO)), filled: Number(filled) };
}

/** Micro-shares of band i for U micro-units: w·U rounded down to the share step. */
export function sharesFor(weight: number, unitsMicros: number, rules: VenueRules): number {
  const raw = Math.floor(weight * unitsMicros + 1e-6);
  return raw - (raw % rules.shareStepMicros);
}

export interface BandOrderPlan {
  bandIndex: number;
  shares: number;
  cost: number;
}

export interface BuyPlan {
  unitsMicros: number;
  bands: BandOrderPlan[];
  totalCostMicros: number;
}

/** The plan for U units, or null when some band's book is too thin for it. */
export function planForUnits(weights: number[], asks: BookLevel[][], unitsMicros: number, rules: VenueRules): BuyPlan | null {
  const bands: BandOrderPlan[] = [];
  let total = 0;
  for (let i = 0; i < weights.length; i++) {
    const shares = sharesFor(weights[i]!, unitsMicros, rules);
    const cost = shares === 0 ? 0 : costToBuy(asks[i]!, shares);
    if (cost === null) return null;
    bands.push({ bandIndex: i, shares, cost });
    total += cost;
  }
  return { unitsMicros, bands, totalCostMicros: total };
}

/**
 * Smallest units at which every band with a positive weight reaches the venue's minimum order.
 * Infinity when a weight is so small that no realistic size gets its band to the minimum.
 */
export function minimumUnits(weights: number[], rules: VenueRules): number {
  let units = 0;
  for (const w of weights) {
    if (w <= 0) continue;
    // Smallest U with floor-to-step(w·U) ≥ minOrder.
    const needed = Math.ceil(rules.minOrderMicros / w - 1e-6);
    if (!(needed <= Number.MAX_SAFE_INTEGER / 4)) return Number.POSITIVE_INFINITY;
    let u = Math.max(needed, 1);
    while (sharesFor(w, u, rules) < rules.minOrderMicros) u++;
    units = Math.max(units, u);
  }
  return units;
}

export type SizingResult =
  | { ok: true; plan: BuyPlan; minimumAmountMicros: number }
  | { ok: false; reason: 'below-minimum' | 'no-liquidity'; minimumAmountMicros: number | null };

/**
 * The largest plan whose total cost is ≤ amountMicros. Cost grows with U, so a binary search over U
 * finds it; U is searched in whole share steps of the smallest weight's band, then refined per unit.
 */
export function sizeBuy(weights: number[], asks: BookLevel[][], amountMicros: number, rules: VenueRules): SizingResult {
  const minUnits = minimumUnits(weights, rules);
  if (!Number.isFinite(minUnits)) return { ok: false, reason: 'below-minimum', minimumAmountMicros: null };
  const minimumPlan = planForUnits(weights, asks, minUnits, rules);
  const minimumAmountMicros = minimumPlan?.totalCostMicros ?? null;
  if (!minimumPlan) return { ok: false, reason: 'no-liquidity', minimumAmountMicros };
  if (minimumPlan.totalCostMicros > amountMicros) return { ok: false, reason: 'below-minimum', minimumAmountMicros };

  const fits = (u: number) => {
    const plan = planForUnits(weights, asks, u, rules);
    return plan !== null && plan.totalCostMicros <= amountMicros ? plan : null;
  };
  let low = minUnits; // fits
  let high = minUnits * 2;
  while (fits(high)) {
    low = high;
    high *= 2;
    if (high > Number.MAX_SAFE_INTEGER / 4) break;
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid;
  }
  return { ok: true, plan: fits(low)!, minimumAmountMicros: minimumAmountMicros! };
}

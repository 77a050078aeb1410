/**
 * Sizing a buy (docs/decisions.md §7): the largest number of units whose most expensive fill fits the amount;
 * band i gets w(i)·U shares rounded down to the venue's share step. Each band's order is limited to
 * the worst ask level its shares reach (its `worstPrice`), so whatever the books do before the fill,
 * a band costs at most shares × worstPrice; sizing keeps Σ shares × worstPrice ≤ amount, so a buy can
 * never spend more than its amount. Against unchanged books it costs `totalCostMicros` (the walk).
 * Everything is integer: micro-USD, micro-shares (1 share = 1,000,000), and prices in micro-USD
 * per share. Products run in BigInt, so nothing is lost to floating point. The scale comes from
 * server/lib/money.ts, which imports nothing, so this module stays pure math.
 */
import { MICROS_PER_USD_BIGINT } from '../lib/money.ts';

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

/**
 * Takes up to `shares` from `levels` (best first): shares filled, Σ shares·price (micro² units), and
 * the price of the last level taken from (0 when nothing was taken).
 */
function walk(levels: BookLevel[], shares: number): { filled: bigint; amount: bigint; remaining: bigint; lastPrice: number } {
  let remaining = BigInt(shares);
  let amount = 0n;
  let lastPrice = 0;
  for (const level of levels) {
    if (remaining === 0n) break;
    const take = remaining < BigInt(level.sizeMicros) ? remaining : BigInt(level.sizeMicros);
    if (take === 0n) continue;
    amount += take * BigInt(level.priceMicros);
    remaining -= take;
    lastPrice = level.priceMicros;
  }
  return { filled: BigInt(shares) - remaining, amount, remaining, lastPrice };
}

/** micro² → micro-USD, a fraction rounded up: the buyer never pays less than the book says. */
const ceilMicros = (amount: bigint) => Number((amount + MICROS_PER_USD_BIGINT - 1n) / MICROS_PER_USD_BIGINT);

/** Cost in micro-USD of taking `shares` micro-shares from `levels` (best first), or null if too thin. */
export function costToBuy(levels: BookLevel[], shares: number): number | null {
  const { amount, remaining } = walk(levels, shares);
  return remaining > 0n ? null : ceilMicros(amount);
}

/** Proceeds in micro-USD of selling `shares` into `levels` (best bid first), rounded down. */
export function proceedsOfSale(levels: BookLevel[], shares: number): { proceeds: number; filled: number } {
  const { amount, filled } = walk(levels, shares);
  return { proceeds: Number(amount / MICROS_PER_USD_BIGINT), filled: Number(filled) };
}

/** Micro-shares of band i for U micro-units: w·U rounded down to the share step. */
export function sharesFor(weight: number, unitsMicros: number, rules: VenueRules): number {
  const raw = Math.floor(weight * unitsMicros + 1e-6);
  return raw - (raw % rules.shareStepMicros);
}

export interface BandOrderPlan {
  bandIndex: number;
  /** Micro-shares to buy (0: the band gets no order). */
  shares: number;
  /** Micro-USD these shares cost, walking the asks from the best. */
  cost: number;
  /** The order's limit: the price of the worst ask level the shares reach (0 when shares is 0). */
  worstPrice: number;
  /** shares × worstPrice, rounded up: the most this band's order can cost, whatever the book does. */
  maxCost: number;
}

export interface BuyPlan {
  unitsMicros: number;
  bands: BandOrderPlan[];
  /** What the plan costs against the books it was sized on (Σ cost). */
  totalCostMicros: number;
  /** The most its orders can spend (Σ maxCost); sizing keeps it within the amount. */
  maxCostMicros: number;
}

/**
 * How a position's band shares are held as venue tokens: band shares in, token shares out (integer
 * micro-shares, each a multiple of the share step when the band shares are). A band event holds
 * each band as its token (the identity); a ladder its threshold tokens (ladder.ts `replicate`).
 * `asks` and the plan's entries follow the tokens' order.
 */
export type TokenHolding = (bandShares: number[]) => number[];
const asBands: TokenHolding = (bandShares) => bandShares;

/** The plan for U units, or null when some token's book is too thin for it. */
export function planForUnits(weights: number[], asks: BookLevel[][], unitsMicros: number, rules: VenueRules, holding: TokenHolding = asBands): BuyPlan | null {
  const bands: BandOrderPlan[] = [];
  let total = 0;
  let max = 0;
  // Each band's shares are rounded once, then held as tokens: what a band pays is the same however it is held.
  const tokenShares = holding(weights.map((w) => sharesFor(w, unitsMicros, rules)));
  for (let i = 0; i < tokenShares.length; i++) {
    const shares = tokenShares[i]!;
    const walked = walk(asks[i]!, shares);
    if (walked.remaining > 0n) return null;
    const band = { bandIndex: i, shares, cost: ceilMicros(walked.amount), worstPrice: walked.lastPrice, maxCost: ceilMicros(BigInt(shares) * BigInt(walked.lastPrice)) };
    bands.push(band);
    total += band.cost;
    max += band.maxCost;
  }
  return { unitsMicros, bands, totalCostMicros: total, maxCostMicros: max };
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

/**
 * The smallest units at which every token a holding buys reaches the venue's minimum: found from the
 * tokens' per-unit amounts (the holding of the weights themselves), then checked on the rounded
 * shares; where rounding leaves a token short, the units at which a token cannot be short (its
 * amount × U exceeds the minimum by two steps, the most two roundings take).
 */
function minimumHeldUnits(weights: number[], rules: VenueRules, holding: TokenHolding): number {
  const amounts = holding(weights).map((a) => (a > 1e-12 ? a : 0));
  const tokensAt = (u: number) => holding(weights.map((w) => sharesFor(w, u, rules)));
  const reaches = (u: number) => tokensAt(u).every((shares, i) => amounts[i] === 0 || shares >= rules.minOrderMicros);
  const first = minimumUnits(amounts, rules);
  if (!Number.isFinite(first) || reaches(first)) return first;
  const safe = Math.max(...amounts.filter((a) => a > 0).map((a) => Math.ceil((rules.minOrderMicros + 2 * rules.shareStepMicros) / a)));
  return reaches(safe) ? safe : Number.POSITIVE_INFINITY;
}

export type SizingResult =
  | { ok: true; plan: BuyPlan; minimumAmountMicros: number }
  | { ok: false; reason: 'below-minimum' | 'no-liquidity'; minimumAmountMicros: number | null };

/**
 * The largest plan whose most expensive fill (maxCostMicros) is ≤ amountMicros. It grows with U (more
 * shares never reach a better level), so a binary search over U finds it. The minimum amount is the
 * smallest plan's maxCostMicros: the least amount a buy of this event and side accepts.
 */
export function sizeBuy(weights: number[], asks: BookLevel[][], amountMicros: number, rules: VenueRules, holding: TokenHolding = asBands): SizingResult {
  const minUnits = holding === asBands ? minimumUnits(weights, rules) : minimumHeldUnits(weights, rules, holding);
  if (!Number.isFinite(minUnits)) return { ok: false, reason: 'below-minimum', minimumAmountMicros: null };
  const minimumPlan = planForUnits(weights, asks, minUnits, rules, holding);
  const minimumAmountMicros = minimumPlan?.maxCostMicros ?? null;
  if (!minimumPlan) return { ok: false, reason: 'no-liquidity', minimumAmountMicros };
  if (minimumPlan.maxCostMicros > amountMicros) return { ok: false, reason: 'below-minimum', minimumAmountMicros };

  const fits = (u: number) => {
    const plan = planForUnits(weights, asks, u, rules, holding);
    return plan !== null && plan.maxCostMicros <= amountMicros ? plan : null;
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

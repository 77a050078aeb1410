/**
 * Market quote of an event (docs/decisions.md §6): band prices, costs per $1 of exposure, best and worst
 * returns, bid/ask slippage per side, the per-band breakdown and the implied valuation.
 * Pure: numbers in, numbers out.
 */
import { longWeights, shortWeights, type Floors } from './weights.ts';

export interface BandMarket {
  label: string;
  /** Billions of USD; a "No IPO" band is 0..0; the open top band has max null. */
  minValuation: number;
  maxValuation: number | null;
  /** Best bid (0 when none) and best ask (1 when none). */
  bid: number;
  ask: number;
  /** Last trade price, if the band has traded. */
  lastTrade?: number | null;
}

/** A "No IPO" outcome: the band 0..0. */
export const isNoIpoBand = (b: Pick<BandMarket, 'minValuation' | 'maxValuation'>) => b.minValuation === 0 && b.maxValuation === 0;

/** Spreads wider than this make the midpoint meaningless; the last trade is used instead. */
export const MAX_MIDPOINT_SPREAD = 0.1;

/** Band price: the midpoint when the spread is ≤ 0.10, else the last trade (the midpoint while none). */
export function bandPrice(b: Pick<BandMarket, 'bid' | 'ask' | 'lastTrade'>): number {
  const mid = (b.bid + b.ask) / 2;
  // A small tolerance so that a spread of exactly 0.10 in decimal counts as 0.10.
  if (b.ask - b.bid <= MAX_MIDPOINT_SPREAD + 1e-9) return mid;
  return b.lastTrade ?? mid;
}

/** Midpoint in billions: (min+max)/2; a bottom band from 0: max/2; the open top band: 1.25·min. */
export function bandMidpoint(b: Pick<BandMarket, 'minValuation' | 'maxValuation'>): number {
  if (b.maxValuation === null) return 1.25 * b.minValuation;
  if (b.minValuation === 0) return b.maxValuation / 2;
  return (b.minValuation + b.maxValuation) / 2;
}

/** Σ p·m / Σ p over bands other than No IPO; null when those prices sum to 0. */
export function impliedValuation(bands: Array<Pick<BandMarket, 'minValuation' | 'maxValuation'> & { price: number }>): number | null {
  let weighted = 0;
  let total = 0;
  for (const b of bands) {
    if (isNoIpoBand(b)) continue;
    weighted += b.price * bandMidpoint(b);
    total += b.price;
  }
  return total > 0 ? weighted / total : null;
}

const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

export interface SideSlippage {
  buyCost: number;
  sellValue: number;
  spread: number;
  spreadPercent: number;
}

function slippage(weights: number[], bids: number[], asks: number[]): SideSlippage {
  const buyCost = dot(weights, asks);
  const sellValue = dot(weights, bids);
  const spread = buyCost - sellValue;
  return { buyCost, sellValue, spread, spreadPercent: buyCost === 0 ? 0 : (spread / buyCost) * 100 };
}

/** (payoff/cost − 1)·100, or null when the cost is 0 (nothing to return on). */
const returnPercent = (payoff: number, cost: number) => (cost > 0 ? (payoff / cost - 1) * 100 : null);

export function quoteEvent(bands: BandMarket[], floors: Floors) {
  const n = bands.length;
  if (n === 0) throw new RangeError('an event needs at least one band');
  const wL = longWeights(n, floors.floorL);
  const wS = shortWeights(n, floors.floorS);
  const prices = bands.map(bandPrice);
  const bids = bands.map((b) => b.bid);
  const asks = bands.map((b) => b.ask);
  const longCost = dot(wL, prices);
  const shortCost = dot(wS, prices);

  const breakdown = bands.map((b, i) => {
    const longCostContrib = wL[i]! * prices[i]!;
    const shortCostContrib = wS[i]! * prices[i]!;
    return {
      bandIndex: i,
      label: b.label,
      minValuation: b.minValuation,
      maxValuation: b.maxValuation,
      midpoint: bandMidpoint(b),
      price: prices[i]!,
      longWeight: wL[i]!,
      shortWeight: wS[i]!,
      longCostContrib,
      shortCostContrib,
      longAllocation: longCost > 0 ? longCostContrib / longCost : 0,
      shortAllocation: shortCost > 0 ? shortCostContrib / shortCost : 0,
      longReturnIfWins: returnPercent(wL[i]!, longCost),
      shortReturnIfWins: returnPercent(wS[i]!, shortCost),
    };
  });

  return {
    prices,
    weights: { long: wL, short: wS },
    valuation: {
      longCost,
      shortCost,
      bestLongReturn: returnPercent(1, longCost),
      worstLongReturn: returnPercent(floors.floorL, longCost),
      bestShortReturn: returnPercent(1, shortCost),
      worstShortReturn: returnPercent(floors.floorS, shortCost),
    },
    slippage: {
      long: slippage(wL, bids, asks),
      short: slippage(wS, bids, asks),
      bandPrices: bands.map((b, i) => ({ bandIndex: i, bid: b.bid, ask: b.ask })),
    },
    breakdown,
    impliedValuation: impliedValuation(bands.map((b, i) => ({ ...b, price: prices[i]! }))),
  };
}

/**
 * Ladder events quote "above $X" markets; band k = [X_k, X_k+1) has P(>X_k) − P(>X_k+1). Thresholds
 * ascending; the bottom band [0, X_0) gets 1 − P(>X_0). Negative differences (crossed markets) are 0.
 */
export function ladderToBandProbabilities(aboveProbabilities: number[]): number[] {
  const p = [1, ...aboveProbabilities, 0];
  return p.slice(0, -1).map((value, i) => Math.max(0, value - p[i + 1]!));
}

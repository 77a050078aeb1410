/** The shared valuation module (docs/decisions.md §6 and the sizing rules of §7): examples and properties. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  bandMidpoint,
  bandPrice,
  costToBuy,
  impliedValuation,
  ladderToBandProbabilities,
  longWeights,
  minimumUnits,
  planForUnits,
  proceedsOfSale,
  quoteEvent,
  shortWeights,
  sizeBuy,
  type BandMarket,
  type BookLevel,
} from '../../server/valuation/index.ts';

/** A band quoted exactly at `p` (bid = ask = p). */
const at = (p: number, i: number, n: number): BandMarket => ({
  label: `b${i}`,
  minValuation: i === 0 ? 0 : i * 100,
  maxValuation: i === n - 1 ? null : (i + 1) * 100,
  bid: p,
  ask: p,
});
const event = (prices: number[]) => prices.map((p, i) => at(p, i, prices.length));

describe('weights', () => {
  test('LONG runs from the floor to 1; SHORT mirrors it', () => {
    expect(longWeights(5, 0.2)).toEqual([0.2, 0.4, 0.6000000000000001, 0.8, 1]);
    expect(shortWeights(5, 0.2).map((w) => +w.toFixed(12))).toEqual([1, 0.8, 0.6, 0.4, 0.2]);
  });
  test('one band: both weights are 1', () => {
    expect(longWeights(1, 0.3)).toEqual([1]);
    expect(shortWeights(1, 0.3)).toEqual([1]);
  });
  test('two bands: the floor, then 1', () => {
    expect(longWeights(2, 0.25)).toEqual([0.25, 1]);
    expect(shortWeights(2, 0.25)).toEqual([1, 0.25]);
  });
  test('floors 0 and 1', () => {
    expect(longWeights(3, 0)).toEqual([0, 0.5, 1]);
    expect(longWeights(3, 1)).toEqual([1, 1, 1]);
  });
  test('floors outside [0, 1] are refused', () => {
    expect(() => longWeights(3, -0.1)).toThrow('floorL');
    expect(() => shortWeights(3, 1.5)).toThrow('floorS');
    expect(() => longWeights(3, Number.NaN)).toThrow();
  });
});

describe('quote', () => {
  test('the worked check of docs/decisions.md §6', () => {
    const q = quoteEvent(event([0.047, 0.05, 0.033, 0.03, 0.047, 0.082, 0.16, 0.57]), { floorL: 0.2, floorS: 0.15 });
    expect(q.valuation.longCost.toFixed(4)).toBe('0.8614');
    expect(q.valuation.shortCost.toFixed(4)).toBe('0.3203');
    expect(q.valuation.bestLongReturn!).toBeCloseTo((1 / q.valuation.longCost - 1) * 100, 10);
    expect(q.valuation.worstLongReturn!).toBeCloseTo((0.2 / q.valuation.longCost - 1) * 100, 10);
    expect(q.valuation.worstShortReturn!).toBeCloseTo((0.15 / q.valuation.shortCost - 1) * 100, 10);
  });

  test('prices need not sum to 1; costs follow the prices as they are', () => {
    const q = quoteEvent(event([0.5, 0.5, 0.5]), { floorL: 0, floorS: 0 });
    expect(q.valuation.longCost).toBeCloseTo(0.75, 12);
    expect(q.valuation.shortCost).toBeCloseTo(0.75, 12);
  });

  test('empty book sides: bid 0 and ask 1 give the widest spread', () => {
    const bands: BandMarket[] = [
      { label: 'a', minValuation: 0, maxValuation: 100, bid: 0, ask: 1 },
      { label: 'b', minValuation: 100, maxValuation: null, bid: 0, ask: 1 },
    ];
    const q = quoteEvent(bands, { floorL: 0.2, floorS: 0.2 });
    expect(q.slippage.long).toEqual({ buyCost: 1.2, sellValue: 0, spread: 1.2, spreadPercent: 100 });
    expect(q.prices).toEqual([0.5, 0.5]); // no trade yet: the midpoint
  });

  test('band price: midpoint within 0.10 of spread, else the last trade', () => {
    expect(bandPrice({ bid: 0.4, ask: 0.5 })).toBeCloseTo(0.45, 12);
    expect(bandPrice({ bid: 0.4, ask: 0.6, lastTrade: 0.58 })).toBe(0.58);
    expect(bandPrice({ bid: 0.4, ask: 0.6 })).toBeCloseTo(0.5, 12);
  });

  test('slippage: buy at asks, sell at bids', () => {
    const bands: BandMarket[] = [
      { label: 'a', minValuation: 0, maxValuation: 100, bid: 0.3, ask: 0.32 },
      { label: 'b', minValuation: 100, maxValuation: null, bid: 0.6, ask: 0.64 },
    ];
    const { long, short } = quoteEvent(bands, { floorL: 0.5, floorS: 0.25 }).slippage;
    expect(long.buyCost).toBeCloseTo(0.5 * 0.32 + 0.64, 12);
    expect(long.sellValue).toBeCloseTo(0.5 * 0.3 + 0.6, 12);
    expect(long.spreadPercent).toBeCloseTo(((long.buyCost - long.sellValue) / long.buyCost) * 100, 12);
    expect(short.buyCost).toBeCloseTo(0.32 + 0.25 * 0.64, 12);
  });

  test('midpoints and the implied valuation skip the No IPO band', () => {
    expect(bandMidpoint({ minValuation: 0, maxValuation: 1000 })).toBe(500);
    expect(bandMidpoint({ minValuation: 1000, maxValuation: 1200 })).toBe(1100);
    expect(bandMidpoint({ minValuation: 2000, maxValuation: null })).toBe(2500);
    const implied = impliedValuation([
      { minValuation: 0, maxValuation: 0, price: 0.5 },
      { minValuation: 0, maxValuation: 100, price: 0.25 },
      { minValuation: 100, maxValuation: null, price: 0.25 },
    ]);
    expect(implied).toBeCloseTo((0.25 * 50 + 0.25 * 125) / 0.5, 12);
  });

  test('ladder "above $X" prices become exclusive band probabilities', () => {
    expect(ladderToBandProbabilities([0.8, 0.5, 0.1]).map((p) => +p.toFixed(12))).toEqual([0.2, 0.3, 0.4, 0.1]);
    expect(ladderToBandProbabilities([0.3, 0.4])).toEqual([0.7, 0, 0.4]); // crossed markets never go negative
  });
});

describe('properties', () => {
  // Venue prices sit on a tick grid (0.01; 0.001 on some markets), never denormal.
  const tick = fc.integer({ min: 0, max: 1000 }).map((t) => t / 1000);
  const prices = (n: number) => fc.array(tick, { minLength: n, maxLength: n });
  const floor = fc.double({ min: 0, max: 1, noNaN: true });

  test('with equal floors, wL + wS = 1 + f in every band', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), floor, (n, f) => {
        const wL = longWeights(n, f);
        const wS = shortWeights(n, f);
        return wL.every((w, i) => Math.abs(w + wS[i]! - (1 + f)) < 1e-12);
      }),
    );
  });

  test('payoff: the top band pays 1 and the bottom pays the floor (mirrored for SHORT)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), floor, (n, f) => {
        const wL = longWeights(n, f);
        const wS = shortWeights(n, f);
        return Math.abs(wL[n - 1]! - 1) < 1e-12 && Math.abs(wL[0]! - f) < 1e-12 && Math.abs(wS[0]! - 1) < 1e-12 && Math.abs(wS[n - 1]! - f) < 1e-12;
      }),
    );
  });

  test('the cost never falls as the floor rises', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(prices(n), floor, floor)), ([p, a, b]) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const cheap = quoteEvent(event(p), { floorL: lo, floorS: lo }).valuation;
        const dear = quoteEvent(event(p), { floorL: hi, floorS: hi }).valuation;
        return dear.longCost >= cheap.longCost - 1e-12 && dear.shortCost >= cheap.shortCost - 1e-12;
      }),
    );
  });

  test('returns agree with costs; buy cost ≥ sell value whenever bid ≤ ask', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(prices(n), prices(n), floor, floor)), ([a, b, fL, fS]) => {
        const bands = a.map((x, i) => ({ ...at(0, i, a.length), bid: Math.min(x, b[i]!), ask: Math.max(x, b[i]!) }));
        const q = quoteEvent(bands, { floorL: fL, floorS: fS });
        const v = q.valuation;
        const ok = (r: number | null, payoff: number, cost: number) => (cost === 0 ? r === null : Math.abs(r! - (payoff / cost - 1) * 100) < 1e-6 * Math.max(1, Math.abs(r!)));
        return (
          ok(v.bestLongReturn, 1, v.longCost) &&
          ok(v.worstLongReturn, fL, v.longCost) &&
          ok(v.bestShortReturn, 1, v.shortCost) &&
          ok(v.worstShortReturn, fS, v.shortCost) &&
          q.slippage.long.buyCost >= q.slippage.long.sellValue - 1e-12 &&
          q.slippage.short.buyCost >= q.slippage.short.sellValue - 1e-12
        );
      }),
    );
  });
});

describe('sizing', () => {
  const rules = { shareStepMicros: 10_000, minOrderMicros: 5_000_000 };
  const level = (price: number, shares: number): BookLevel => ({ priceMicros: Math.round(price * 1e6), sizeMicros: shares * 1e6 });

  test('walking the book: cost rounds up to the micro-USD, proceeds round down', () => {
    const asks = [level(0.5, 10), level(0.6, 10)];
    expect(costToBuy(asks, 15_000_000)).toBe(8_000_000); // 10 × 0.5 + 5 × 0.6
    expect(costToBuy(asks, 21_000_000)).toBeNull();
    expect(costToBuy([{ priceMicros: 333_333, sizeMicros: 10_000_000 }], 10_000)).toBe(3334);
    expect(proceedsOfSale([level(0.4, 5)], 7_000_000)).toEqual({ proceeds: 2_000_000, filled: 5_000_000 });
  });

  test('the minimum is set by the band with the smallest positive weight', () => {
    expect(minimumUnits([0.2, 0.6, 1], rules)).toBe(25_000_000); // 5 shares / 0.2
    expect(minimumUnits([0, 0.5, 1], rules)).toBe(10_000_000); // a zero-weight band places no order
  });

  test('buys the most units that fit, on deep and on thin books', () => {
    const weights = longWeights(3, 0.2);
    const deep = weights.map(() => [level(0.3, 1_000_000)]);
    const result = sizeBuy(weights, deep, 100_000_000, rules);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.totalCostMicros).toBeLessThanOrEqual(100_000_000);
    // One more unit step would not fit (≈ amount / buyCost on a deep book).
    const next = planForUnits(weights, deep, result.plan.unitsMicros + 1, rules)!;
    expect(next.totalCostMicros).toBeGreaterThan(100_000_000);
    expect(result.plan.unitsMicros / 1e6).toBeCloseTo(100 / (0.3 * (0.2 + 0.6 + 1)), 0);

    const thin = weights.map(() => [level(0.3, 20), level(0.9, 1_000_000)]);
    const walked = sizeBuy(weights, thin, 100_000_000, rules);
    expect(walked.ok && walked.plan.unitsMicros < result.plan.unitsMicros).toBe(true);
  });

  test('a floor so small that no size reaches the minimum order is refused without a minimum', () => {
    expect(sizeBuy(longWeights(3, 5e-324), [[level(0.3, 1000)], [level(0.3, 1000)], [level(0.3, 1000)]], 1e9, rules)).toEqual({
      ok: false,
      reason: 'below-minimum',
      minimumAmountMicros: null,
    });
  });

  test('below the minimum amount, or without liquidity, nothing is planned and the minimum is stated', () => {
    const weights = longWeights(3, 0.2);
    const books = weights.map(() => [level(0.3, 1000)]);
    const small = sizeBuy(weights, books, 1_000_000, rules);
    expect(small).toMatchObject({ ok: false, reason: 'below-minimum' });
    expect(small.minimumAmountMicros).toBe(planForUnits(weights, books, 25_000_000, rules)!.maxCostMicros);
    expect(sizeBuy(weights, [[], [level(0.3, 1000)], [level(0.3, 1000)]], 50_000_000, rules)).toMatchObject({ ok: false, reason: 'no-liquidity' });
  });

  test('the spend bound: shares × the limit (worst level reached) fits the amount, not only the walk', () => {
    const weights = [1];
    const asks = [[level(0.5, 10), level(0.6, 1000)]];
    // $20 walking the book buys 10 × 0.5 + 25 × 0.6 = $20 for 35 shares; but a FOK limited at 0.6
    // may pay 0.6 for all 35 ($21) if the 0.5 level is gone by the fill. The plan keeps 35 × 0.6 ≤ 20.
    const result = sizeBuy(weights, asks, 20_000_000, rules);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [band] = result.plan.bands;
    expect(band).toEqual({ bandIndex: 0, shares: 33_330_000, cost: 18_998_000, worstPrice: 600_000, maxCost: 19_998_000 });
    expect(result.plan).toMatchObject({ totalCostMicros: 18_998_000, maxCostMicros: 19_998_000 });
    // One share step more would put the bound over the amount.
    expect(planForUnits(weights, asks, 33_340_000, rules)!.maxCostMicros).toBeGreaterThan(20_000_000);
    // The minimum amount is the smallest plan's bound (5 shares at 0.5).
    expect(result.minimumAmountMicros).toBe(2_500_000);
  });

  test('property: the plan is the largest that fits, by brute force over nearby units', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 5, max: 400 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 300 })), { minLength: 1, maxLength: 4 }),
        (n, f, dollars, levels) => {
          const weights = longWeights(n, f);
          const book = levels.map(([cents, shares]) => level(cents / 100, shares)).sort((a, b) => a.priceMicros - b.priceMicros);
          const asks = weights.map(() => book);
          const result = sizeBuy(weights, asks, dollars * 1e6, rules);
          if (!result.ok) return true;
          const { unitsMicros, totalCostMicros, maxCostMicros, bands } = result.plan;
          // Never more than the amount, whatever price within its limit each band fills at.
          if (maxCostMicros > dollars * 1e6 || totalCostMicros > maxCostMicros) return false;
          if (bands.some((b) => b.shares % rules.shareStepMicros !== 0)) return false;
          if (bands.some((b, i) => weights[i]! > 0 && b.shares < rules.minOrderMicros)) return false;
          for (const b of bands) {
            if (b.shares === 0) continue;
            // The limit is a level of the book, and an order limited there fills for exactly `cost`.
            if (!book.some((l) => l.priceMicros === b.worstPrice)) return false;
            if (costToBuy(book.filter((l) => l.priceMicros <= b.worstPrice), b.shares) !== b.cost) return false;
            if (b.maxCost < Math.ceil((b.shares * b.worstPrice) / 1e6 - 1e-9)) return false;
          }
          for (let step = 1; step <= 50; step++) {
            const plan = planForUnits(weights, asks, unitsMicros + step * 1000, rules);
            if (plan && plan.maxCostMicros <= dollars * 1e6) return false;
          }
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });
});

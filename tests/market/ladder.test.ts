/**
 * The ladder module (server/valuation/ladder.ts), by its properties: the replication's token amounts
 * are never negative and pay exactly the weights band by band (in floating point for per-unit
 * amounts, to the micro-share for rounded shares); sizing a ladder buy never spends more than the
 * amount and gets every token it uses to the venue minimum; a derived band book is the difference of
 * its thresholds' tops.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  bandExposure,
  eventTokens,
  ladderBandBooks,
  ladderTokenId,
  parseLadderTokenId,
  replicate,
  sharesFor,
  sizeBuy,
  tokenPays,
  weightsFor,
  type BookLevel,
} from '../../server/valuation/index.ts';
import { PAPER_RULES } from '../../server/venues/paper.ts';

const bands = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `b${i}`, label: `band ${i}`, minValuation: i * 10 }));
const ladder = (n: number) => ({ structure: 'ladder' as const, bands: bands(n) });
const sides = fc.constantFrom('LONG' as const, 'SHORT' as const);
const floorArb = fc.integer({ min: 0, max: 100 }).map((f) => f / 100);

/** Σ amountᵢ·payᵢ(k) for every band k. */
function paid(n: number, amounts: number[]): number[] {
  const tokens = eventTokens(ladder(n));
  return Array.from({ length: n }, (_, k) => tokens.reduce((sum, token, i) => sum + amounts[i]! * tokenPays(token.id, k, (id) => Number(id.slice(1))), 0));
}

describe('token ids', () => {
  test('a ladder token id names its band and outcome; a band id is no ladder token', () => {
    expect(parseLadderTokenId(ladderTokenId('pm-x-3', 'no'))).toEqual({ bandId: 'pm-x-3', outcome: 'no' });
    expect(parseLadderTokenId('12345')).toBeNull();
    expect(eventTokens(ladder(3)).map((t) => [t.id, t.index, t.label])).toEqual([
      ['b1:yes', 1, 'Yes: above $10B'],
      ['b2:yes', 2, 'Yes: above $20B'],
      ['b1:no', 3, 'No: above $10B'],
      ['b2:no', 4, 'No: above $20B'],
    ]);
    expect(eventTokens({ structure: 'bands', bands: bands(2) }).map((t) => t.id)).toEqual(['b0', 'b1']);
  });
});

describe('replication', () => {
  test('per-unit amounts are never negative and pay the weights band by band (LONG and SHORT, any floor)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), sides, floorArb, (n, side, floor) => {
        const weights = weightsFor(side, n, { floorL: floor, floorS: floor });
        const amounts = replicate('ladder', weights);
        expect(amounts.every((a) => a >= 0)).toBe(true);
        paid(n, amounts).forEach((p, k) => expect(p).toBeCloseTo(weights[k]!, 12));
      }),
    );
  });

  test('rounded band shares replicate exactly: integer token shares, on the step, paying each band its shares', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 12 }), sides, floorArb, fc.integer({ min: 5_000_000, max: 10_000_000_000 }), (n, side, floor, units) => {
        const s = weightsFor(side, n, { floorL: floor, floorS: floor }).map((w) => sharesFor(w, units, PAPER_RULES));
        const shares = replicate('ladder', s);
        for (const x of shares) {
          expect(Number.isInteger(x) && x >= 0 && x % PAPER_RULES.shareStepMicros === 0).toBe(true);
        }
        expect(paid(n, shares)).toEqual(s);
        const tokens = eventTokens(ladder(n));
        expect(bandExposure(tokens.map((t, i) => ({ tokenId: t.id, sharesMicros: shares[i]! })), bands(n).map((b) => b.id))).toEqual(s);
      }),
    );
  });

  test('a band event holds the weights themselves; weights a ladder cannot hold are refused', () => {
    expect(replicate('bands', [0.2, 0.6, 1])).toEqual([0.2, 0.6, 1]);
    expect(() => replicate('ladder', [0, 1, 0])).toThrow(RangeError);
  });
});

describe('sizing a ladder buy', () => {
  const book = (price: number): BookLevel[] => [1, 2, 3].map((l) => ({ priceMicros: price + l * 10_000, sizeMicros: 500_000_000 * l }));
  test('never spends more than the amount; every token it buys reaches the venue minimum; bands pay the rounded weights', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), sides, fc.integer({ min: 20, max: 2_000 }), (n, side, dollars) => {
        const weights = weightsFor(side, n, { floorL: 0.2, floorS: 0.15 });
        const used = replicate('ladder', weights)
          .map((a, i) => ({ a, i }))
          .filter((x) => x.a > 1e-12)
          .map((x) => x.i);
        const holding = (s: number[]) => {
          const all = replicate('ladder', s);
          return used.map((i) => all[i]!);
        };
        const asks = used.map((i) => book(100_000 + i * 20_000));
        const sized = sizeBuy(weights, asks, dollars * 1_000_000, PAPER_RULES, holding);
        if (!sized.ok) {
          expect(sized.reason).toBe('below-minimum');
          return;
        }
        expect(sized.plan.maxCostMicros).toBeLessThanOrEqual(dollars * 1_000_000);
        for (const token of sized.plan.bands) expect(token.shares).toBeGreaterThanOrEqual(PAPER_RULES.minOrderMicros);
        const all = new Array(2 * (n - 1)).fill(0);
        used.forEach((i, j) => (all[i] = sized.plan.bands[j]!.shares));
        expect(paid(n, all)).toEqual(weights.map((w) => sharesFor(w, sized.plan.unitsMicros, PAPER_RULES)));
      }),
      { numRuns: 60 },
    );
  });
});

describe('derived band books', () => {
  test("band k trades at the difference of its thresholds' tops; the ends at 1 − Yes₁ and Yesₙ", () => {
    const top = (bid: number, ask: number) => ({ bids: [{ priceMicros: bid, sizeMicros: 7_000_000 }], asks: [{ priceMicros: ask, sizeMicros: 9_000_000 }], lastTradeMicros: (bid + ask) / 2, tickMicros: 10_000 });
    const derived = ladderBandBooks([top(800_000, 820_000), top(500_000, 520_000), top(100_000, 110_000)]);
    expect(derived.map((b) => [b.bids[0]?.priceMicros ?? 0, b.asks[0]?.priceMicros ?? 1_000_000])).toEqual([
      [180_000, 200_000],
      [280_000, 320_000],
      [390_000, 420_000],
      [100_000, 110_000],
    ]);
    expect(derived[1]!.bids[0]!.sizeMicros).toBe(7_000_000); // what both legs' tops carry
    expect(derived[0]!.lastTradeMicros).toBe(190_000);
    // A missing book: no bid (0) and no ask (1) on its side of each difference.
    const open = ladderBandBooks([undefined]);
    expect(open.map((b) => [b.bids.length, b.asks.length])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });
});

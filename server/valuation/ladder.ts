/**
 * The tokens an event trades as, and how a position over bands is built from them (docs/trading.md
 * "Ladders"). Pure: numbers and ids in, numbers and ids out.
 *
 * A band event's tokens are its bands: band k's Yes token pays $1 when band k wins. A ladder event has
 * thresholds t₁ < … < tₙ (band i ≥ 1 starts at tᵢ; band 0 is "below t₁") and trades each threshold's
 * Yes and No token: Yesᵢ pays $1 when the winning band is ≥ i, Noᵢ when it is < i. A payoff of wₖ per
 * unit when band k wins is then
 *     w₀ + Σᵢ (wᵢ − wᵢ₋₁)·Yesᵢ      (a falling step −d·Yesᵢ is d·Noᵢ − d)
 * so a position holds max(0, dᵢ) Yesᵢ and max(0, −dᵢ) Noᵢ per unit, plus a riskless part
 * c = w₀ − Σ max(0, −dᵢ) held as c·(Yesₚ + Noₚ) at one threshold p: the first when the weights rise
 * (LONG: band 0 is then exactly No₁), the last when they fall (SHORT: band n is exactly Yesₙ).
 * c is w₀ for LONG and wₙ for SHORT, never negative for the weights positions use.
 */

/** Our id of a ladder threshold's token: the id of the band that starts at the threshold, and the outcome. */
export const ladderTokenId = (bandId: string, outcome: 'yes' | 'no') => `${bandId}:${outcome}`;

/** The band id and outcome of a ladder token id; null for any other id (a band's own token). */
export function parseLadderTokenId(tokenId: string): { bandId: string; outcome: 'yes' | 'no' } | null {
  const match = /^(.+):(yes|no)$/.exec(tokenId);
  return match ? { bandId: match[1]!, outcome: match[2] as 'yes' | 'no' } : null;
}

export interface LadderShape {
  structure: 'bands' | 'ladder';
  bands: { id: string; label: string; minValuation: number }[];
}

export interface EventToken {
  /** Our token id: the band id (band events) or `<band id>:yes|no` (ladders). */
  id: string;
  /**
   * Where the token sits in the position's records: the band index for a band event; for a ladder,
   * i for Yesᵢ (its band's index) and n + i for Noᵢ.
   */
  index: number;
  outcome: 'yes' | 'no';
  /** The band index whose threshold it is (ladders) or that it is (band events). */
  bandIndex: number;
  label: string;
}

const billions = (b: number) => (b >= 1000 ? `$${+(b / 1000).toFixed(3)}T` : `$${+b.toFixed(3)}B`);

/** Every token the event trades, in index order. */
export function eventTokens(event: LadderShape): EventToken[] {
  if (event.structure !== 'ladder') return event.bands.map((b, i) => ({ id: b.id, index: i, outcome: 'yes', bandIndex: i, label: b.label }));
  const n = event.bands.length - 1;
  const yes: EventToken[] = [];
  const no: EventToken[] = [];
  for (let i = 1; i <= n; i++) {
    const band = event.bands[i]!;
    const above = `above ${billions(band.minValuation)}`;
    yes.push({ id: ladderTokenId(band.id, 'yes'), index: i, outcome: 'yes', bandIndex: i, label: `Yes: ${above}` });
    no.push({ id: ladderTokenId(band.id, 'no'), index: n + i, outcome: 'no', bandIndex: i, label: `No: ${above}` });
  }
  return [...yes, ...no];
}

/**
 * What one share of `tokenId` pays when band `winner` wins (0 or 1). `bandIndexOf` gives a band id's
 * index in its event. An id of neither kind pays nothing.
 */
export function tokenPays(tokenId: string, winner: number, bandIndexOf: (bandId: string) => number | undefined): 0 | 1 {
  const ladder = parseLadderTokenId(tokenId);
  const index = bandIndexOf(ladder ? ladder.bandId : tokenId);
  if (index === undefined) return 0;
  if (!ladder) return index === winner ? 1 : 0;
  return (ladder.outcome === 'yes' ? winner >= index : winner < index) ? 1 : 0;
}

/** Shares per band: what holdings of tokens pay if each band wins (band terms), in the holdings' unit. */
export function bandExposure(holdings: { tokenId: string; sharesMicros: number }[], bandIds: string[]): number[] {
  const indexOf = new Map(bandIds.map((id, i) => [id, i]));
  return bandIds.map((_, k) => holdings.reduce((sum, h) => sum + h.sharesMicros * tokenPays(h.tokenId, k, (id) => indexOf.get(id)), 0));
}

/**
 * Per-unit amounts of each token (aligned with `eventTokens`) whose payoff is `weights` band by band.
 * A band event holds the weights themselves. Throws for weights a ladder cannot hold without a
 * negative amount (never the case for LONG or SHORT weights).
 */
export function replicate(structure: 'bands' | 'ladder', weights: number[]): number[] {
  if (structure !== 'ladder') return [...weights];
  const n = weights.length - 1;
  if (n < 1) throw new RangeError('a ladder needs at least one threshold');
  const steps = weights.slice(1).map((w, i) => w - weights[i]!);
  const riskless = weights[0]! - steps.reduce((sum, d) => sum + Math.max(0, -d), 0);
  if (riskless < -1e-12) throw new RangeError('these weights need a negative amount of some token');
  const pair = weights[0]! <= weights[n]! ? 0 : n - 1;
  const extra = (i: number) => (i === pair ? Math.max(0, riskless) : 0);
  const yes = steps.map((d, i) => Math.max(0, d) + extra(i));
  const no = steps.map((d, i) => Math.max(0, -d) + extra(i));
  return [...yes, ...no];
}

export interface TopLevels {
  bids: { priceMicros: number; sizeMicros: number }[];
  asks: { priceMicros: number; sizeMicros: number }[];
  lastTradeMicros: number | null;
  tickMicros: number;
}

const ONE = 1_000_000;

/**
 * A ladder band's book, derived from its thresholds' Yes books (one level a side): band i is
 * Yesᵢ − Yesᵢ₊₁, so it is bought at askᵢ − bidᵢ₊₁ and sold at bidᵢ − askᵢ₊₁ (each clamped to [0, 1]);
 * band 0 is 1 − Yes₁ and band n is Yesₙ. The size is what both legs' top levels carry. A missing
 * bid counts as 0 and a missing ask as 1, as everywhere else.
 */
export function ladderBandBooks(yesBooks: (TopLevels | undefined)[]): TopLevels[] {
  const n = yesBooks.length;
  const top = (book: TopLevels | undefined) => ({
    bid: book?.bids[0] ?? { priceMicros: 0, sizeMicros: 0 },
    ask: book?.asks[0] ?? { priceMicros: ONE, sizeMicros: 0 },
    last: book?.lastTradeMicros ?? null,
    tick: book?.tickMicros ?? 10_000,
  });
  const certain = { bid: { priceMicros: ONE, sizeMicros: Number.MAX_SAFE_INTEGER }, ask: { priceMicros: ONE, sizeMicros: Number.MAX_SAFE_INTEGER }, last: ONE, tick: 1_000 };
  const never = { bid: { priceMicros: 0, sizeMicros: Number.MAX_SAFE_INTEGER }, ask: { priceMicros: 0, sizeMicros: Number.MAX_SAFE_INTEGER }, last: 0, tick: 1_000 };
  // "Above t₀" is certain (band 0 starts at nothing) and "above tₙ₊₁" never happens.
  const legs = [certain, ...yesBooks.map(top), never];
  const out: TopLevels[] = [];
  for (let k = 0; k <= n; k++) {
    const upper = legs[k]!;
    const next = legs[k + 1]!;
    const bid = Math.min(ONE, Math.max(0, upper.bid.priceMicros - next.ask.priceMicros));
    const ask = Math.max(bid, Math.min(ONE, upper.ask.priceMicros - next.bid.priceMicros));
    const bidSize = Math.min(upper.bid.sizeMicros, next.ask.sizeMicros);
    const askSize = Math.min(upper.ask.sizeMicros, next.bid.sizeMicros);
    out.push({
      bids: bid > 0 && bidSize > 0 ? [{ priceMicros: bid, sizeMicros: bidSize }] : [],
      asks: ask < ONE && askSize > 0 ? [{ priceMicros: ask, sizeMicros: askSize }] : [],
      lastTradeMicros: upper.last !== null && next.last !== null ? Math.max(0, upper.last - next.last) : null,
      tickMicros: Math.max(upper.tick, next.tick),
    });
  }
  return out;
}

/**
 * A valuation recomputed independently of server/valuation: the formulas of docs/decisions.md §6 and
 * docs/trading.md "Ladders", written again for the tests, from the venue's raw books.
 */
import { expect } from 'bun:test';
import type { OrderBook } from '../../server/venues/venue.ts';
import type { TestApp } from './app.ts';

interface BandShape {
  minValuation: number;
  maxValuation: number | null;
}
/** A band's market: best bid (0 when none), best ask (1 when none), last trade (null when none). */
export interface BandQuote {
  bid: number;
  ask: number;
  last?: number | null;
}

export function expectedValuation(bands: BandShape[], quotes: BandQuote[], fL: number, fS: number) {
  const n = bands.length;
  const wL = bands.map((_, i) => (n === 1 ? 1 : fL + ((1 - fL) * i) / (n - 1)));
  const wS = bands.map((_, i) => (n === 1 ? 1 : fS + ((1 - fS) * (n - 1 - i)) / (n - 1)));
  // The midpoint while the spread is at most 0.10, else the last trade (the midpoint while none).
  const p = quotes.map(({ bid, ask, last }) => (ask - bid <= 0.1 + 1e-9 ? (bid + ask) / 2 : (last ?? (bid + ask) / 2)));
  const sum = (w: number[], x: number[]) => w.reduce((acc, wi, i) => acc + wi * x[i]!, 0);
  const longCost = sum(wL, p);
  const shortCost = sum(wS, p);
  const mid = (b: BandShape) => (b.maxValuation === null ? 1.25 * b.minValuation : b.minValuation === 0 ? b.maxValuation / 2 : (b.minValuation + b.maxValuation) / 2);
  const priced = bands.map((b, i) => ({ b, p: p[i]! })).filter(({ b }) => !(b.minValuation === 0 && b.maxValuation === 0));
  const totalP = priced.reduce((a, x) => a + x.p, 0);
  return {
    wL,
    wS,
    p,
    mid: bands.map(mid),
    longCost,
    shortCost,
    bestLongReturn: (1 / longCost - 1) * 100,
    worstLongReturn: (fL / longCost - 1) * 100,
    bestShortReturn: (1 / shortCost - 1) * 100,
    worstShortReturn: (fS / shortCost - 1) * 100,
    long: { buy: sum(wL, quotes.map((x) => x.ask)), sell: sum(wL, quotes.map((x) => x.bid)) },
    short: { buy: sum(wS, quotes.map((x) => x.ask)), sell: sum(wS, quotes.map((x) => x.bid)) },
    implied: totalP > 0 ? priced.reduce((a, x) => a + x.p * mid(x.b), 0) / totalP : null,
  };
}

const M = 1_000_000;
const top = (book: OrderBook | undefined) => ({
  bid: book?.bids[0]?.priceMicros ?? 0,
  ask: book?.asks[0]?.priceMicros ?? M,
  last: book?.lastTradeMicros ?? null,
});

/**
 * Each band's quote from the raw token books: a band event's band is its own token; a ladder band
 * is Yesᵢ − Yesᵢ₊₁ (ask: askᵢ − bidᵢ₊₁, bid: bidᵢ − askᵢ₊₁, within [0, 1]), band 0 is 1 − Yes₁.
 */
export function bandQuotes(event: { structure: 'bands' | 'ladder'; bands: { id: string }[] }, books: Map<string, OrderBook>): BandQuote[] {
  if (event.structure === 'bands') return event.bands.map((b) => top(books.get(b.id))).map(({ bid, ask, last }) => ({ bid: bid / M, ask: ask / M, last: last === null ? null : last / M }));
  const legs = [{ bid: M, ask: M, last: M as number | null }, ...event.bands.slice(1).map((b) => top(books.get(`${b.id}:yes`))), { bid: 0, ask: 0, last: 0 as number | null }];
  return event.bands.map((_, k) => {
    const [upper, next] = [legs[k]!, legs[k + 1]!];
    const bid = Math.min(M, Math.max(0, upper.bid - next.ask));
    const ask = Math.max(bid, Math.min(M, upper.ask - next.bid));
    const last = upper.last !== null && next.last !== null ? Math.max(0, upper.last - next.last) : null;
    return { bid: bid / M, ask: ask / M, last: last === null ? null : last / M };
  });
}

/**
 * An answer's number `a` against a recomputed `b`: the API rounds to 6 decimals (docs/api.md,
 * "Numbers"), so they agree to half a unit of the 6th decimal (a tie included), plus float slack.
 */
export function expectRounded(a: number | null, b: number) {
  expect(a).toBeNumber();
  expect({ a, b, within: Math.abs(a! - b) <= 5e-7 + 1e-12 * Math.max(1, Math.abs(b)) }).toEqual({ a, b, within: true });
}

/** GET /api/trading/valuation of `eventId` agrees with the numbers recomputed from the venue's own books. */
export async function expectValuationRecomputed(t: TestApp, eventId: string, floors = { floorL: 0.2, floorS: 0.15 }) {
  const events = (await (await t.request('/api/trading/events')).json()).events;
  const event = events.find((e: any) => e.id === eventId);
  expect(event).toBeDefined();
  const books = await t.services.venue.getOrderBooks(event.tokens.map((tk: { id: string }) => tk.id));
  const quotes = bandQuotes(event, books);
  const x = expectedValuation(event.bands, quotes, floors.floorL, floors.floorS);
  const body = await (await t.request(`/api/trading/valuation?eventSlug=${eventId}&floorL=${floors.floorL}&floorS=${floors.floorS}`)).json();
  const close = (a: number | null, b: number | null) => (b === null ? expect(a).toBeNull() : expectRounded(a, b));
  body.slippage.bandPrices.forEach((b: BandQuote, i: number) => {
    close(b.bid, quotes[i]!.bid);
    close(b.ask, quotes[i]!.ask);
  });
  body.bands.forEach((b: { price: number }, i: number) => close(b.price, x.p[i]!));
  close(body.valuation.longCost, x.longCost);
  close(body.valuation.shortCost, x.shortCost);
  close(body.slippage.long.buyCost, x.long.buy);
  close(body.slippage.short.sellValue, x.short.sell);
  close(body.impliedValuation, x.implied);
}

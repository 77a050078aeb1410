/**
 * Ladder events ("above $X" markets) trade like band events, on the paper venue and (TEST_VENUE=
 * polymarket) on the live adapter against the CLOB stand-in: a ladder band's quote is the difference
 * of its thresholds' Yes books; a LONG or SHORT position is bought as threshold Yes and No tokens whose
 * payoff, band by band, is exactly what the same position pays on a band event; a quote is the buy;
 * a partial sale keeps the shape; settlement pays the tokens on the winner's side. The replication and
 * the derived quotes are written again here, from docs/trading.md "Ladders", not imported.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DASHBOARD_KEY, type TestApp } from '../harness/app.ts';
import { dashboardHeaders } from '../harness/factories.ts';
import { api, buy, expectBooksAgree, sell, trader, type Trader } from '../harness/trading.ts';
import { createTradingApp, ledgerOf, TEST_VENUE } from '../harness/trading-venue.ts';
import { expectValuationRecomputed } from '../harness/expected-valuation.ts';

const MICRO = 1_000_000;
const STEP = 10_000;
const micros = (usd: number) => Math.round(usd * MICRO);
const floorStep = (m: number) => m - (m % STEP);

let t: TestApp;
let who: Trader;
let ladders: any[];

beforeAll(async () => {
  t = await createTradingApp({ MARKET_DATA_TTL_MS: '0' });
  who = await trader(t);
  await api(t, who, 'PUT', '/api/trading/settings', { walletAddress: who.userId });
  ladders = (await api(t, who, 'GET', '/api/trading/events')).body.events.filter((e: any) => e.structure === 'ladder' && e.status === 'open');
});
afterAll(() => t.close());

const weights = (side: 'LONG' | 'SHORT', n: number) =>
  Array.from({ length: n }, (_, i) => (side === 'LONG' ? 0.2 + (0.8 * i) / (n - 1) : 0.15 + (0.85 * (n - 1 - i)) / (n - 1)));

/** Shares of each token that replicate band shares s₀…sₙ (docs/trading.md "Ladders"), by our token id. */
function replication(bandIds: string[], s: number[], side: 'LONG' | 'SHORT'): Map<string, number> {
  const n = s.length - 1;
  const out = new Map<string, number>();
  if (side === 'LONG') {
    out.set(`${bandIds[1]}:no`, s[0]!);
    out.set(`${bandIds[1]}:yes`, s[1]!);
    for (let i = 2; i <= n; i++) out.set(`${bandIds[i]}:yes`, s[i]! - s[i - 1]!);
  } else {
    for (let i = 1; i < n; i++) out.set(`${bandIds[i]}:no`, s[i - 1]! - s[i]!);
    out.set(`${bandIds[n]}:no`, s[n - 1]!);
    out.set(`${bandIds[n]}:yes`, s[n]!);
  }
  return out;
}

/** What token holdings pay if band k wins, per band. */
function payoff(bandIds: string[], held: Map<string, number>): number[] {
  return bandIds.map((_, k) => {
    let sum = 0;
    for (const [id, shares] of held) {
      const [bandId, outcome] = id.split(':');
      const i = bandIds.indexOf(bandId!);
      if (outcome === 'yes' ? k >= i : k < i) sum += shares;
    }
    return sum;
  });
}

const detailOf = async (positionId: string) => (await api(t, who, 'GET', `/api/trading/positions/${positionId}`)).body;
const heldOf = (detail: any) => new Map<string, number>(detail.holdings.filter((h: any) => h.tokens > 0).map((h: any) => [h.tokenId, micros(h.tokens)]));

describe(`ladder events on the ${TEST_VENUE} venue`, () => {
  test('an event says how it trades: its structure and its tokens (a threshold Yes and No per "above" market)', () => {
    expect(ladders.length).toBeGreaterThanOrEqual(2);
    for (const e of ladders) {
      const n = e.bands.length - 1;
      expect(e.tokens.map((tk: any) => tk.id)).toEqual([...e.bands.slice(1).map((b: any) => `${b.id}:yes`), ...e.bands.slice(1).map((b: any) => `${b.id}:no`)]);
      expect(e.tokens[0]).toMatchObject({ outcome: 'yes', bandIndex: 1 });
      expect(e.tokens[n]).toMatchObject({ outcome: 'no', bandIndex: 1 });
      expect(e.tokens[0].label).toMatch(/^Yes: above \$[\d.]+[BT]$/);
    }
  });

  test("a ladder band's bid and ask are the differences of its thresholds' Yes books", async () => {
    for (const e of ladders) {
      const yesIds = e.bands.slice(1).map((b: any) => `${b.id}:yes`);
      const books = await t.services.venue.getOrderBooks(yesIds);
      const top = yesIds.map((id: string) => ({ bid: books.get(id)!.bids[0]?.priceMicros ?? 0, ask: books.get(id)!.asks[0]?.priceMicros ?? MICRO }));
      // "Above" the bottom is certain, above the top never happens.
      const legs = [{ bid: MICRO, ask: MICRO }, ...top, { bid: 0, ask: 0 }];
      const expected = e.bands.map((_: any, k: number) => {
        const bid = Math.max(0, legs[k]!.bid - legs[k + 1]!.ask);
        return { bandIndex: k, bid: bid / MICRO, ask: Math.max(bid, Math.min(MICRO, legs[k]!.ask - legs[k + 1]!.bid)) / MICRO };
      });
      const valuation = (await api(t, who, 'GET', `/api/trading/valuation?eventSlug=${e.id}`)).body;
      expect(valuation.slippage.bandPrices).toEqual(expected);
      // And every number of the valuation, recomputed independently (tests/harness/expected-valuation.ts).
      await expectValuationRecomputed(t, e.id);
    }
  });

  for (const side of ['LONG', 'SHORT'] as const) {
    test(`${side}: the quote is the buy; the tokens bought are the replication; every band pays w(k)·U rounded as on a band event`, async () => {
      for (const e of ladders) {
        const bandIds = e.bands.map((b: any) => b.id);
        const quote = (await api(t, who, 'POST', '/api/trading/quote', { eventId: e.id, side, amount: 80 })).body;
        const bought = await buy(t, who, { eventId: e.id, side, amount: 80 });
        expect(`${e.id} ${bought.res.status}`).toBe(`${e.id} 200`);
        expect(bought.body.orders.map((o: any) => [o.bandId, o.size, o.status])).toEqual(quote.bands.map((q: any) => [q.bandId, q.shares, 'MATCHED']));
        expect(bought.body.totalCost).toBeCloseTo(quote.totalCost, 6);
        expect(bought.body.totalCost).toBeLessThanOrEqual(80);

        const units = micros(bought.body.size);
        const s = weights(side, bandIds.length).map((w) => floorStep(Math.floor(w * units + 1e-6)));
        const expected = replication(bandIds, s, side);
        const detail = await detailOf(bought.body.positionId);
        expect(heldOf(detail)).toEqual(new Map([...expected].filter(([, v]) => v > 0)));
        expect(detail.bands.map((b: any) => [b.bandId, micros(b.tokens), b.entryPrice])).toEqual(bandIds.map((id: string, k: number) => [id, s[k], null]));
        expect(payoff(bandIds, heldOf(detail))).toEqual(s);
        // Orders answer in token terms, with the token's label.
        const order = (await api(t, who, 'GET', `/api/trading/orders/${bought.body.orders[0].orderId}`)).body;
        expect(order.bandLabel).toMatch(/^(Yes|No): above /);
      }
      await expectBooksAgree(t, who);
    });
  }

  test('a partial sale keeps the shape (every token sells the same share, so every band does); the rest closes it', async () => {
    const e = ladders[0];
    const bandIds = e.bands.map((b: any) => b.id);
    const bought = (await buy(t, who, { eventId: e.id, side: 'LONG', amount: 120 })).body;
    const before = heldOf(await detailOf(bought.positionId));
    const quote = (await api(t, who, 'POST', '/api/trading/sell/quote', { positionId: bought.positionId, percentage: 40 })).body;
    const sold = await sell(t, who, { positionId: bought.positionId, percentage: 40 });
    expect(sold.res.status).toBe(200);
    expect(sold.body.orders.map((o: any) => [o.bandId, o.size])).toEqual(quote.bands.map((q: any) => [q.bandId, q.shares]));
    const after = heldOf(await detailOf(bought.positionId));
    for (const [id, shares] of before) expect(after.get(id)).toBe(shares - floorStep(Math.floor(shares * 0.4)));
    const [was, now] = [payoff(bandIds, before), payoff(bandIds, after)];
    // Each band keeps 60% of what it paid, to within the rounding of the tokens that make it up.
    was.forEach((p, k) => expect(Math.abs(now[k]! - p * 0.6)).toBeLessThanOrEqual(bandIds.length * STEP));

    const rest = await sell(t, who, { positionId: bought.positionId, percentage: 100 });
    expect(rest.body).toMatchObject({ status: 'closed', unsold: [] });
    expect(heldOf(await detailOf(bought.positionId)).size).toBe(0);
    await expectBooksAgree(t, who);
  });

  test('settlement pays the tokens on the winning side: the band exposure at the winner, once, and the venue agrees', async () => {
    const e = ladders[ladders.length - 1];
    const bandIds = e.bands.map((b: any) => b.id);
    const winner = Math.floor(bandIds.length / 2);
    const settler = await trader(t);
    await api(t, settler, 'PUT', '/api/trading/settings', { walletAddress: settler.userId });
    const long = (await buy(t, settler, { eventId: e.id, side: 'LONG', amount: 60 })).body.positionId;
    const short = (await buy(t, settler, { eventId: e.id, side: 'SHORT', amount: 60 })).body.positionId;
    const exposure = async (id: string) => payoff(bandIds, heldOf((await api(t, settler, 'GET', `/api/trading/positions/${id}`)).body))[winner]!;
    const expected = (await exposure(long)) + (await exposure(short));
    const before = await ledgerOf(t).collateral(settler);

    const res = await t.request(`/api/events/${e.id}/resolution`, {
      method: 'POST',
      headers: { ...dashboardHeaders(DASHBOARD_KEY, settler.account.accountId), 'content-type': 'application/json' },
      body: JSON.stringify({ winningBandId: bandIds[winner] }),
    });
    expect(res.status).toBe(200);
    // (Earlier tests' positions of this event settle too.)
    expect(await res.json()).toMatchObject({ status: 'resolved', unpaid: 0, deferred: 0 });
    const settled = (await api(t, settler, 'GET', `/api/trading/settlements?eventId=${e.id}`)).body.settlements;
    expect(settled).toHaveLength(2);
    expect(settled.reduce((sum: number, s: any) => sum + micros(s.proceeds), 0)).toBe(expected);
    for (const s of settled) expect(s).toMatchObject({ winningBandId: bandIds[winner], paid: true });
    expect(await ledgerOf(t).collateral(settler)).toBe(before + expected);
    // The paying tokens were redeemed; on the paper venue the losing ones stay in the ledger, worthless.
    const held = await ledgerOf(t).holdings(settler);
    for (const id of bandIds.slice(1)) {
      const yesPays = winner >= bandIds.indexOf(id);
      expect(held.get(`${id}:${yesPays ? 'yes' : 'no'}`) ?? 0).toBe(0);
    }
  });
});

/**
 * Candle backfill: on the paper venue, past books are computed from its book function
 * and make the same candles the recorder made from the live snapshots; on the live venue, candles come
 * from Polymarket's price history, here a local stand-in of `GET /prices-history`. Both are idempotent
 * per (event, interval, start) and never replace a recorded candle. PGlite by default, PostgreSQL
 * with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq, sql } from 'drizzle-orm';
import { eventBands, valuationCandles } from '../../db/schema.ts';
import { findEvent } from '../../server/events/queries.ts';
import { backfillCandles } from '../../server/history/backfill.ts';
import { computePaperCandles } from '../../server/history/backfill-paper.ts';
import { readCandles } from '../../server/history/candle-store.ts';
import type { Candle } from '../../server/history/candles.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { PricesHistoryStandin } from '../harness/prices-history-standin.ts';
import { tokenIdFor } from '../harness/trading-venue.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);
const MICRO = 1_000_000;

describe('paper venue: past books from the book function', () => {
  let t: TestApp;
  let recording: CandleRecording;
  let clock = at('2026-11-22T09:00:00Z');
  beforeAll(async () => {
    // A drifting paper venue (the books move with the time), as the server would run it.
    t = await createTestApp({ PAPER_DRIFT: '0.05' }, { now: () => clock });
    recording = startCandleRecording(t.services, { now: () => clock });
  });
  afterAll(async () => {
    await recording.stop();
    await t.close();
  });

  const sameCandle = (c: Candle) => ({ start: c.start, end: c.end, implied: c.implied, long: c.long, short: c.short, bands: c.bands });

  test('a backfilled candle equals the recorded one when both saw the books at the same moments', async () => {
    const first = at('2026-11-22T10:00:00Z');
    for (let k = 0; k < 5; k++) {
      clock = first + k * MINUTE;
      await t.services.recorder.record();
    }
    clock = first + 5 * MINUTE;
    await recording.closeCandles();
    const event = await findEvent(t.database.db, 'openai-ipo');
    const computed: Candle[] = [];
    const run = await computePaperCandles(event, { seed: t.config.paper.seed, drift: t.config.paper.drift }, { interval: '1m', from: first, until: clock, stepMs: MINUTE }, (batch) => void computed.push(...batch));
    expect(run).toEqual({ candles: 5, points: 5 });
    const recorded = await readCandles(t.database.db, { eventId: 'openai-ipo', interval: '1m', fromStart: first, to: clock, limit: 10 });
    expect(recorded.length).toBe(5);
    expect(computed.map(sameCandle)).toEqual(recorded.map(sameCandle));
    // The books did move over these minutes (the comparison is not of five equal candles).
    expect(new Set(recorded.map((c) => c.long.close)).size).toBeGreaterThan(1);
    expect(computed.every((c) => c.source === 'backfill' && c.samples === 1)).toBe(true);
  });

  test('backfill writes the missing candles only, once: recorded candles stay; a second run writes nothing', async () => {
    const from = new Date(at('2026-11-22T09:50:00Z'));
    const lines = await backfillCandles(t.services, { interval: '1m', from, events: ['openai-ipo'] });
    expect(lines).toEqual([{ event: 'openai-ipo', interval: '1m', venue: 'paper', candles: 15, written: 10, points: 15, problems: [] }]);
    const rows = await readCandles(t.database.db, { eventId: 'openai-ipo', interval: '1m', fromStart: from.getTime(), to: clock, limit: 100 });
    expect(rows.map((c) => c.source)).toEqual([...Array(10).fill('backfill'), ...Array(5).fill('snapshots')]);
    expect((await backfillCandles(t.services, { interval: '1m', from, events: ['openai-ipo'] }))[0]).toMatchObject({ candles: 15, written: 0 });
  });

  test('only candles that have ended are written (the current one is the recorder\'s); aliases name events', async () => {
    clock = at('2026-11-22T10:30:00Z');
    const lines = await backfillCandles(t.services, { interval: '1h', from: new Date(at('2026-11-22T06:10:00Z')), to: new Date(at('2026-11-23T00:00:00Z')), events: ['spacex-ipo', 'nope-ipo'] });
    expect(lines).toEqual([
      { event: 'nope-ipo', interval: '1h', venue: 'paper', problems: ['no event nope-ipo'] },
      { event: 'spacex-ipo-higher', interval: '1h', venue: 'paper', candles: 4, written: 4, points: 240, problems: [] },
    ]);
    const hours = await readCandles(t.database.db, { eventId: 'spacex-ipo-higher', interval: '1h', fromStart: 0, to: clock, limit: 10 });
    expect(hours.map((c) => new Date(c.start).toISOString().slice(11, 16))).toEqual(['06:00', '07:00', '08:00', '09:00']);
    expect(hours.every((c) => c.samples === 60 && c.long.low <= c.long.open && c.long.open <= c.long.high)).toBe(true);
    // The paper backfill has books: bid and ask are known.
    const { body } = await (async () => {
      const res = await t.request('/api/trading/valuation/history?eventSlug=spacex-ipo&interval=1h&from=2026-11-22T06:00Z&to=2026-11-22T09:00Z');
      return { body: (await res.json()) as any };
    })();
    expect(body.candles.length).toBe(4);
    expect(body.candles.every((c: any) => c.source === 'backfill' && c.final && c.bands.every((b: any) => b.bid !== null && b.bid < b.ask))).toBe(true);
  });

  test('a step that does not divide the interval is refused; so is a range ending before it starts', async () => {
    const [line] = await backfillCandles(t.services, { interval: '1h', from: new Date(at('2026-11-22T06:00:00Z')), stepMs: 7_000, events: ['openai-ipo'] });
    expect(line!.problems).toEqual(['step: must be a whole number of seconds that divides 1h']);
    await expect(backfillCandles(t.services, { interval: '1h', from: new Date(clock + HOUR) })).rejects.toThrow('from: must not be after to');
  });
});

describe('live venue: Polymarket price history (a local stand-in)', () => {
  let t: TestApp;
  let standin: PricesHistoryStandin;
  const clock = at('2026-11-22T12:00:00Z');
  /** Each band token's price: its own level, moving with the time, so candles differ minute by minute. */
  const level = new Map<string, number>();
  const priceOf = (token: string, tSec: number) => {
    const base = level.get(token);
    if (base === undefined) return undefined;
    return Math.max(0.001, Math.min(0.999, base + 0.02 * Math.sin(tSec / 5_000) + 0.001 * ((tSec / 60) % 7)));
  };
  let tokens: Map<string, string>;

  beforeAll(async () => {
    t = await createTestApp({}, { now: () => clock });
    startCandleRecording(t.services, { now: () => clock });
    // Band tokens as `npm run events:sync` would fill them in, for a bands event (open) and a resolved one.
    const bands = await t.database.db.select().from(eventBands).where(sql`${eventBands.eventId} in ('openai-ipo', 'stripe-ipo', 'kraken-ipo')`);
    tokens = new Map(bands.map((b) => [b.id, tokenIdFor(b.id)]));
    for (const b of bands) {
      level.set(tokenIdFor(b.id), b.seedPrice);
      await t.database.db
        .update(eventBands)
        .set({ venue: sql`${eventBands.venue} || ${JSON.stringify({ tokenId: tokenIdFor(b.id) })}::jsonb` })
        .where(and(eq(eventBands.eventId, b.eventId), eq(eventBands.bandIndex, b.bandIndex)));
    }
    const stripe = new Set(bands.filter((b) => b.eventId === 'stripe-ipo').map((b) => tokenIdFor(b.id)));
    standin = new PricesHistoryStandin({ price: priceOf, resolved: (token) => stripe.has(token) }).start();
  });
  afterAll(async () => {
    standin.stop();
    await t.close();
  });

  const backfill = (interval: '1m' | '1h' | '1d', from: number, events: string[], extra: Record<string, unknown> = {}) =>
    backfillCandles(t.services, { venue: 'polymarket', clobUrl: standin.url, interval, from: new Date(from), events, ...extra });

  /** docs/decisions.md §6 at the default floors from prices alone (each band's price is its midpoint). */
  function costs(prices: number[], bands: { minValuation: number; maxValuation: number | null }[]) {
    const n = prices.length;
    const long = prices.reduce((s, p, i) => s + (0.2 + (0.8 * i) / (n - 1)) * p, 0);
    const short = prices.reduce((s, p, i) => s + (0.15 + (0.85 * (n - 1 - i)) / (n - 1)) * p, 0);
    let weighted = 0;
    let total = 0;
    bands.forEach((b, i) => {
      if (b.minValuation === 0 && b.maxValuation === 0) return;
      weighted += prices[i]! * (b.maxValuation === null ? 1.25 * b.minValuation : b.minValuation === 0 ? b.maxValuation / 2 : (b.minValuation + b.maxValuation) / 2);
      total += prices[i]!;
    });
    return { long: Math.round(long * MICRO), short: Math.round(short * MICRO), implied: weighted / total };
  }

  test('1m candles: one point each, costs and implied valuation from the band prices, no bid or ask', async () => {
    standin.requests.length = 0;
    const lines = await backfill('1m', clock - 30 * MINUTE, ['openai-ipo']);
    expect(lines).toEqual([{ event: 'openai-ipo', interval: '1m', venue: 'polymarket', candles: 30, written: 30, points: 30, fidelity: 1, problems: [] }]);
    const event = await findEvent(t.database.db, 'openai-ipo');
    // One request per band token, for the whole half hour at 1-minute fidelity.
    expect(standin.requests.map((r) => [r.market, r.endTs - r.startTs, r.fidelity])).toEqual(event.bands.map((b) => [tokens.get(b.id)!, 1800, 1]));
    const candles = await readCandles(t.database.db, { eventId: 'openai-ipo', interval: '1m', fromStart: 0, to: clock, limit: 100 });
    expect(candles.length).toBe(30);
    for (const c of candles) {
      const prices = event.bands.map((b) => Math.round(priceOf(tokens.get(b.id)!, c.start / 1000)! * 10_000) / 10_000);
      const expected = costs(prices, event.bands);
      expect({ long: c.long, short: c.short, samples: c.samples, source: c.source }).toEqual({
        long: { open: expected.long, high: expected.long, low: expected.long, close: expected.long },
        short: { open: expected.short, high: expected.short, low: expected.short, close: expected.short },
        samples: 0,
        source: 'backfill',
      });
      expect(c.implied!.close).toBeCloseTo(expected.implied, 9);
      expect(c.bands).toEqual(event.bands.map((b, i) => ({ bandId: b.id, closeMicros: Math.round(prices[i]! * MICRO), bidMicros: null, askMicros: null })));
    }
    const res = await t.request('/api/trading/valuation/history?eventSlug=openai-ipo&interval=1m&limit=2');
    const body = (await res.json()) as any;
    expect(body.candles.map((c: any) => [c.final, c.source, c.samples, c.bands[0].bid, c.bands[0].ask])).toEqual([
      [true, 'backfill', 0, null, null],
      [true, 'backfill', 0, null, null],
    ]);
  });

  test('1h candles: the OHLC of the points inside each hour; requests windowed to a day at 1-minute fidelity; idempotent', async () => {
    standin.requests.length = 0;
    const from = clock - 3 * DAY;
    const [line] = await backfill('1h', from, ['openai-ipo']);
    expect(line).toMatchObject({ candles: 72, written: 72, points: 72 * 60, fidelity: 1, problems: [] });
    expect(standin.requests.every((r) => r.endTs - r.startTs <= 86_400 && r.fidelity === 1)).toBe(true);
    expect(standin.requests.length).toBe(3 * 7);
    const event = await findEvent(t.database.db, 'openai-ipo');
    const [c] = await readCandles(t.database.db, { eventId: 'openai-ipo', interval: '1h', fromStart: from + 5 * HOUR, to: from + 5 * HOUR, limit: 1 });
    const longs = Array.from({ length: 60 }, (_, m) => {
      const tSec = (c!.start + m * MINUTE) / 1000;
      return costs(event.bands.map((b) => Math.round(priceOf(tokens.get(b.id)!, tSec)! * 10_000) / 10_000), event.bands).long;
    });
    expect(c!.long).toEqual({ open: longs[0]!, high: Math.max(...longs), low: Math.min(...longs), close: longs[59]! });
    expect((await backfill('1h', from, ['openai-ipo']))[0]).toMatchObject({ candles: 72, written: 0 });
  });

  test("a ladder event: its thresholds' Yes histories, its bands priced at their differences", async () => {
    standin.requests.length = 0;
    const [line] = await backfill('1h', clock - 6 * HOUR, ['kraken-ipo']);
    expect(line).toMatchObject({ event: 'kraken-ipo', candles: 6, written: 6, problems: [] });
    const event = await findEvent(t.database.db, 'kraken-ipo');
    // One history per threshold ("above" band i's start, i ≥ 1): none for band 0, which has no market.
    expect(new Set(standin.requests.map((r) => r.market))).toEqual(new Set(event.bands.slice(1).map((b) => tokens.get(b.id)!)));
    const [c] = await readCandles(t.database.db, { eventId: 'kraken-ipo', interval: '1h', fromStart: clock - 2 * HOUR, to: clock - 2 * HOUR, limit: 1 });
    const tSec = (c!.end - MINUTE) / 1000;
    const above = [1, ...event.bands.slice(1).map((b) => Math.round(priceOf(tokens.get(b.id)!, tSec)! * 10_000) / 10_000), 0];
    const bandPrices = event.bands.map((_, i) => Math.max(0, above[i]! - above[i + 1]!));
    expect(c!.long.close).toBe(costs(bandPrices, event.bands).long);
    expect(c!.short.close).toBe(costs(bandPrices, event.bands).short);
  });

  test('a resolved event: only 1d, at 12-hour fidelity (all Polymarket keeps)', async () => {
    const lines = await backfill('1h', clock - DAY, ['stripe-ipo']);
    expect(lines.map((l) => [l.event, l.skipped])).toEqual([['stripe-ipo', 'stripe-ipo is resolved: Polymarket keeps only 12-hour points for resolved markets; backfill it at 1d']]);
    standin.requests.length = 0;
    const [daily] = await backfill('1d', clock - 10 * DAY, ['stripe-ipo']);
    expect(daily).toMatchObject({ candles: 10, written: 10, points: 20, fidelity: 720, problems: [] });
    expect(new Set(standin.requests.map((r) => r.fidelity))).toEqual(new Set([720]));
    const days = await readCandles(t.database.db, { eventId: 'stripe-ipo', interval: '1d', fromStart: 0, to: clock, limit: 20 });
    expect(days.map((d) => d.end - d.start)).toEqual(Array(10).fill(DAY));
  });

  test('points begin when every band has a price (a band whose history starts later holds the event back)', async () => {
    const late = tokens.get('paper-openai-ipo-6')!;
    const startsAt = (clock - 70 * MINUTE) / 1000;
    const base = level.get(late)!;
    const original = priceOf;
    level.delete(late);
    const lateLevel = (token: string, tSec: number) => (token === late ? (tSec >= startsAt ? base : undefined) : original(token, tSec));
    (standin as any).options.price = lateLevel;
    try {
      const [line] = await backfill('1m', clock - 90 * MINUTE, ['openai-ipo'], { to: new Date(clock - 60 * MINUTE) });
      expect(line).toMatchObject({ candles: 10, written: 10, points: 10, problems: [] });
      const candles = await readCandles(t.database.db, { eventId: 'openai-ipo', interval: '1m', fromStart: clock - 90 * MINUTE, to: clock - 61 * MINUTE, limit: 100 });
      expect(candles.map((c) => (c.start - clock) / MINUTE)).toEqual([-70, -69, -68, -67, -66, -65, -64, -63, -62, -61]);
    } finally {
      level.set(late, base);
      (standin as any).options.price = original;
    }
  });

  test('a request the CLOB refuses is reported as that event\'s, with nothing written for it', async () => {
    standin.failNext = [400];
    const lines = await backfill('1m', clock - 5 * MINUTE, ['openai-ipo']);
    expect(lines[0]!.skipped).toContain('the CLOB refused the price history of paper-openai-ipo-0');
    standin.failNext = [];
  });
});

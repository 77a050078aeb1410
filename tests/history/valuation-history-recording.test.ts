/**
 * Valuation history across restarts and instances (review of the recording): a 1h or 1d
 * candle finished by a process that started in its middle is completed with the 1-minute candles
 * stored for its span, so the candle written (once) is the whole interval's; the current candles are
 * whole from the first recording after a start. And the recorder's snapshots: MarketData.refreshed()
 * answers a snapshot whose refresh started after the call, even within one millisecond.
 *
 * The books of openai-ipo are scripted (every band at one price), the clocks are the test's and the
 * recorder is driven by hand; the expected candles are computed here from the recordings' own
 * /valuation numbers. PGlite by default, PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { valuationCandles } from '../../db/schema.ts';
import { readCandles } from '../../server/history/candle-store.ts';
import type { Candle } from '../../server/history/candles.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { roundAnswerNumbers } from '../../server/lib/answer-numbers.ts';
import type { Recording } from '../../server/market/recorder.ts';
import type { OrderBook, Venue } from '../../server/venues/venue.ts';
import { createTestApp, type TestApp } from '../harness/app.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const EVENT = 'openai-ipo';
const MICRO = 1_000_000;
const at = (iso: string) => Date.parse(iso);

/**
 * A venue whose openai-ipo books are the test's (shared by every instance of the test), optionally held
 * at the door: a call takes the books as they are when it arrives, then waits for `gate`.
 */
class ScriptedVenue extends FaultyVenue {
  calls = 0;
  gate?: Promise<void>;
  arrived?: () => void;
  constructor(
    inner: Venue,
    readonly books: Map<string, OrderBook>,
  ) {
    super(inner);
  }
  override async getOrderBooks(tokenIds: string[]) {
    this.calls++;
    const scripted = new Map(tokenIds.flatMap((id) => (this.books.has(id) ? [[id, this.books.get(id)!] as const] : [])));
    this.arrived?.();
    await this.gate;
    const inner = await this.inner.getOrderBooks(tokenIds);
    for (const [id, book] of scripted) inner.set(id, book);
    return inner;
  }
}

const books = new Map<string, OrderBook>();
let t: TestApp;
let venue: ScriptedVenue;
let clock = at('2026-11-22T22:40:00Z');
let bandIds: string[];

/** Every band of openai-ipo at `mid`, one cent either side. */
function setPrice(mid: number) {
  for (const id of bandIds) {
    books.set(id, {
      tokenId: id,
      bids: [{ priceMicros: mid - 10_000, sizeMicros: 1_000 * MICRO }],
      asks: [{ priceMicros: mid + 10_000, sizeMicros: 1_000 * MICRO }],
      lastTradeMicros: mid,
      tickMicros: 10_000,
    });
  }
}

/** The numbers a candle keeps of one recording of openai-ipo, from its /valuation object. */
const pointOf = (r: Recording) => {
  const v = r.valuations.get(EVENT)!;
  return { implied: v.impliedValuation, long: Math.round(v.valuation.longCost * MICRO), short: Math.round(v.valuation.shortCost * MICRO) };
};
type Point = ReturnType<typeof pointOf>;

/** The candle these points (oldest first) make. */
function expected(points: Point[]) {
  const ohlc = (xs: number[]) => ({ open: xs[0]!, high: Math.max(...xs), low: Math.min(...xs), close: xs.at(-1)! });
  const implied = points.flatMap((p) => (p.implied === null ? [] : [p.implied]));
  return { implied: implied.length ? ohlc(implied) : null, long: ohlc(points.map((p) => p.long)), short: ohlc(points.map((p) => p.short)), samples: points.length };
}
const numbers = (c: Candle) => ({ implied: c.implied, long: c.long, short: c.short, samples: c.samples });

beforeAll(async () => {
  t = await createTradingApp({}, { venueKind: 'paper', now: () => clock, wrap: (inner) => (venue = new ScriptedVenue(inner, books)) });
  const listed = (await (await t.request('/api/trading/events')).json()) as any;
  bandIds = listed.events.find((e: any) => e.id === EVENT).bands.map((b: any) => b.id);
});
afterAll(() => t.close());

/** Sets the price, moves the clock, records on `app`. */
async function recordAt(app: TestApp, setClock: (ms: number) => void, iso: string, mid: number) {
  setPrice(mid);
  setClock(at(iso));
  const recording = (await app.services.recorder.record())!;
  expect(recording.takenAt.getTime()).toBe(at(iso));
  return pointOf(recording);
}
const step = (iso: string, mid: number) => recordAt(t, (ms) => (clock = ms), iso, mid);

const storedCandle = async (interval: '1m' | '1h' | '1d', startIso: string) => {
  const rows = await readCandles(t.database.db, { eventId: EVENT, interval, fromStart: at(startIso), to: at(startIso), limit: 1 });
  return rows[0];
};

let recording: CandleRecording | undefined;
afterAll(async () => {
  await recording?.stop();
});

describe('a deploy in the middle of an hour and of a day', () => {
  const before: Point[] = [];
  const after: Point[] = [];

  test('the process before the deploy records; stopping it writes its finished minutes, drops its hour and day', async () => {
    const first = startCandleRecording(t.services, { now: () => clock });
    before.push(await step('2026-11-22T22:50:10Z', 300_000));
    before.push(await step('2026-11-22T23:05:10Z', 500_000));
    before.push(await step('2026-11-22T23:12:10Z', 800_000)); // the hour's and the day's high
    before.push(await step('2026-11-22T23:20:10Z', 150_000)); // and their low
    before.push(await step('2026-11-22T23:29:10Z', 400_000));
    clock = at('2026-11-22T23:30:00Z');
    await first.stop();
    const minutes = await readCandles(t.database.db, { eventId: EVENT, interval: '1m', fromStart: at('2026-11-22T22:00:00Z'), to: clock, limit: 100 });
    expect(minutes.map((c) => new Date(c.start).toISOString().slice(11, 16))).toEqual(['22:50', '23:05', '23:12', '23:20', '23:29']);
    // 22:00 was finished (by the 23:05 recording) and is whole; 23:00 and the day were unfinished: not written.
    expect(numbers((await storedCandle('1h', '2026-11-22T22:00:00Z'))!)).toEqual(expected(before.slice(0, 1)));
    expect(await storedCandle('1h', '2026-11-22T23:00:00Z')).toBeUndefined();
    expect(await storedCandle('1d', '2026-11-22T00:00:00Z')).toBeUndefined();
  });

  test('the new process\'s current hour and day include the points before the deploy, from its first recording on', async () => {
    clock = at('2026-11-22T23:31:00Z');
    recording = startCandleRecording(t.services, { now: () => clock });
    await recording.flush(); // the 1-minute candles of the current hour and day are read at start
    after.push(await step('2026-11-22T23:31:10Z', 450_000));
    expect(numbers(recording.current(EVENT, '1h')!)).toEqual(expected([...before.slice(1), ...after]));
    expect(numbers(recording.current(EVENT, '1d')!)).toEqual(expected([...before, ...after]));
    after.push(await step('2026-11-22T23:45:10Z', 550_000));
    const { candles } = (await (await t.request(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1h&limit=2`)).json()) as any;
    expect(candles.map((c: any) => [c.start, c.final, c.samples])).toEqual([
      ['2026-11-22T22:00:00.000Z', true, 1],
      ['2026-11-22T23:00:00.000Z', false, 6],
    ]);
    const e = expected([...before.slice(1), ...after]);
    expect(candles[1].longCost).toEqual({ open: e.long.open / MICRO, high: e.long.high / MICRO, low: e.long.low / MICRO, close: e.long.close / MICRO });
    expect(candles[1].impliedValuation).toEqual(roundAnswerNumbers(e.implied)); // at most 6 decimals (docs/api.md, "Numbers")
  });

  test('finishing the hour and the day writes them whole: open, high and low from before the deploy, close and bands from after', async () => {
    await step('2026-11-23T00:00:10Z', 600_000);
    await recording!.flush();
    const hour = (await storedCandle('1h', '2026-11-22T23:00:00Z'))!;
    const day = (await storedCandle('1d', '2026-11-22T00:00:00Z'))!;
    expect(numbers(hour)).toEqual(expected([...before.slice(1), ...after]));
    expect(numbers(day)).toEqual(expected([...before, ...after]));
    // The open, high and low are the points' before the deploy (not the new process's first point's).
    expect(hour.long.open).toBe(before[1]!.long);
    expect(hour.long.high).toBe(before[2]!.long);
    expect(hour.long.low).toBe(before[3]!.long);
    expect(hour.long.open).not.toBe(after[0]!.long);
    // Its bands are those of its last point (the 23:45 recording), like its close.
    const lastMinute = (await storedCandle('1m', '2026-11-22T23:45:00Z'))!;
    expect(hour.bands).toEqual(lastMinute.bands);
    expect(day.bands).toEqual(lastMinute.bands);
    expect({ hour: hour.source, day: day.source, close: hour.long.close }).toEqual({ hour: 'snapshots', day: 'snapshots', close: after[1]!.long });
  });
});

describe('several instances', () => {
  test('an instance started mid-hour that finishes the hour first writes the whole hour (the one a running instance built)', async () => {
    let clockB = clock;
    const b = await createTestApp({}, { database: t.database, now: () => clockB, venue: new ScriptedVenue(venue.inner, books) });
    let recordingB: CandleRecording | undefined;
    try {
      // Instance A (this file's recording) runs all hour; B starts at 01:20.
      const points = [await step('2026-11-23T01:05:10Z', 420_000), await step('2026-11-23T01:15:10Z', 900_000)];
      await recording!.flush();
      clockB = at('2026-11-23T01:20:00Z');
      recordingB = startCandleRecording(b.services, { now: () => clockB });
      await recordingB.flush();
      for (const [time, mid] of [['01:25:10', 100_000], ['01:40:10', 380_000]] as const) {
        points.push(await step(`2026-11-23T${time}Z`, mid));
        expect(await recordAt(b, (ms) => (clockB = ms), `2026-11-23T${time}Z`, mid)).toEqual(points.at(-1)!);
      }
      await recording!.flush();
      const whole = recording!.current(EVENT, '1h')!;
      expect(numbers(whole)).toEqual(expected(points));
      // B's current hour has what was stored when it started: the 01:05 minute, not yet the 01:15 one
      // (still in A's memory then: A wrote it at its 01:25 recording).
      expect(numbers(recordingB.current(EVENT, '1h')!)).toEqual(expected([points[0]!, ...points.slice(2)]));

      // B finishes the hour first: the row is the whole hour (A's own write is then a no-op).
      await recordAt(b, (ms) => (clockB = ms), '2026-11-23T02:00:10Z', 380_000);
      await recordingB.flush();
      const written = (await storedCandle('1h', '2026-11-23T01:00:00Z'))!;
      expect(numbers(written)).toEqual(numbers(whole));
      expect(written.bands).toEqual(whole.bands);
      await step('2026-11-23T02:00:10Z', 380_000);
      await recording!.flush();
      const rows = await t.database.db
        .select({ samples: valuationCandles.samples })
        .from(valuationCandles)
        .where(and(eq(valuationCandles.eventId, EVENT), eq(valuationCandles.interval, '1h'), eq(valuationCandles.start, new Date(at('2026-11-23T01:00:00Z')))));
      expect(rows).toEqual([{ samples: 4 }]);
    } finally {
      await recordingB?.stop();
      await b.close();
    }
  });
});

describe('the recorder\'s snapshots (MarketData.refreshed)', () => {
  test('a refresh in flight when refreshed() is called is not its answer: a new one is taken after it', async () => {
    const marketData = t.services.marketData;
    setPrice(200_000);
    let open!: () => void;
    venue.gate = new Promise((resolve) => (open = resolve));
    const arrived = new Promise<void>((resolve) => (venue.arrived = resolve));
    const calls = venue.calls;
    const early = marketData.refreshed();
    await arrived; // the venue has been asked (and read the 0.20 books)
    venue.arrived = undefined;
    setPrice(700_000);
    const late = marketData.refreshed();
    open();
    venue.gate = undefined;
    const [a, b] = await Promise.all([early, late]);
    expect(b).not.toBe(a);
    expect(a.books.get(bandIds[0]!)!.lastTradeMicros).toBe(200_000);
    expect(b.books.get(bandIds[0]!)!.lastTradeMicros).toBe(700_000);
    expect(venue.calls - calls).toBe(2);
    // The clock did not move: fetchedAt alone could not tell these two snapshots apart.
    expect(b.fetchedAt.getTime()).toBe(a.fetchedAt.getTime());
    // Requests meanwhile share the latest snapshot (no extra round trip).
    expect(await marketData.snapshot()).toBe(b);
    expect(venue.calls - calls).toBe(2);
  });

  test('two recordings within one millisecond after a price change: the second sees the change', async () => {
    setPrice(300_000);
    const first = (await t.services.recorder.record())!;
    setPrice(310_000);
    const second = (await t.services.recorder.record())!;
    expect(second.takenAt.getTime()).toBe(first.takenAt.getTime());
    expect(second.sequence).toBe(first.sequence + 1);
    expect(second.changed.has(EVENT)).toBe(true);
    expect(pointOf(second).long).toBeGreaterThan(pointOf(first).long);
  });
});

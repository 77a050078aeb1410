/**
 * Valuation history: candles built from the market recorder's snapshots, written once,
 * served by GET /api/trading/valuation/history (and tRPC), pruned after the 1-minute retention.
 *
 * The books of openai-ipo are scripted step by step (a venue that answers them instead of the paper
 * venue's), the clock is the test's, and the recorder is driven by hand; every candle is then
 * compared with a recomputation from the scripted books, written here independently of the service.
 * Run on PGlite by default and on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { valuationCandles } from '../../db/schema.ts';
import { readCandles, writeCandles } from '../../server/history/candle-store.ts';
import { CandleBuilder, type Candle, type CandlePoint } from '../../server/history/candles.ts';
import { startCandleRecording, type CandleRecording } from '../../server/history/recording.ts';
import { roundAnswerNumbers } from '../../server/lib/answer-numbers.ts';
import type { OrderBook, Venue } from '../../server/venues/venue.ts';
import { createTestApp, trpcClient, type TestApp } from '../harness/app.ts';
import { FaultyVenue } from '../harness/faulty-venue.ts';
import { createTradingApp } from '../harness/trading-venue.ts';

const EVENT = 'openai-ipo';
const MICRO = 1_000_000;
const at = (iso: string) => Date.parse(iso);

/** A venue whose books for some tokens are set by the test; every other token is the inner venue's. */
class ScriptedVenue extends FaultyVenue {
  books = new Map<string, OrderBook>();
  constructor(inner: Venue) {
    super(inner);
  }
  override async getOrderBooks(tokenIds: string[]) {
    const inner = await this.inner.getOrderBooks(tokenIds);
    for (const id of tokenIds) if (this.books.has(id)) inner.set(id, this.books.get(id)!);
    return inner;
  }
}

/** One band's scripted book: a bid, an ask (micro-USD; null for an empty side) and a last trade. */
interface ScriptedBand {
  bid: number | null;
  ask: number | null;
  last: number | null;
}

const bookOf = (tokenId: string, b: ScriptedBand): OrderBook => ({
  tokenId,
  bids: b.bid === null ? [] : [{ priceMicros: b.bid, sizeMicros: 1_000 * MICRO }],
  asks: b.ask === null ? [] : [{ priceMicros: b.ask, sizeMicros: 1_000 * MICRO }],
  lastTradeMicros: b.last,
  tickMicros: 10_000,
});

interface BandInfo {
  id: string;
  minValuation: number;
  maxValuation: number | null;
}

/** docs/decisions.md §6, written again: the band price, the unit costs at 0.20/0.15 and the implied valuation. */
function recompute(bands: BandInfo[], scripted: ScriptedBand[]) {
  const n = bands.length;
  const bid = scripted.map((s) => (s.bid ?? 0) / MICRO);
  const ask = scripted.map((s) => (s.ask ?? MICRO) / MICRO);
  const price = scripted.map((s, i) => (ask[i]! - bid[i]! <= 0.1 + 1e-9 ? (bid[i]! + ask[i]!) / 2 : s.last !== null ? s.last / MICRO : (bid[i]! + ask[i]!) / 2));
  let long = 0;
  let short = 0;
  for (let i = 0; i < n; i++) {
    long += (0.2 + ((1 - 0.2) * i) / (n - 1)) * price[i]!;
    short += (0.15 + ((1 - 0.15) * (n - 1 - i)) / (n - 1)) * price[i]!;
  }
  let weighted = 0;
  let total = 0;
  bands.forEach((b, i) => {
    if (b.minValuation === 0 && b.maxValuation === 0) return;
    const mid = b.maxValuation === null ? 1.25 * b.minValuation : b.minValuation === 0 ? b.maxValuation / 2 : (b.minValuation + b.maxValuation) / 2;
    weighted += price[i]! * mid;
    total += price[i]!;
  });
  return {
    implied: total > 0 ? weighted / total : null,
    long: Math.round(long * MICRO),
    short: Math.round(short * MICRO),
    bands: bands.map((b, i) => ({ bandId: b.id, closeMicros: Math.round(price[i]! * MICRO), bidMicros: Math.round(bid[i]! * MICRO), askMicros: Math.round(ask[i]! * MICRO) })),
  };
}

/** The candle a list of recomputed points makes. */
function expectedCandle(points: ReturnType<typeof recompute>[]) {
  const ohlc = (xs: number[]) => ({ open: xs[0]!, high: Math.max(...xs), low: Math.min(...xs), close: xs.at(-1)! });
  const implied = points.map((p) => p.implied).filter((x): x is number => x !== null);
  return {
    implied: implied.length ? ohlc(implied) : null,
    long: ohlc(points.map((p) => p.long)),
    short: ohlc(points.map((p) => p.short)),
    bands: points.at(-1)!.bands,
    samples: points.length,
  };
}

/** mulberry32: the script is random but the same on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

let t: TestApp;
let venue: ScriptedVenue;
let recording: CandleRecording;
// Before the first step: a snapshot taken at setup must not stand in for the first scripted one.
let clock = at('2026-11-22T12:50:00Z');
let bands: BandInfo[];

beforeAll(async () => {
  t = await createTradingApp({}, { venueKind: 'paper', now: () => clock, wrap: (inner) => (venue = new ScriptedVenue(inner)) });
  recording = startCandleRecording(t.services, { now: () => clock });
  const listed = (await (await t.request('/api/trading/events')).json()) as any;
  bands = listed.events.find((e: any) => e.id === EVENT).bands.map((b: any) => ({ id: b.id, minValuation: b.minValuation, maxValuation: b.maxValuation }));
});
afterAll(async () => {
  await recording.stop();
  await t.close();
});

const get = async (path: string) => {
  const res = await t.request(path);
  return { res, body: (await res.json()) as any };
};

/** Sets the books, moves the clock, records; answers the recomputation of that step. */
async function step(time: number, scripted: ScriptedBand[]) {
  scripted.forEach((s, i) => venue.books.set(bands[i]!.id, bookOf(bands[i]!.id, s)));
  clock = time;
  const recorded = await t.services.recorder.record();
  expect(recorded!.takenAt.getTime()).toBe(time);
  return recompute(bands, scripted);
}

/** Stored candles as the route's micro-unit shape, for comparison with a recomputation. */
const stored = (c: Candle) => ({ implied: c.implied, long: c.long, short: c.short, bands: c.bands, samples: c.samples });

describe('candles from a scripted sequence of books', () => {
  const times = ['12:58:10', '12:58:40', '12:59:05', '12:59:50', '13:00:00', '13:00:30', '13:01:15', '13:01:59'].map((s) => at(`2026-11-22T${s}Z`));
  const points: ReturnType<typeof recompute>[] = [];

  test('every recording feeds the 1m, 1h and 1d candles; finished ones are written once they end', async () => {
    const random = prng(19);
    for (const [k, time] of times.entries()) {
      const scripted = bands.map((_, i): ScriptedBand => {
        const mid = (5 + Math.floor(random() * 60) + i) * 10_000;
        // One step has a wide spread on band 2 (its price is then the last trade) and an empty bid side on band 5.
        if (k === 3 && i === 2) return { bid: mid - 100_000, ask: mid + 100_000, last: mid + 30_000 };
        if (k === 5 && i === 5) return { bid: null, ask: mid, last: null };
        return { bid: mid - 10_000, ask: mid + 10_000, last: mid };
      });
      points.push(await step(time, scripted));
    }
    clock = at('2026-11-22T13:02:00Z');
    await recording.closeCandles();

    const minute = await readCandles(t.database.db, { eventId: EVENT, interval: '1m', fromStart: at('2026-11-22T12:00:00Z'), to: clock, limit: 100 });
    expect(minute.map((c) => new Date(c.start).toISOString())).toEqual(['12:58', '12:59', '13:00', '13:01'].map((m) => `2026-11-22T${m}:00.000Z`));
    expect(minute.map(stored)).toEqual([0, 2, 4, 6].map((k) => expectedCandle(points.slice(k, k + 2))));
    for (const c of minute) expect({ end: c.end - c.start, source: c.source }).toEqual({ end: 60_000, source: 'snapshots' });

    const hour = await readCandles(t.database.db, { eventId: EVENT, interval: '1h', fromStart: at('2026-11-22T00:00:00Z'), to: clock, limit: 100 });
    expect(hour.map((c) => [new Date(c.start).toISOString(), new Date(c.end).toISOString()])).toEqual([['2026-11-22T12:00:00.000Z', '2026-11-22T13:00:00.000Z']]);
    expect(stored(hour[0]!)).toEqual(expectedCandle(points.slice(0, 4)));
    // The current hour and day are in memory, not written.
    expect(stored(recording.current(EVENT, '1h')!)).toEqual(expectedCandle(points.slice(4)));
    expect(stored(recording.current(EVENT, '1d')!)).toEqual(expectedCandle(points));
    expect(await readCandles(t.database.db, { eventId: EVENT, interval: '1d', fromStart: 0, to: clock, limit: 10 })).toEqual([]);

    // Every other listed event got its candles too (from the paper venue's books), resolved ones included.
    const written = await t.database.db.select({ eventId: valuationCandles.eventId }).from(valuationCandles).where(and(eq(valuationCandles.interval, '1m'), eq(valuationCandles.start, new Date(at('2026-11-22T12:59:00Z')))));
    expect(written.map((r) => r.eventId).sort()).toEqual((t.services.recorder.latest()!.snapshot.events.map((e) => e.id) as string[]).sort());
    expect(written.map((r) => r.eventId)).toContain('stripe-ipo');
  });

  test('the route answers them oldest first in USD, the current candle last with final: false', async () => {
    const { res, body } = await get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1h`);
    expect(res.status).toBe(200);
    expect(body.eventId).toBe(EVENT);
    expect(body.interval).toBe('1h');
    expect(body.retainedFrom).toBeNull();
    expect(body.candles.map((c: any) => [c.start, c.end, c.final])).toEqual([
      ['2026-11-22T12:00:00.000Z', '2026-11-22T13:00:00.000Z', true],
      ['2026-11-22T13:00:00.000Z', '2026-11-22T14:00:00.000Z', false],
    ]);
    const usd = (o: { open: number; high: number; low: number; close: number }) => ({ open: o.open / MICRO, high: o.high / MICRO, low: o.low / MICRO, close: o.close / MICRO });
    for (const [i, slice] of [points.slice(0, 4), points.slice(4)].entries()) {
      const e = expectedCandle(slice);
      expect(body.candles[i]).toEqual({
        start: body.candles[i].start,
        end: body.candles[i].end,
        // The API's numbers have at most 6 decimals (docs/api.md, "Numbers").
        impliedValuation: roundAnswerNumbers(e.implied),
        longCost: usd(e.long),
        shortCost: usd(e.short),
        bands: e.bands.map((b) => ({ bandId: b.bandId, close: b.closeMicros / MICRO, bid: b.bidMicros / MICRO, ask: b.askMicros / MICRO })),
        final: i === 0,
        source: 'snapshots',
        samples: slice.length,
      });
    }

    const minutes = (await get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1m`)).body;
    expect(minutes.candles.map((c: any) => [c.start.slice(11, 16), c.final])).toEqual([['12:58', true], ['12:59', true], ['13:00', true], ['13:01', true]]);
    expect(minutes.retainedFrom).toBe('2026-10-23T13:02:00.000Z');
    const day = (await get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1d`)).body;
    expect(day.candles.map((c: any) => [c.start, c.final, c.samples])).toEqual([['2026-11-22T00:00:00.000Z', false, times.length]]);
  });

  test('from, to and limit choose the range; limit keeps its latest candles', async () => {
    const range = (q: string) => get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1m&${q}`).then((r) => r.body.candles.map((c: any) => c.start.slice(11, 16)));
    expect(await range('limit=2')).toEqual(['13:00', '13:01']);
    expect(await range('from=2026-11-22T12:59:30Z&to=2026-11-22T13:00:10Z')).toEqual(['12:59', '13:00']);
    expect(await range('to=2026-11-22T12:58:59Z')).toEqual(['12:58']);
    expect(await range('from=2026-11-22T12:59:00%2B00:00&limit=3')).toEqual(['12:59', '13:00', '13:01']);
    expect(await range('from=2026-11-22&to=2026-11-22&limit=5000')).toEqual(['12:58', '12:59', '13:00', '13:01']);
    expect(await range('from=2026-11-21T00:00:00Z&to=2026-11-21T23:00:00Z')).toEqual([]);
  });

  test('closeCandles leaves nothing unwritten; limit=1 is the current candle alone', async () => {
    expect(recording.unwritten(EVENT, '1m')).toEqual([]);
    const { body } = await get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1h&limit=1`);
    expect(body.candles.map((c: any) => [c.start, c.final])).toEqual([['2026-11-22T13:00:00.000Z', false]]);
  });
});

describe('event ids, parameters and errors', () => {
  test.each([
    ['our id', 'spacex-ipo-higher'],
    ['the venue slug', 'spacex-ipo-closing-market-cap-higher-strikes'],
    ['an alias', 'spacex-ipo'],
  ])('%s answers with our id', async (_, ref) => {
    const { res, body } = await get(`/api/trading/valuation/history?eventSlug=${ref}&interval=1m`);
    expect(res.status).toBe(200);
    expect(body.eventId).toBe('spacex-ipo-higher');
    expect(body.candles.length).toBe(4);
  });

  test('an unknown event is 404 naming the parameter, on /api and /trpc', async () => {
    const { res, body } = await get('/api/trading/valuation/history?eventSlug=nope-ipo');
    expect(res.status).toBe(404);
    expect(body).toMatchObject({ code: 'NOT_FOUND', message: 'eventSlug: no event nope-ipo; GET /api/trading/events lists them' });
    const viaTrpc = await trpcClient(t)
      .marketHistory.valuationHistory.query({ eventSlug: 'nope-ipo' })
      .then(() => expect.unreachable(), (e: any) => e.data.api);
    expect(viaTrpc).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  test.each([
    ['eventSlug missing', 'interval=1h', 'eventSlug'],
    ['an unknown interval', 'eventSlug=openai-ipo&interval=5m', 'interval'],
    ['limit 0', 'eventSlug=openai-ipo&limit=0', 'limit: must be from 1 to 5000'],
    ['limit 5001', 'eventSlug=openai-ipo&limit=5001', 'limit: must be from 1 to 5000'],
    ['limit 1e3', 'eventSlug=openai-ipo&limit=1e3', 'limit: must be a whole number'],
    ['an impossible date', 'eventSlug=openai-ipo&from=2026-02-31', 'from: is not a real calendar date'],
    ['a date out of range', 'eventSlug=openai-ipo&to=10000-01-01', 'to:'],
    ['from after to', 'eventSlug=openai-ipo&from=2026-11-22T13:00:00Z&to=2026-11-22T12:00:00Z', 'from: must not be after to'],
    ['an unknown parameter', 'eventSlug=openai-ipo&intervall=1h', 'intervall'],
    ['a repeated parameter', 'eventSlug=openai-ipo&limit=1&limit=2', 'limit'],
  ])('%s is 400', async (_, query, message) => {
    const { res, body } = await get(`/api/trading/valuation/history?${query}`);
    expect(res.status).toBe(400);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.message).toContain(message);
  });

  test('public and unbilled, like /valuation; tRPC answers the same object', async () => {
    const { res, body } = await get(`/api/trading/valuation/history?eventSlug=${EVENT}&interval=1h`);
    expect(res.headers.get('x-request-cost-usd')).toBeNull();
    expect(await trpcClient(t).marketHistory.valuationHistory.query({ eventSlug: EVENT, interval: '1h' })).toEqual(body);
  });
});

describe('several instances', () => {
  test('the same candle written by two builders is one row: the first written', async () => {
    const make = (samples: number, close: number): Candle => ({
      eventId: 'anthropic-ipo',
      interval: '1m',
      start: at('2026-11-22T10:00:00Z'),
      end: at('2026-11-22T10:01:00Z'),
      implied: null,
      long: { open: close, high: close, low: close, close },
      short: { open: 1, high: 1, low: 1, close: 1 },
      bands: [{ bandId: 'b', closeMicros: close, bidMicros: null, askMicros: null }],
      samples,
      source: 'snapshots',
    });
    expect(await writeCandles(t.database.db, [make(3, 500_000)])).toBe(1);
    expect(await writeCandles(t.database.db, [make(7, 600_000)])).toBe(0);
    const [row] = await readCandles(t.database.db, { eventId: 'anthropic-ipo', interval: '1m', fromStart: at('2026-11-22T10:00:00Z'), to: at('2026-11-22T10:00:00Z'), limit: 5 });
    expect(row).toEqual(make(3, 500_000));
  });

  test('two instances recording the same minute from different books: the first to close it keeps it', async () => {
    let clockB = clock;
    let venueB!: ScriptedVenue;
    const b = await createTestApp({}, { database: t.database, now: () => clockB, venue: (venueB = new ScriptedVenue(venue.inner)) });
    const recordingB = startCandleRecording(b.services, { now: () => clockB });
    try {
      const flat = (mid: number): ScriptedBand[] => bands.map(() => ({ bid: mid - 10_000, ask: mid + 10_000, last: mid }));
      const ours = [await step(at('2026-11-22T13:05:10Z'), flat(300_000)), await step(at('2026-11-22T13:05:40Z'), flat(320_000))];
      for (const [time, mid] of [['13:05:20', 400_000], ['13:05:50', 410_000]] as const) {
        flat(mid).forEach((s, i) => venueB.books.set(bands[i]!.id, bookOf(bands[i]!.id, s)));
        clockB = at(`2026-11-22T${time}Z`);
        await b.services.recorder.record();
      }
      clock = clockB = at('2026-11-22T13:06:00Z');
      await recording.closeCandles();
      await recordingB.closeCandles();
      const rows = await t.database.db
        .select()
        .from(valuationCandles)
        .where(and(eq(valuationCandles.eventId, EVENT), eq(valuationCandles.interval, '1m'), eq(valuationCandles.start, new Date(at('2026-11-22T13:05:00Z')))));
      expect(rows.length).toBe(1);
      expect({ long: rows[0]!.longCloseMicros, samples: rows[0]!.samples }).toEqual({ long: expectedCandle(ours).long.close, samples: 2 });
    } finally {
      await recordingB.stop();
      await b.close();
    }
  });
});

describe('retention', () => {
  test('1-minute candles older than CANDLE_MINUTE_RETENTION_DAYS are pruned; 1h and 1d are kept', async () => {
    const now = clock;
    const old = (interval: '1m' | '1h' | '1d', daysAgo: number): Candle => {
      const span = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 }[interval];
      const start = Math.floor((now - daysAgo * 86_400_000) / span) * span;
      const one = { open: 1, high: 1, low: 1, close: 1 };
      return { eventId: 'strava-ipo', interval, start, end: start + span, implied: null, long: one, short: one, bands: [], samples: 1, source: 'snapshots' };
    };
    const candles = [old('1m', 31), old('1m', 30.5), old('1m', 29), old('1h', 400), old('1d', 400)];
    expect(await writeCandles(t.database.db, candles)).toBe(5);
    expect(await recording.prune()).toBe(2);
    const left = await t.database.db.select({ interval: valuationCandles.interval, start: valuationCandles.start }).from(valuationCandles).where(eq(valuationCandles.eventId, 'strava-ipo'));
    const strava = left.filter((r) => r.start.getTime() < now - 86_400_000);
    expect(strava.map((r) => r.interval).sort()).toEqual(['1d', '1h', '1m']);
    expect(await recording.prune()).toBe(0);

    const { body } = await get(`/api/trading/valuation/history?eventSlug=strava-ipo&interval=1m&from=${new Date(now - 40 * 86_400_000).toISOString()}&to=${new Date(now - 30 * 86_400_000).toISOString()}`);
    expect(body.candles).toEqual([]);
    expect(body.retainedFrom).toBe(new Date(now - 30 * 86_400_000).toISOString());
    const days = (await get(`/api/trading/valuation/history?eventSlug=strava-ipo&interval=1d&from=${new Date(now - 401 * 86_400_000).toISOString()}&limit=5000`)).body;
    expect(days.candles[0]).toMatchObject({ final: true, impliedValuation: null, bands: [] });
  });
});

describe('the builder', () => {
  const point = (iso: string, long: number, implied: number | null = 1000): CandlePoint => ({ at: at(iso), implied, longMicros: long, shortMicros: 1, bands: [] });

  test('a late point (a clock that went back, a snapshot that landed after its candle ended) never reopens or restarts a candle', () => {
    const b = new CandleBuilder('snapshots', ['1m']);
    expect(b.add('e', point('2026-11-22T10:00:30Z', 1))).toEqual([]);
    const [first] = b.add('e', point('2026-11-22T10:01:10Z', 2));
    expect(first).toMatchObject({ start: at('2026-11-22T10:00:00Z'), long: { open: 1, close: 1 }, samples: 1 });
    expect(b.add('e', point('2026-11-22T10:00:50Z', 9))).toEqual([]);
    expect(b.currentOf('e', '1m')).toMatchObject({ start: at('2026-11-22T10:01:00Z'), long: { open: 2, high: 2, close: 2 }, samples: 1 });
    expect(b.finishBefore(at('2026-11-22T10:02:00Z')).map((c) => c.start)).toEqual([at('2026-11-22T10:01:00Z')]);
    expect(b.add('e', point('2026-11-22T10:01:59Z', 9))).toEqual([]);
    expect(b.currentOf('e', '1m')).toBeUndefined();
  });

  test('the implied valuation\'s OHLC skips points without one (null only when no point had one)', () => {
    const b = new CandleBuilder('snapshots', ['1h']);
    b.add('e', point('2026-11-22T10:00:00Z', 5, null));
    expect(b.currentOf('e', '1h')!.implied).toBeNull();
    b.add('e', point('2026-11-22T10:10:00Z', 4, 900));
    b.add('e', point('2026-11-22T10:20:00Z', 6, null));
    b.add('e', point('2026-11-22T10:30:00Z', 3, 1100));
    expect(b.currentOf('e', '1h')).toMatchObject({ implied: { open: 900, high: 1100, low: 900, close: 1100 }, long: { open: 5, high: 6, low: 3, close: 3 }, samples: 4 });
  });
});

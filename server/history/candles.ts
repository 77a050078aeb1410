/**
 * Valuation candles: open/high/low/close of an event's basket metrics over a UTC-aligned
 * interval, built from points (one market-data snapshot, or one backfilled sample, each). Pure and
 * in memory: nothing here reads or writes the database (candle-store.ts does).
 *
 * A point carries the implied valuation (billions of USD, or null when no band other than "No IPO"
 * has a price), the LONG and SHORT unit costs at the default floors as integer micro-USD, and every
 * band's price, best bid and best ask (micro-USD). A candle keeps the OHLC of the first three and the
 * bands of its last point (its close).
 */
import type { CandleInterval } from '../../db/tables/market-history.ts';
import { microsToUsd, usdToMicros } from '../lib/money.ts';
import { quoteEvent, type BandMarket } from '../valuation/index.ts';
import type { EventValuation } from '../market/recorder.ts';

export type { CandleInterval };
export const INTERVALS: readonly CandleInterval[] = ['1m', '1h', '1d'];

export const INTERVAL_MS: Record<CandleInterval, number> = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 };

/** The start of the interval holding `ms` (UTC: the epoch is a UTC midnight, so days align to 00:00Z). */
export const alignStart = (ms: number, interval: CandleInterval) => Math.floor(ms / INTERVAL_MS[interval]) * INTERVAL_MS[interval];

/**
 * A band at a candle's close, micro-USD. `bidMicros`/`askMicros` are null when the source had no
 * book (a candle backfilled from the live venue's price history, which is one price per time).
 */
export interface HistoryBand {
  bandId: string;
  closeMicros: number;
  bidMicros: number | null;
  askMicros: number | null;
}

export interface Ohlc {
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface CandlePoint {
  /** When the point was observed (ms since the epoch). */
  at: number;
  implied: number | null;
  longMicros: number;
  shortMicros: number;
  bands: HistoryBand[];
}

export type CandleSource = 'snapshots' | 'backfill';

export interface Candle {
  eventId: string;
  interval: CandleInterval;
  start: number;
  end: number;
  /** Null when no point of the candle had an implied valuation. */
  implied: Ohlc | null;
  long: Ohlc;
  short: Ohlc;
  bands: HistoryBand[];
  /** Points the candle was built from (a live-venue backfill stores 0: see backfill-polymarket.ts). */
  samples: number;
  source: CandleSource;
  /**
   * When the first point a builder put in this candle was observed (builder candles only, not stored):
   * a process that started after `start` has not seen the candle's beginning, which the 1-minute
   * candles stored before that point's minute hold (see completeCandle in recording.ts).
   */
  firstPointAt?: number;
}

/** The numbers of a candle that combine over consecutive candles of one span. */
export type CandleSpan = Pick<Candle, 'implied' | 'long' | 'short' | 'samples'>;

const combineOhlc = (os: Ohlc[]): Ohlc => ({
  open: os[0]!.open,
  high: Math.max(...os.map((o) => o.high)),
  low: Math.min(...os.map((o) => o.low)),
  close: os.at(-1)!.close,
});

/**
 * Consecutive candles (oldest first) as one: open = the earliest's open, high = max, low = min, close =
 * the latest's close (the implied valuation over the candles that have one), samples summed.
 */
export function combineSpans(pieces: CandleSpan[]): CandleSpan | undefined {
  if (!pieces.length) return undefined;
  const implied = pieces.flatMap((p) => (p.implied ? [p.implied] : []));
  return {
    implied: implied.length ? combineOhlc(implied) : null,
    long: combineOhlc(pieces.map((p) => p.long)),
    short: combineOhlc(pieces.map((p) => p.short)),
    samples: pieces.reduce((n, p) => n + p.samples, 0),
  };
}

/** `candle` with `earlier` (what came before its first point, same span) in front: its close and bands stay. */
export function withEarlier(earlier: CandleSpan | undefined, candle: Candle): Candle {
  return earlier ? { ...candle, ...combineSpans([earlier, candle])! } : candle;
}


/** A point from a recording's /valuation object (default floors): the numbers the candles keep. */
export function pointOfValuation(valuation: EventValuation, at: number): CandlePoint {
  const quotes = new Map(valuation.slippage.bandPrices.map((b) => [b.bandIndex, b]));
  return {
    at,
    implied: valuation.impliedValuation,
    longMicros: usdToMicros(valuation.valuation.longCost),
    shortMicros: usdToMicros(valuation.valuation.shortCost),
    bands: valuation.bands.map((b) => {
      const quote = quotes.get(b.bandIndex);
      return { bandId: b.tokenId, closeMicros: usdToMicros(b.price), bidMicros: quote ? usdToMicros(quote.bid) : null, askMicros: quote ? usdToMicros(quote.ask) : null };
    }),
  };
}

/**
 * A point from band prices alone (the live venue's price history): the same valuation module prices
 * the basket, with each band's price taken as its midpoint (bid = ask = price), so the costs and the
 * implied valuation follow docs/decisions.md §6 exactly; bid and ask are unknown (null).
 */
export function pointOfPrices(bands: Array<Pick<BandMarket, 'label' | 'minValuation' | 'maxValuation'> & { bandId: string }>, pricesMicros: number[], at: number, floors: { floorL: number; floorS: number }): CandlePoint {
  const markets: BandMarket[] = bands.map((b, i) => ({ label: b.label, minValuation: b.minValuation, maxValuation: b.maxValuation, bid: microsToUsd(pricesMicros[i]!), ask: microsToUsd(pricesMicros[i]!), lastTrade: null }));
  const q = quoteEvent(markets, floors);
  return {
    at,
    implied: q.impliedValuation,
    longMicros: usdToMicros(q.valuation.longCost),
    shortMicros: usdToMicros(q.valuation.shortCost),
    bands: bands.map((b, i) => ({ bandId: b.bandId, closeMicros: pricesMicros[i]!, bidMicros: null, askMicros: null })),
  };
}

const ohlcOf = (x: number): Ohlc => ({ open: x, high: x, low: x, close: x });
function extend(o: Ohlc, x: number) {
  if (x > o.high) o.high = x;
  if (x < o.low) o.low = x;
  o.close = x;
}

function newCandle(eventId: string, interval: CandleInterval, point: CandlePoint, source: CandleSource): Candle {
  const start = alignStart(point.at, interval);
  return {
    eventId,
    interval,
    start,
    end: start + INTERVAL_MS[interval],
    implied: point.implied === null ? null : ohlcOf(point.implied),
    long: ohlcOf(point.longMicros),
    short: ohlcOf(point.shortMicros),
    bands: point.bands,
    samples: 1,
    source,
    firstPointAt: point.at,
  };
}

function addTo(candle: Candle, point: CandlePoint) {
  if (point.implied !== null) {
    if (candle.implied) extend(candle.implied, point.implied);
    else candle.implied = ohlcOf(point.implied);
  }
  extend(candle.long, point.longMicros);
  extend(candle.short, point.shortMicros);
  candle.bands = point.bands;
  candle.samples++;
}

/**
 * The current (unfinished) candle of every event and interval. A point past a candle's end finishes
 * it (returned, to be written) and starts the next; a point older than the current candle, or than
 * the end of a candle already finished (a clock that went back, a snapshot that arrived late), is
 * ignored for that interval, so a finished candle is never reopened or started twice.
 */
export class CandleBuilder {
  private current = new Map<string, Candle>();
  /** Per event and interval, the end of the last finished candle: a later point older than it is ignored. */
  private finishedUntil = new Map<string, number>();

  constructor(
    private source: CandleSource = 'snapshots',
    private intervals: readonly CandleInterval[] = INTERVALS,
  ) {}

  /** Adds a point of `eventId` to each interval's current candle; answers the candles it finished. */
  add(eventId: string, point: CandlePoint): Candle[] {
    const finished: Candle[] = [];
    for (const interval of this.intervals) {
      const key = `${eventId}\u0000${interval}`;
      const candle = this.current.get(key);
      const start = alignStart(point.at, interval);
      if (candle && candle.start === start) {
        addTo(candle, point);
        continue;
      }
      if ((candle && start < candle.start) || point.at < (this.finishedUntil.get(key) ?? -Infinity)) continue;
      if (candle) {
        finished.push(candle);
        this.finishedUntil.set(key, candle.end);
      }
      this.current.set(key, newCandle(eventId, interval, point, this.source));
    }
    return finished;
  }

  /** Finishes every current candle whose end is at or before `now` (no point will ever join it). */
  finishBefore(now: number): Candle[] {
    const finished: Candle[] = [];
    for (const [key, candle] of this.current) {
      if (candle.end <= now) {
        finished.push(candle);
        this.current.delete(key);
        this.finishedUntil.set(key, candle.end);
      }
    }
    return finished;
  }

  /** The unfinished candle of an event and interval, if any (a copy: the builder keeps changing its own). */
  currentOf(eventId: string, interval: CandleInterval): Candle | undefined {
    const candle = this.current.get(`${eventId}\u0000${interval}`);
    return candle && structuredClone(candle);
  }

  /** Every candle still open (for a final flush). */
  drain(): Candle[] {
    const all = [...this.current.values()];
    this.current.clear();
    return all;
  }
}

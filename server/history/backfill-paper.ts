/**
 * Backfill on the paper venue: its books are a pure function of PAPER_SEED, each band's seed price
 * and the time (server/venues/paper-book.ts), so the books of any past moment can be computed. A
 * backfilled candle is built exactly as a recorded one — the same /valuation computation at the
 * default floors (eventValuation) on those books, one point every `stepMs` from the candle's start —
 * so it holds everything a recorded candle does (bid and ask included); `samples` is the number of
 * computed points and `source` is `backfill`.
 */
import type { Db } from '../../db/client.ts';
import type { EventWithBands } from '../events/queries.ts';
import type { MarketSnapshot } from '../market/market-data.ts';
import { eventValuation } from '../market/valuation-view.ts';
import { DEFAULT_FLOORS } from '../valuation/index.ts';
import { paperBook, type PaperBookShape } from '../venues/paper-book.ts';
import type { OrderBook } from '../venues/venue.ts';
import { writeCandles } from './candle-store.ts';
import { alignStart, CandleBuilder, INTERVAL_MS, pointOfValuation, type Candle, type CandleInterval } from './candles.ts';

/** Default spacing of the computed points: one a minute for 1m and 1h candles, one every 15 minutes for 1d. */
export const PAPER_STEP_MS: Record<CandleInterval, number> = { '1m': 60_000, '1h': 60_000, '1d': 900_000 };
/** Points computed per event and call, at most (a year of 1d candles at the default step is 35,040). */
export const MAX_PAPER_POINTS = 2_000_000;

/** Candles handed to the writer at a time: one INSERT of candle-store.ts's size. */
const WRITE_BATCH = 100;
/** Points computed between two yields to the event loop: a backfill inside the server (the history fill, the operator route) never holds requests up for long. */
const YIELD_EVERY = 1_000;

export interface PaperBackfillRange {
  interval: CandleInterval;
  /** The candle holding `from` is the first; the last is the last one that has ended by `until`. */
  from: number;
  until: number;
  stepMs?: number;
}

/** The span of whole candles a backfill covers: [first start, last end). */
export function candleSpan(interval: CandleInterval, from: number, until: number) {
  const start = alignStart(from, interval);
  const end = alignStart(until, interval);
  return { start, end: Math.max(start, end) };
}

export function checkedStep(interval: CandleInterval, stepMs = PAPER_STEP_MS[interval]) {
  if (!(Number.isInteger(stepMs) && stepMs >= 1_000 && INTERVAL_MS[interval] % stepMs === 0)) {
    throw new RangeError(`step: must be a whole number of seconds that divides ${interval}`);
  }
  return stepMs;
}

/**
 * The candles of one event over the range, as the recorder would have built them from a snapshot
 * every `stepMs` (starting on each candle's start). Calls `onCandles` with each batch of finished
 * candles, oldest first.
 */
export async function computePaperCandles(
  event: EventWithBands,
  shape: PaperBookShape,
  range: PaperBackfillRange,
  onCandles: (candles: Candle[]) => Promise<void> | void,
): Promise<{ candles: number; points: number }> {
  const step = checkedStep(range.interval, range.stepMs);
  const { start, end } = candleSpan(range.interval, range.from, range.until);
  const points = (end - start) / step;
  if (points > MAX_PAPER_POINTS) throw new RangeError(`the range needs ${points} points for ${event.id}; at most ${MAX_PAPER_POINTS} (backfill a shorter range or a larger step)`);
  const builder = new CandleBuilder('backfill', [range.interval]);
  let batch: Candle[] = [];
  let count = 0;
  const emit = async (candles: Candle[], force = false) => {
    batch.push(...candles);
    count += candles.length;
    if (batch.length >= WRITE_BATCH || (force && batch.length)) {
      const out = batch;
      batch = [];
      await onCandles(out);
    }
  };
  for (let t = start, n = 1; t < end; t += step, n++) {
    if (n % YIELD_EVERY === 0) {
      Bun.gc(false); // the books of the last 1,000 points are garbage: a young collection keeps a month's backfill from growing the heap
      await new Promise((resolve) => setImmediate(resolve));
    }
    const books = new Map<string, OrderBook>(event.bands.map((b) => [b.id, paperBook(shape, b.id, b.seedPrice, t)]));
    const snapshot: MarketSnapshot = { events: [event], books, fetchedAt: new Date(t) };
    await emit(builder.add(event.id, pointOfValuation(eventValuation(event, snapshot, DEFAULT_FLOORS), t)));
  }
  await emit(builder.finishBefore(end), true);
  return { candles: count, points };
}

/** Computes and writes (`ON CONFLICT DO NOTHING`: a candle already there, recorded or backfilled, stays). */
export async function backfillPaperEvent(db: Db, event: EventWithBands, shape: PaperBookShape, range: PaperBackfillRange) {
  let written = 0;
  const { candles, points } = await computePaperCandles(event, shape, range, async (batch) => {
    written += await writeCandles(db, batch);
  });
  return { candles, written, points };
}

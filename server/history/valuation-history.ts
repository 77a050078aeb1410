/**
 * GET /api/trading/valuation/history: an event's candles of one interval, oldest first, from the
 * database (finished candles), the finished candles this instance has not written yet, and last the
 * current unfinished candle this instance is building (`final: false`). docs/history.md.
 */
import { ApiError } from '../errors.ts';
import { microsToUsd } from '../lib/money.ts';
import type { HistoryHandles } from './handles.ts';
import { readCandles } from './candle-store.ts';
import { alignStart, INTERVAL_MS, type Candle, type CandleInterval, type Ohlc } from './candles.ts';
import { candleRecordingOf, historyNow } from './recording.ts';

const DAY_MS = 86_400_000;

export interface ValuationHistoryQuery {
  eventId: string;
  interval: CandleInterval;
  from?: Date;
  to?: Date;
  limit: number;
}

const usd = (o: Ohlc) => ({ open: microsToUsd(o.open), high: microsToUsd(o.high), low: microsToUsd(o.low), close: microsToUsd(o.close) });
const usdOrNull = (micros: number | null) => (micros === null ? null : microsToUsd(micros));

export function candleView(c: Candle, final: boolean) {
  return {
    start: new Date(c.start).toISOString(),
    end: new Date(c.end).toISOString(),
    impliedValuation: c.implied && { open: c.implied.open, high: c.implied.high, low: c.implied.low, close: c.implied.close },
    longCost: usd(c.long),
    shortCost: usd(c.short),
    bands: c.bands.map((b) => ({ bandId: b.bandId, close: microsToUsd(b.closeMicros), bid: usdOrNull(b.bidMicros), ask: usdOrNull(b.askMicros) })),
    final,
    source: c.source,
    samples: c.samples,
  };
}

export async function valuationHistory(services: HistoryHandles, q: ValuationHistoryQuery) {
  const now = historyNow(services);
  const step = INTERVAL_MS[q.interval];
  const to = q.to?.getTime() ?? now;
  // The default range starts no earlier than 1970-01-01T00:00Z (the earliest date a parameter may name).
  const from = q.from?.getTime() ?? Math.max(0, to - q.limit * step);
  if (from > to) throw new ApiError('BAD_REQUEST', 'from: must not be after to');
  const fromStart = alignStart(from, q.interval);
  const inRange = (c: Candle) => c.start >= fromStart && c.start <= to;

  const stored = await readCandles(services.database.db, { eventId: q.eventId, interval: q.interval, fromStart, to, limit: q.limit });
  const rows = stored.map((c) => ({ candle: c, final: true }));
  const starts = new Set(stored.map((c) => c.start));
  const recording = candleRecordingOf(services);
  if (recording) {
    for (const c of recording.unwritten(q.eventId, q.interval)) {
      if (inRange(c) && !starts.has(c.start)) {
        rows.push({ candle: c, final: true });
        starts.add(c.start);
      }
    }
    const current = recording.current(q.eventId, q.interval);
    // A candle is final once its end has passed, even before the next snapshot closes it.
    if (current && inRange(current) && !starts.has(current.start)) rows.push({ candle: current, final: current.end <= now });
  }
  rows.sort((a, b) => a.candle.start - b.candle.start);
  return {
    eventId: q.eventId,
    interval: q.interval,
    candles: rows.slice(-q.limit).map((r) => candleView(r.candle, r.final)),
    retainedFrom: q.interval === '1m' ? new Date(now - services.config.marketRecord.oneMinuteRetentionDays * DAY_MS).toISOString() : null,
  };
}

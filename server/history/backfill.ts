/**
 * Candle backfill: fills in finished candles of past periods, on the venue the service
 * runs (VENUE): the paper venue computes its past books (backfill-paper.ts), the live venue reads
 * Polymarket's price history (backfill-polymarket.ts). Idempotent per (event, interval, start): rows
 * are inserted `ON CONFLICT DO NOTHING`, so a candle already recorded from snapshots (or backfilled
 * before) is never replaced, and running a backfill twice writes nothing the second time. Only
 * candles that have ended by now are written (the current one belongs to the recorder).
 *
 *   bun server/commands/backfill-history.ts --interval 1h --from 2026-11-01 [--to …] [--event openai-ipo …]
 */
import { listEvents } from '../events/queries.ts';
import { resolveEvent } from '../events/resolve.ts';
import type { HistoryHandles } from './handles.ts';
import { ClobHttp } from '../venues/polymarket/clob-http.ts';
import { backfillPaperEvent, candleSpan, checkedStep } from './backfill-paper.ts';
import { backfillPolymarketEvent, ClobPriceHistory, type PriceHistorySource } from './backfill-polymarket.ts';
import type { CandleInterval } from './candles.ts';
import { historyNow } from './recording.ts';
import { errorFirstLine } from '../lib/error-message.ts';

/** Paper points per event one call of the operator route may compute (about a second and a half of one core). */
export const MAX_POINTS_PER_CALL = 100_000;

export interface BackfillOptions {
  interval: CandleInterval;
  from: Date;
  /** Default now; never later than now. */
  to?: Date;
  /** Event ids (any id an event answers to); default every event. */
  events?: string[];
  /** Which venue's history (default: the configured VENUE). */
  venue?: 'paper' | 'polymarket';
  /** Paper: milliseconds between computed points (default backfill-paper.ts PAPER_STEP_MS). */
  stepMs?: number;
  /** Live: minutes between price points (default backfill-polymarket.ts DEFAULT_FIDELITY). */
  fidelity?: number;
  /** Live: where the price history comes from (default the CLOB at POLYMARKET_CLOB_URL). */
  source?: PriceHistorySource;
  /** Live: the CLOB's base URL (default POLYMARKET_CLOB_URL). */
  clobUrl?: string;
  /** Paper: refuse (RangeError, before any work) a range that needs more points per event than this. */
  maxPointsPerEvent?: number;
}

export interface BackfillLine {
  event: string;
  interval: CandleInterval;
  venue: 'paper' | 'polymarket';
  /** Candles computed, and of them newly written (the rest were already there). */
  candles?: number;
  written?: number;
  /** Points the candles were built from (computed books, or price-history times). */
  points?: number;
  fidelity?: number;
  skipped?: string;
  problems: string[];
}

export async function backfillCandles(services: HistoryHandles, options: BackfillOptions): Promise<BackfillLine[]> {
  const db = services.database.db;
  const venue = options.venue ?? services.config.venue;
  const now = historyNow(services);
  // `to` is inclusive: the candle that ends just after it (at midnight, for a date given as the end of
  // its day, 23:59:59.999) has ended by it.
  const until = options.to && options.to.getTime() < now ? options.to.getTime() + 1 : now;
  const from = options.from.getTime();
  if (from > until) throw new RangeError('from: must not be after to (or now)');
  if (venue === 'paper' && options.maxPointsPerEvent !== undefined) {
    const { start, end } = candleSpan(options.interval, from, until);
    const points = (end - start) / checkedStep(options.interval, options.stepMs);
    if (points > options.maxPointsPerEvent) {
      throw new RangeError(`from: the range needs ${points} points per event; at most ${options.maxPointsPerEvent} per call (a shorter range or a larger step; npm run history:backfill splits a range for you)`);
    }
  }
  const all = await listEvents(db);
  const lines: BackfillLine[] = [];
  const chosen = [];
  for (const ref of options.events?.length ? options.events : all.map((e) => e.id)) {
    try {
      chosen.push(resolveEvent(all, ref));
    } catch {
      lines.push({ event: ref, interval: options.interval, venue, problems: [`no event ${ref}`] });
    }
  }
  const source =
    venue === 'polymarket'
      ? (options.source ?? new ClobPriceHistory(new ClobHttp({ baseUrl: options.clobUrl ?? services.config.polymarket.clobUrl, timeoutMs: services.config.venueTimeoutMs })))
      : undefined;
  for (const event of chosen) {
    const problems: string[] = [];
    let result: Partial<BackfillLine> = {};
    try {
      result =
        venue === 'paper'
          ? await backfillPaperEvent(db, event, { seed: services.config.paper.seed, drift: services.config.paper.drift }, { interval: options.interval, from, until, stepMs: options.stepMs })
          : await backfillPolymarketEvent(db, event, source!, { interval: options.interval, from, until, fidelity: options.fidelity });
    } catch (error) {
      problems.push(errorFirstLine(error));
    }
    lines.push({ event: event.id, interval: options.interval, venue, ...result, problems });
  }
  return lines;
}

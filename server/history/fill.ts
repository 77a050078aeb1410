/**
 * The history fill: the service keeps its own recent candle history whole, so a fresh install's
 * charts show a month at once and a restart after downtime has no hole. A job (`history_fill`, every
 * HISTORY_FILL_INTERVAL_MS, first a second after start; 0 turns it off) looks, per listed event and
 * interval, at how many candles the recent window holds, and backfills (backfill.ts) the events that
 * miss any:
 *
 *   1h  the last 7 days, then the last 30 days   (paper: a point every 5 minutes)
 *   1d  the last 30 days   (paper: a point every hour)
 *   1m  the last day       (paper: a point every minute)
 *
 * Writes are `ON CONFLICT DO NOTHING` like every backfill, so recorded candles are never replaced,
 * and several instances filling at once write each candle once (they only repeat the computation).
 * A window that is whole costs one grouped count per interval. On the live venue the fill reads
 * Polymarket's price history (resolved events are skipped at 1h and 1m, as the backfill skips them).
 */
import { and, gte, lt, sql } from 'drizzle-orm';
import { valuationCandles } from '../../db/schema.ts';
import { listEvents } from '../events/queries.ts';
import { startJob, type Job } from '../lib/jobs.ts';
import { giveBackMemory } from '../lib/memory.ts';
import { backfillCandles, type BackfillLine } from './backfill.ts';
import { alignStart, INTERVAL_MS, type CandleInterval } from './candles.ts';
import type { HistoryHandles } from './handles.ts';
import { historyNow } from './recording.ts';

const DAY_MS = 86_400_000;

export interface FillWindow {
  interval: CandleInterval;
  days: number;
  /** Paper venue: milliseconds between computed points. */
  stepMs: number;
}

/** Hourly first, and the week the Markets chart shows first of all, so a fresh install's charts fill in seconds. */
export const FILL_WINDOWS: readonly FillWindow[] = [
  { interval: '1h', days: 7, stepMs: 300_000 },
  { interval: '1h', days: 30, stepMs: 300_000 },
  { interval: '1d', days: 30, stepMs: 3_600_000 },
  { interval: '1m', days: 1, stepMs: 60_000 },
];

/**
 * The listed events whose finished candles of `window` do not all exist, each with where its backfill
 * starts: after its last candle when every candle before that one is there (the usual case: the
 * server was down, or just started), else the window's start (a hole in the middle).
 */
async function eventsMissing(services: HistoryHandles, window: FillWindow, now: number): Promise<Array<{ id: string; from: number }>> {
  const step = INTERVAL_MS[window.interval];
  const from = alignStart(now - window.days * DAY_MS, window.interval);
  const until = alignStart(now, window.interval);
  const expected = (until - from) / step;
  const events = await listEvents(services.database.db);
  if (!events.length || expected <= 0) return [];
  const rows = await services.database.db
    .select({ eventId: valuationCandles.eventId, candles: sql<number>`count(*)::int`, last: sql<string>`max(${valuationCandles.start})` })
    .from(valuationCandles)
    .where(and(sql`${valuationCandles.interval} = ${window.interval}`, gte(valuationCandles.start, new Date(from)), lt(valuationCandles.start, new Date(until))))
    .groupBy(valuationCandles.eventId);
  const held = new Map(rows.map((r) => [r.eventId, { candles: Number(r.candles), last: new Date(r.last).getTime() }]));
  const missing: Array<{ id: string; from: number }> = [];
  for (const event of events) {
    const h = held.get(event.id);
    if (h && h.candles >= expected) continue;
    const wholeUpToLast = h !== undefined && h.candles === (h.last - from) / step + 1;
    missing.push({ id: event.id, from: wholeUpToLast ? h.last + step : from });
  }
  return missing;
}

/** One pass over the windows; answers the backfill's lines of the events it filled. */
export async function fillRecentHistory(services: HistoryHandles, signal?: AbortSignal): Promise<BackfillLine[]> {
  const lines: BackfillLine[] = [];
  for (const window of FILL_WINDOWS) {
    if (signal?.aborted) break;
    for (const { id, from } of await eventsMissing(services, window, historyNow(services))) {
      if (signal?.aborted) break;
      // One event per call: a stop waits for at most one event's computation.
      lines.push(...(await backfillCandles(services, { interval: window.interval, from: new Date(from), events: [id], stepMs: window.stepMs })));
      // A month of one event's books is a few hundred thousand short-lived objects; collected now,
      // the heap never holds several events' worth (measured: the first start's peak 650 → 410 MB).
      Bun.gc(true);
    }
  }
  return lines;
}

export function startHistoryFill(services: HistoryHandles): Job {
  return startJob({
    name: 'history_fill',
    intervalMs: services.config.marketRecord.fillIntervalMs,
    firstRunMs: 1_000,
    logger: services.logger,
    metrics: services.metrics.jobs,
    run: async (signal) => {
      const started = Date.now();
      const lines = await fillRecentHistory(services, signal);
      const written = lines.reduce((sum, l) => sum + (l.written ?? 0), 0);
      // A pass that wrote (a first start's month, a catch-up after downtime) gives its pages back.
      if (written) giveBackMemory();
      const problems = lines.flatMap((l) => l.problems.map((p) => `${l.event} ${l.interval}: ${p}`));
      if (written || problems.length) services.logger.info('history filled', { candles: written, events: new Set(lines.map((l) => l.event)).size, ms: Date.now() - started, problems: problems.slice(0, 5) });
      return written;
    },
  });
}

/**
 * Candles in the database (`valuation_candles`, one row per event, interval and start). A candle is
 * written once: `INSERT … ON CONFLICT DO NOTHING`, so whichever instance (or backfill) writes a
 * candle first keeps it, and the same candle written again by anyone is a no-op.
 */
import { and, asc, desc, eq, gte, inArray, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { valuationCandles, type CandleBand } from '../../db/schema.ts';
import type { Candle, CandleInterval, CandleSpan, HistoryBand } from './candles.ts';

type CandleRow = typeof valuationCandles.$inferSelect;

/** Rows per INSERT statement (20 columns each: well under PostgreSQL's 65,535 parameters). */
const INSERT_BATCH = 500;
/** Rows per DELETE of the pruning (short statements: no long lock on a busy table). */
const PRUNE_BATCH = 5_000;

function rowOf(c: Candle): typeof valuationCandles.$inferInsert {
  return {
    eventId: c.eventId,
    interval: c.interval,
    start: new Date(c.start),
    end: new Date(c.end),
    impliedOpen: c.implied?.open ?? null,
    impliedHigh: c.implied?.high ?? null,
    impliedLow: c.implied?.low ?? null,
    impliedClose: c.implied?.close ?? null,
    longOpenMicros: c.long.open,
    longHighMicros: c.long.high,
    longLowMicros: c.long.low,
    longCloseMicros: c.long.close,
    shortOpenMicros: c.short.open,
    shortHighMicros: c.short.high,
    shortLowMicros: c.short.low,
    shortCloseMicros: c.short.close,
    // A backfilled live-venue band has no book: its bid and ask are stored as JSON null (see HistoryBand).
    bands: c.bands as CandleBand[],
    samples: c.samples,
    source: c.source,
  };
}

const numberOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function candleOfRow(r: CandleRow): Candle {
  const implied = r.impliedOpen === null ? null : { open: r.impliedOpen, high: r.impliedHigh!, low: r.impliedLow!, close: r.impliedClose! };
  return {
    eventId: r.eventId,
    interval: r.interval,
    start: r.start.getTime(),
    end: r.end.getTime(),
    implied,
    long: { open: r.longOpenMicros, high: r.longHighMicros, low: r.longLowMicros, close: r.longCloseMicros },
    short: { open: r.shortOpenMicros, high: r.shortHighMicros, low: r.shortLowMicros, close: r.shortCloseMicros },
    bands: (r.bands as unknown as HistoryBand[]).map((b) => ({ bandId: b.bandId, closeMicros: Number(b.closeMicros), bidMicros: numberOrNull(b.bidMicros), askMicros: numberOrNull(b.askMicros) })),
    samples: r.samples,
    source: r.source,
  };
}

/** Writes finished candles; answers how many rows were new (the others were already written by someone). */
export async function writeCandles(db: Db, candles: Candle[]): Promise<number> {
  let written = 0;
  for (let i = 0; i < candles.length; i += INSERT_BATCH) {
    const rows = await db
      .insert(valuationCandles)
      .values(candles.slice(i, i + INSERT_BATCH).map(rowOf))
      .onConflictDoNothing()
      .returning({ start: valuationCandles.start });
    written += rows.length;
  }
  return written;
}

/**
 * The latest `limit` candles of an event and interval whose start lies in [fromStart, to], oldest
 * first.
 */
export async function readCandles(db: Db, q: { eventId: string; interval: CandleInterval; fromStart: number; to: number; limit: number }): Promise<Candle[]> {
  const rows = await db
    .select()
    .from(valuationCandles)
    .where(and(eq(valuationCandles.eventId, q.eventId), eq(valuationCandles.interval, q.interval), gte(valuationCandles.start, new Date(q.fromStart)), lte(valuationCandles.start, new Date(q.to))))
    .orderBy(desc(valuationCandles.start))
    .limit(q.limit);
  return rows.reverse().map(candleOfRow);
}

/**
 * The 1-minute candles (recorded or backfilled) that started in [from, until), per event, oldest first,
 * without their bands: the earlier part of a 1h or 1d candle (recording.ts). All events unless `eventIds`.
 */
export async function minuteSpansBetween(db: Db, q: { eventIds?: string[]; from: number; until: number }): Promise<Map<string, Array<CandleSpan & { start: number }>>> {
  const found = new Map<string, Array<CandleSpan & { start: number }>>();
  if (q.until <= q.from || q.eventIds?.length === 0) return found;
  const c = valuationCandles;
  const rows = await db
    .select({
      eventId: c.eventId,
      start: c.start,
      impliedOpen: c.impliedOpen,
      impliedHigh: c.impliedHigh,
      impliedLow: c.impliedLow,
      impliedClose: c.impliedClose,
      longOpenMicros: c.longOpenMicros,
      longHighMicros: c.longHighMicros,
      longLowMicros: c.longLowMicros,
      longCloseMicros: c.longCloseMicros,
      shortOpenMicros: c.shortOpenMicros,
      shortHighMicros: c.shortHighMicros,
      shortLowMicros: c.shortLowMicros,
      shortCloseMicros: c.shortCloseMicros,
      samples: c.samples,
    })
    .from(c)
    .where(and(eq(c.interval, '1m'), gte(c.start, new Date(q.from)), lt(c.start, new Date(q.until)), q.eventIds ? inArray(c.eventId, q.eventIds) : undefined))
    .orderBy(asc(c.eventId), asc(c.start));
  for (const r of rows) {
    let list = found.get(r.eventId);
    if (!list) found.set(r.eventId, (list = []));
    list.push({
      start: r.start.getTime(),
      implied: r.impliedOpen === null ? null : { open: r.impliedOpen, high: r.impliedHigh!, low: r.impliedLow!, close: r.impliedClose! },
      long: { open: r.longOpenMicros, high: r.longHighMicros, low: r.longLowMicros, close: r.longCloseMicros },
      short: { open: r.shortOpenMicros, high: r.shortHighMicros, low: r.shortLowMicros, close: r.shortCloseMicros },
      samples: r.samples,
    });
  }
  return found;
}

/** Candles of several events and intervals that closed in [fromEnd, toEnd], by end then start. */
export async function candlesClosedBetween(db: Db, q: { eventIds: string[]; intervals: CandleInterval[]; fromEnd: number; toEnd: number }): Promise<Candle[]> {
  if (!q.eventIds.length) return [];
  const rows = await db
    .select()
    .from(valuationCandles)
    .where(
      and(
        inArray(valuationCandles.eventId, q.eventIds),
        inArray(valuationCandles.interval, q.intervals),
        gte(valuationCandles.end, new Date(q.fromEnd)),
        lte(valuationCandles.end, new Date(q.toEnd)),
      ),
    )
    .orderBy(asc(valuationCandles.end), asc(valuationCandles.start));
  return rows.map(candleOfRow);
}

/** Per event, the latest candle (of these intervals) that closed at or before `at`: the one a price falls back to. */
export async function latestClosedBy(db: Db, q: { eventIds: string[]; intervals: CandleInterval[]; at: number }): Promise<Candle[]> {
  const found: Candle[] = [];
  for (const eventId of q.eventIds) {
    const [row] = await db
      .select()
      .from(valuationCandles)
      .where(and(eq(valuationCandles.eventId, eventId), inArray(valuationCandles.interval, q.intervals), lte(valuationCandles.end, new Date(q.at))))
      .orderBy(desc(valuationCandles.end))
      .limit(1);
    if (row) found.push(candleOfRow(row));
  }
  return found;
}

/**
 * Deletes 1-minute candles that started before `cutoff`, a batch at a time; answers how many went.
 * (1h and 1d candles are kept for ever.)
 */
export async function pruneMinuteCandles(db: Db, cutoff: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db
      .delete(valuationCandles)
      .where(
        sql`(${valuationCandles.eventId}, ${valuationCandles.interval}, ${valuationCandles.start}) in (
          select event_id, interval, start from valuation_candles
           where interval = '1m' and start < ${new Date(cutoff).toISOString()}::timestamptz limit ${PRUNE_BATCH})`,
      )
      .returning({ start: valuationCandles.start });
    deleted += rows.length;
    if (rows.length < PRUNE_BATCH) return deleted;
  }
}

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

/**
 * Rows per INSERT statement (20 columns each). Small on purpose: on the embedded database a statement's
 * parse and plan live in PGlite's WebAssembly memory, which keeps its high-water mark for the life of
 * the process; at 500 rows the first start's month of history left it 14 MB larger, at 100 about 2
 * (docs/performance.md "Footprint"), for ~7 % more time writing.
 */
const INSERT_BATCH = 100;
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
 * The 1-minute candles (recorded or backfilled) that started in [from, until), combined per event as
 * `combineSpans` would combine them (open of the first, high and low over all, close of the last,
 * samples summed; the implied valuation over the minutes that have one): the earlier part of a 1h or
 * 1d candle (recording.ts). Combined in the database, so a day of an event's minutes is one row here,
 * not 1,440 (read at every start and every hour). All events unless `eventIds`.
 */
export async function combinedMinuteSpans(db: Db, q: { eventIds?: string[]; from: number; until: number }): Promise<Map<string, CandleSpan>> {
  const found = new Map<string, CandleSpan>();
  if (q.until <= q.from || q.eventIds?.length === 0) return found;
  const c = valuationCandles;
  const first = (column: unknown) => sql<number | null>`(array_agg(${column} order by ${c.start}))[1]::float8`;
  const last = (column: unknown) => sql<number | null>`(array_agg(${column} order by ${c.start} desc))[1]::float8`;
  const withImplied = sql`filter (where ${c.impliedOpen} is not null)`;
  const rows = await db
    .select({
      eventId: c.eventId,
      impliedOpen: sql<number | null>`(array_agg(${c.impliedOpen} order by ${c.start}) ${withImplied})[1]`,
      impliedHigh: sql<number | null>`max(${c.impliedHigh})`,
      impliedLow: sql<number | null>`min(${c.impliedLow})`,
      impliedClose: sql<number | null>`(array_agg(${c.impliedClose} order by ${c.start} desc) ${withImplied})[1]`,
      longOpen: first(c.longOpenMicros),
      longHigh: sql<number>`max(${c.longHighMicros})::float8`,
      longLow: sql<number>`min(${c.longLowMicros})::float8`,
      longClose: last(c.longCloseMicros),
      shortOpen: first(c.shortOpenMicros),
      shortHigh: sql<number>`max(${c.shortHighMicros})::float8`,
      shortLow: sql<number>`min(${c.shortLowMicros})::float8`,
      shortClose: last(c.shortCloseMicros),
      samples: sql<number>`sum(${c.samples})::float8`,
    })
    .from(c)
    .where(and(eq(c.interval, '1m'), gte(c.start, new Date(q.from)), lt(c.start, new Date(q.until)), q.eventIds ? inArray(c.eventId, q.eventIds) : undefined))
    .groupBy(c.eventId);
  const n = (v: unknown) => Number(v);
  for (const r of rows) {
    found.set(r.eventId, {
      implied: r.impliedOpen === null ? null : { open: n(r.impliedOpen), high: n(r.impliedHigh), low: n(r.impliedLow), close: n(r.impliedClose) },
      long: { open: n(r.longOpen), high: n(r.longHigh), low: n(r.longLow), close: n(r.longClose) },
      short: { open: n(r.shortOpen), high: n(r.shortHigh), low: n(r.shortLow), close: n(r.shortClose) },
      samples: n(r.samples),
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

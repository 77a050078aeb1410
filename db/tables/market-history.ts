/**
 * Market data over time: per-event candles of the basket metrics, built from the
 * market-data snapshots (or backfilled). One row per (event, interval, start), written once: the
 * first instance to close a candle writes it, the others' identical-key writes are no-ops.
 * Prices and unit costs are micro-USD; the implied valuation is in billions of USD (an estimate, not money).
 */
import { sql } from 'drizzle-orm';
import { bigint, check, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const micros = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const CANDLE_INTERVALS = ['1m', '1h', '1d'] as const;
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

/** A band's prices at a candle's close, in micro-USD (bid and ask unknown in a candle backfilled from price history). */
export interface CandleBand {
  bandId: string;
  closeMicros: number;
  bidMicros: number | null;
  askMicros: number | null;
}

export const valuationCandles = pgTable(
  'valuation_candles',
  {
    eventId: text('event_id').notNull(),
    interval: text('interval', { enum: CANDLE_INTERVALS }).notNull(),
    start: at('start').notNull(),
    end: at('end').notNull(),
    /** Implied valuation (billions of USD); null when no snapshot in the candle had one. */
    impliedOpen: doublePrecision('implied_open'),
    impliedHigh: doublePrecision('implied_high'),
    impliedLow: doublePrecision('implied_low'),
    impliedClose: doublePrecision('implied_close'),
    /** LONG and SHORT unit costs at the default floors, micro-USD. */
    longOpenMicros: micros('long_open_micros').notNull(),
    longHighMicros: micros('long_high_micros').notNull(),
    longLowMicros: micros('long_low_micros').notNull(),
    longCloseMicros: micros('long_close_micros').notNull(),
    shortOpenMicros: micros('short_open_micros').notNull(),
    shortHighMicros: micros('short_high_micros').notNull(),
    shortLowMicros: micros('short_low_micros').notNull(),
    shortCloseMicros: micros('short_close_micros').notNull(),
    bands: jsonb('bands').$type<CandleBand[]>().notNull(),
    /** How many snapshots the candle was built from (0: backfilled from the venue's price history). */
    samples: integer('samples').notNull(),
    /** snapshots (recorded live) or backfill. */
    source: text('source', { enum: ['snapshots', 'backfill'] }).notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.eventId, t.interval, t.start] }),
    index('valuation_candles_interval_start_idx').on(t.interval, t.start),
    check('valuation_candles_span', sql`${t.end} > ${t.start}`),
  ],
);

/**
 * Valuation history: an event's candles of implied valuation and LONG/SHORT unit
 * costs (default floors) with each band's close, bid and ask. Public like /valuation (limited per
 * client IP, unbilled); the same event ids and aliases. docs/history.md.
 */
import { z } from 'zod';
import { canonicalEventId } from '../server/events/resolve.ts';
import { valuationHistory } from '../server/history/valuation-history.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { publicProcedure } from '../server/platform/procedures/base.ts';
import { isoInstant, isoString, optionalParams, wholeNumber } from './params.ts';

const TAGS = ['Trading market data'];

const ohlc = (description: string) =>
  z.object({ open: z.number(), high: z.number(), low: z.number(), close: z.number() }).meta({ description });

const candle = z.object({
  start: isoString().meta({ description: 'Inclusive, UTC-aligned to the interval' }),
  end: isoString().meta({ description: 'Exclusive: start + interval' }),
  impliedValuation: ohlc('Implied valuation, billions of USD').nullable().meta({ description: 'Billions of USD; null when no band other than "No IPO" had a price in the candle' }),
  longCost: ohlc('Cost of one LONG unit at the default floors (0.20/0.15), USD'),
  shortCost: ohlc('Cost of one SHORT unit at the default floors, USD'),
  bands: z
    .array(
      z.object({
        bandId: z.string(),
        close: z.number().meta({ description: 'The band\'s price (midpoint, or last trade when the spread is over 0.10) at the candle\'s last point, USD' }),
        bid: z.number().nullable().meta({ description: 'Best bid at the last point; null when the candle was backfilled from the live venue\'s price history (no book)' }),
        ask: z.number().nullable().meta({ description: 'Best ask at the last point; null when backfilled from the live venue\'s price history' }),
      }),
    )
    .meta({ description: 'Every band at the candle\'s close, in band order' }),
  final: z.boolean().meta({ description: 'false only for the current, unfinished candle (always the last one): its high, low and close still move' }),
  source: z.enum(['snapshots', 'backfill']).meta({ description: 'snapshots: recorded from the live market-data snapshots; backfill: computed afterwards (docs/history.md)' }),
  samples: z.number().int().meta({ description: 'Points the candle was built from (0: backfilled from the live venue\'s price history)' }),
});

export const marketHistoryRouter = router({
  valuationHistory: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/trading/valuation/history',
        tags: TAGS,
        summary: 'Candles of an event\'s implied valuation, LONG and SHORT unit costs and band prices (1m, 1h, 1d)',
        description:
          'Oldest first; the current, unfinished candle (when it lies in the range) is last with final: false. 1-minute candles are kept CANDLE_MINUTE_RETENTION_DAYS (30 by default; retainedFrom says from when), 1h and 1d for ever.',
        errorResponses: [404],
      },
    })
    .input(
      optionalParams({
        eventSlug: z.string().min(1).max(200).meta({ description: 'The event: our id, the venue\'s event slug or an alias (docs/decisions.md §6, "Event ids")', example: 'openai-ipo' }),
        interval: z.enum(['1m', '1h', '1d']).default('1h').meta({ description: '1m, 1h (default) or 1d; candles start on UTC boundaries', example: '1d' }),
        from: isoInstant({ description: 'Start of the range (the candle holding it is included): an ISO 8601 date or date-time; default to − limit × interval' })
          .meta({ example: '2026-10-01' })
          .optional(),
        to: isoInstant({ endOfDay: true, description: 'End of the range, inclusive (a date includes that whole UTC day); default now' }).meta({ example: '2026-11-22' }).optional(),
        limit: wholeNumber({ min: 1, max: 5000 }).default(500).meta({ description: 'At most this many candles, the latest of the range: 1 to 5000, default 500', example: 60 }),
      }, { ordered: [['from', 'to']] }),
    )
    .output(
      z.object({
        eventId: z.string().meta({ description: 'Our id of the event' }),
        interval: z.enum(['1m', '1h', '1d']),
        candles: z.array(candle),
        retainedFrom: isoString()
          .nullable()
          .meta({ description: '1m only: 1-minute candles that started before this instant have been deleted (retention); null for 1h and 1d, which are kept for ever' }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const eventId = await canonicalEventId(ctx.services, input.eventSlug, 'eventSlug');
      return valuationHistory(ctx.services, { ...input, eventId });
    }),
});

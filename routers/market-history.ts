/**
 * Valuation history: an event's candles of implied valuation and LONG/SHORT unit
 * costs (default floors) with each band's close, bid and ask. Public like /valuation (limited per
 * client IP, unbilled); the same event ids and aliases. docs/history.md.
 */
import { z } from 'zod';
import { canonicalEventId } from '../server/events/resolve.ts';
import { valuationHistory } from '../server/history/valuation-history.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { dashboardProcedure, publicProcedure } from '../server/platform/procedures/base.ts';
import { backfillCandles, MAX_POINTS_PER_CALL } from '../server/history/backfill.ts';
import { ApiError } from '../server/errors.ts';
import { isoInstant, isoString, optionalParams, wholeNumber, withRules } from './params.ts';

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

  backfill: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/trading/valuation/history/backfill',
        tags: ['Operations'],
        summary: 'Fill in finished candles of a past range, on the server that runs (what npm run history:backfill calls when the server holds the embedded database)',
        description:
          'For operators (a dashboard key, and x-account-id naming the operator\'s own account). The backfill of docs/history.md: on the paper venue the past books are computed, on the live venue Polymarket\'s price history is read. Idempotent: a candle already there (recorded or backfilled) is never replaced, so a second call writes nothing. One line per event, as the command prints. On the paper venue one call computes at most 100,000 points per event (range ÷ stepSeconds): a longer range is a 400 (the command splits it into calls).',
        errorResponses: [400],
      },
    })
    .input(
      withRules(
        z.strictObject({
          interval: z.enum(['1m', '1h', '1d']).meta({ description: 'The candles to write', example: '1h' }),
          from: isoInstant({ description: 'Start of the range (the candle holding it is the first): an ISO 8601 date or date-time' }).meta({ example: '2026-11-01' }),
          to: isoInstant({ endOfDay: true, description: 'End of the range, inclusive; default now (only candles that have ended are written)' }).meta({ example: '2026-11-20' }).optional(),
          events: z.array(z.string().min(1).max(200)).min(1).max(50).meta({ description: 'Event ids (ours, a venue slug or an alias); default every listed event', example: ['openai-ipo'] }).optional(),
          stepSeconds: wholeNumber({ min: 1, max: 86_400 }).meta({ description: 'Paper venue: seconds between computed points; must divide the interval (default 60 for 1m and 1h, 900 for 1d)', example: 60 }).optional(),
          fidelity: wholeNumber({ min: 1, max: 1440 }).meta({ description: 'Live venue: minutes between price points read from Polymarket', example: 1 }).optional(),
        }),
        { ordered: [['from', 'to']] },
      ),
    )
    .output(
      z.object({
        lines: z.array(
          z.object({
            event: z.string(),
            interval: z.enum(['1m', '1h', '1d']),
            venue: z.enum(['paper', 'polymarket']),
            candles: z.number().int().optional().meta({ description: 'Candles computed' }),
            written: z.number().int().optional().meta({ description: 'Of them, newly written (the rest were already there)' }),
            points: z.number().int().optional().meta({ description: 'Points the candles were built from' }),
            fidelity: z.number().int().optional(),
            skipped: z.string().optional().meta({ description: 'Why this event was not backfilled' }),
            problems: z.array(z.string()).meta({ description: 'What went wrong for this event (an unknown id, the venue not answering)' }),
          }),
        ),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      try {
        const lines = await backfillCandles(ctx.services, {
          interval: input.interval,
          from: input.from,
          to: input.to,
          events: input.events,
          stepMs: input.stepSeconds === undefined ? undefined : input.stepSeconds * 1000,
          fidelity: input.fidelity,
          maxPointsPerEvent: MAX_POINTS_PER_CALL,
        });
        return { lines };
      } catch (error) {
        if (error instanceof RangeError) throw new ApiError('BAD_REQUEST', error.message.replace(/^step:/, 'stepSeconds:'));
        throw error;
      }
    }),
});

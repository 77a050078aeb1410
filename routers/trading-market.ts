/**
 * Public market data (docs/api.md "Trading market data", docs/decisions.md §6): events, one event's
 * valuation, and every event's summary. Unbilled; limited per client IP.
 */
import { z } from 'zod';
import { resolveEvent } from '../server/events/resolve.ts';
import { allValuations, eventSummary, eventValuation } from '../server/market/valuation-view.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { marketDataProcedure } from '../server/platform/procedures/base.ts';
import { DEFAULT_FLOORS } from '../server/valuation/index.ts';
import { isoString, noInput, optionalParams } from './params.ts';

const TAGS = ['Trading market data'];

/** A floor in [0, 1] (on REST, a query parameter's decimal text); failures are INVALID_FLOOR. */
// The description sits inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
const floor = (description: string, example: number) => z.number().min(0).max(1).meta({ description, example }).optional();

const eventStatus = z
  .enum(['open', 'closed', 'resolved', 'voided'])
  .meta({ description: 'open: trading; closed: trading stopped, outcome pending; resolved: winningBandId won; voided: cancelled, every band pays $0.50 a share. Positions of resolved and voided events settle (GET /api/trading/settlements)' });
const winningBandId = () => z.string().nullable().meta({ description: 'The band that won; null until the event is resolved' });
const band = z.object({ id: z.string(), label: z.string(), minValuation: z.number(), maxValuation: z.number().nullable() });
const event = z.object({
  id: z.string(),
  name: z.string(),
  company: z.string(),
  companySourceId: z.string().nullable().meta({ description: 'The private-company record it is linked to (GET /api/private-companies/source/{sourceId}); null when none is' }),
  status: eventStatus,
  winningBandId: winningBandId(),
  endDate: isoString().nullable(),
  venue: z.object({ name: z.string(), eventSlug: z.string().nullable() }),
  aliases: z.array(z.string()).meta({ description: 'Other ids this event answers to on every route that takes an event id, besides id and venue.eventSlug' }),
  structure: z.enum(['bands', 'ladder']).meta({ description: 'bands: exclusive band markets, each band a token; ladder: cumulative "above $X" markets, each band held as threshold Yes and No tokens (docs/trading.md "Ladders")' }),
  bands: z.array(band),
  tokens: z
    .array(
      z.object({
        id: z.string().meta({ description: "The id orders and holdings carry: a band's id, or a ladder threshold's `<band id>:yes|no`" }),
        label: z.string(),
        outcome: z.enum(['yes', 'no']),
        bandIndex: z.number().int().meta({ description: 'The band it is (band events) or whose lower bound is its threshold (ladders)' }),
      }),
    )
    .meta({ description: 'The venue tokens positions on this event hold and orders trade' }),
});
const percent = () => z.number().nullable().meta({ description: 'Percent; null when the cost is 0' });
const sideSlippage = z.object({ buyCost: z.number(), sellValue: z.number(), spread: z.number(), spreadPercent: z.number() });

/** The /valuation answer: one event's prices, costs, returns, slippage and breakdown (also each message of the valuation stream). */
export const valuationAnswer = z.object({
  event: z.object({ name: z.string(), slug: z.string(), numBands: z.number().int(), status: eventStatus, winningBandId: winningBandId() }),
  bands: z.array(z.object({ bandIndex: z.number().int(), label: z.string(), price: z.number(), tokenId: z.string() })),
  valuation: z.object({
    longCost: z.number(),
    shortCost: z.number(),
    bestLongReturn: percent(),
    worstLongReturn: percent(),
    bestShortReturn: percent(),
    worstShortReturn: percent(),
  }),
  slippage: z.object({
    long: sideSlippage,
    short: sideSlippage,
    bandPrices: z.array(z.object({ bandIndex: z.number().int(), bid: z.number(), ask: z.number() })),
  }),
  breakdown: z.array(
    z.object({
      bandIndex: z.number().int(),
      label: z.string(),
      minValuation: z.number(),
      maxValuation: z.number().nullable(),
      midpoint: z.number(),
      price: z.number(),
      longWeight: z.number(),
      shortWeight: z.number(),
      longCostContrib: z.number(),
      shortCostContrib: z.number(),
      longAllocation: z.number(),
      shortAllocation: z.number(),
      longReturnIfWins: percent(),
      shortReturnIfWins: percent(),
    }),
  ),
  impliedValuation: z.number().nullable().meta({ description: 'Billions of USD' }),
  settings: z.object({ floorL: z.number(), floorS: z.number() }),
  totalVolume: z.number(),
  endDate: isoString().nullable(),
  timestamp: isoString(),
});

export const tradingMarketRouter = router({
  events: marketDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/trading/events',
        tags: TAGS,
        summary: 'Supported IPO valuation events and their bands',
        description:
          'Every supported event: its status (open, closed, resolved, voided), end date, venue slug, the private company it is linked to (companySourceId), the other ids it answers to, and its valuation bands (billions of USD) with their ids. An event may be named by its id, its venue slug or an alias on every route that takes one. Public and unbilled.',
      },
    })
    .input(noInput())
    .output(z.object({ events: z.array(event) }))
    .query(async ({ ctx }) => ({ events: (await ctx.services.marketData.snapshot()).events.map((e) => ({ ...eventSummary(e), companySourceId: e.companySourceId, aliases: e.aliases })) })),

  valuation: marketDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/trading/valuation',
        tags: TAGS,
        summary: 'Band prices, costs, returns, slippage and breakdown of one event',
        description:
          'One event priced from the current market snapshot: each band\'s price, the cost of one LONG and one SHORT unit at the given floors and their best and worst returns, bid/ask slippage, the per-band breakdown (weights, cost contributions, return if that band wins) and the implied valuation in billions of USD. Public and unbilled; also the message of the live valuation stream (GET /api/trading/stream).',
        errorResponses: [404],
      },
    })
    .input(
      optionalParams({
        eventSlug: z.string().min(1).max(200).meta({ description: 'The event: our id, the venue\'s event slug or an alias (docs/decisions.md §6, "Event ids"); the answer\'s event.slug is our id', example: 'openai-ipo' }),
        floorL: floor('LONG floor for this quote, 0 to 1 (default 0.20)', DEFAULT_FLOORS.floorL),
        floorS: floor('SHORT floor for this quote, 0 to 1 (default 0.15)', DEFAULT_FLOORS.floorS),
      }),
    )
    .output(valuationAnswer)
    .query(async ({ ctx, input }) => {
      const snapshot = await ctx.services.marketData.snapshot();
      const floors = { floorL: input.floorL ?? DEFAULT_FLOORS.floorL, floorS: input.floorS ?? DEFAULT_FLOORS.floorS };
      return eventValuation(resolveEvent(snapshot.events, input.eventSlug, 'eventSlug'), snapshot, floors);
    }),

  valuationAll: marketDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/trading/valuation/all',
        tags: TAGS,
        summary: 'Implied valuation and costs of every event (default floors)',
        description:
          'For every event: the implied valuation (billions of USD; null when no band but "No IPO" has a price), the cost of one LONG and one SHORT unit at the default floors (0.20 and 0.15), and when its market data was last updated. Public and unbilled.',
      },
    })
    .input(noInput())
    .output(
      z.object({
        valuations: z.array(
          z.object({ eventId: z.string(), impliedValuation: z.number().nullable(), longCost: z.number(), shortCost: z.number(), updatedAt: isoString() }),
        ),
      }),
    )
    .query(async ({ ctx }) => ({ valuations: allValuations(await ctx.services.marketData.snapshot(), DEFAULT_FLOORS) })),
});

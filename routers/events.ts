/**
 * Operator routes on events (dashboard key): resolving an event settles its open positions
 * (server/trading/resolution.ts); the listings say which events customers see, and an operator
 * lists or hides one (server/events/listing.ts). Like every dashboard route they name an existing
 * account in x-account-id: the operator's own, recorded in the request log as who acted.
 */
import { z } from 'zod';
import { runDiscoveryPass } from '../server/events/discovery-pass.ts';
import { EVENT_LISTINGS, listEventListings, setListing } from '../server/events/listing.ts';
import { iso, isoString } from './params.ts';
import { resolveEventOutcome } from '../server/trading/resolution.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { dashboardProcedure } from '../server/platform/procedures/base.ts';
import { audited } from '../server/audit/log.ts';
import { listingSet } from '../server/audit/entries.ts';
import { auditActorOf } from '../server/platform/procedures/audit-actor.ts';

export const eventsRouter = router({
  resolve: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/events/{eventId}/resolution',
        tags: ['Operations'],
        summary: 'Resolve an event to its winning band, or void it (or correct either before anything settled); settles its open positions, exactly once',
        description:
          'For operators (a dashboard key, and x-account-id naming the operator\'s own account, recorded as who resolved it). Records the outcome, then settles every open position of the event: winning-band shares pay $1 (voided: every share $0.50) and the venue pays them out. Calling it again with the same outcome changes nothing and retries unpaid settlements; positions with a sale still pending settle on a later call.',
        errorResponses: [400, 404],
      },
    })
    .input(
      z
        .strictObject({
          eventId: z.string().min(1).max(200).meta({ description: 'Our id, the venue\'s event slug or an alias', example: 'openai-ipo' }),
          winningBandId: z.string().min(1).max(200).optional().meta({ description: 'The id of the band that won (GET /api/trading/events); or send voided', example: 'paper-openai-ipo-3' }),
          voided: z.literal(true).optional().meta({ description: 'The event was cancelled: every band\'s shares pay $0.50 (Polymarket\'s 50-50 for a cancelled market)', example: true }),
        })
        // One outcome per request: the example names the winning band (the other way is { "voided": true }).
        .meta({ examples: [{ winningBandId: 'paper-openai-ipo-3' }] })
        .refine((b) => (b.winningBandId === undefined) !== (b.voided === undefined), { message: 'send exactly one of winningBandId and voided', path: ['winningBandId'] }),
    )
    .output(
      z.object({
        eventId: z.string(),
        status: z.enum(['resolved', 'voided']),
        winningBandId: z.string().nullable().meta({ description: 'null when voided' }),
        winningBandLabel: z.string().nullable(),
        changed: z.boolean().meta({ description: 'false when the event already had this outcome (nothing is paid twice)' }),
        settled: z.number().int().meta({ description: 'Positions settled by this call' }),
        paid: z.number().int().meta({ description: 'Settlements the venue paid during this call' }),
        unpaid: z.number().int().meta({ description: 'Settlements still unpaid (retried by the next resolution call)' }),
        deferred: z.number().int().meta({ description: 'Open positions with a sale still pending: they settle on a later call' }),
      }),
    )
    .mutation(async ({ ctx, input }) => resolveEventOutcome(ctx.services, input.eventId, input.voided ? { voided: true } : { winningBandId: input.winningBandId! }, await auditActorOf(ctx))),

  listings: dashboardProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/events/listings',
        tags: ['Operations'],
        summary: 'Every event with its listing (the newest 1,000): listed (customers see it), proposed (discovered, waiting for an operator) or hidden',
        description: 'For operators (a dashboard key). Newest first. Only listed events reach customers: listings, valuations, trading, history and streams.',
        errorResponses: [400],
      },
    })
    .input(z.strictObject({ listing: z.enum(EVENT_LISTINGS).meta({ description: 'Only events with this listing', example: 'proposed' }).optional() }).prefault({}))
    .output(
      z.object({
        events: z.array(
          z.object({
            eventId: z.string(),
            name: z.string(),
            company: z.string(),
            companySourceId: z.string().nullable().meta({ description: 'The private-company record it is linked to (GET /api/private-companies/source/{sourceId}), when one matches' }),
            listing: z.enum(EVENT_LISTINGS),
            origin: z.enum(['seed', 'discovered']),
            status: z.string().meta({ description: 'open, closed, resolved or voided' }),
            structure: z.enum(['bands', 'ladder']),
            bands: z.number().int(),
            venueEventSlug: z.string().nullable(),
            endDate: isoString().nullable(),
            createdAt: isoString(),
          }),
        ),
      }),
    )
    .query(async ({ ctx, input }) => ({
      events: (await listEventListings(ctx.services.database.db, input.listing)).map((e) => ({ ...e, endDate: e.endDate && iso(e.endDate), createdAt: iso(e.createdAt) })),
    })),

  setListing: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/events/{eventId}/listing',
        tags: ['Operations'],
        summary: 'List an event for customers (approve a proposed one) or hide it',
        description:
          'For operators (a dashboard key). Listing an event announces event.listed to every account with a webhook subscribed to it, at most once per account and event (listing it again, or after hiding it, tells nobody twice). Hiding is refused (400) while positions of the event are open or pending: its holders must be able to see, sell and settle them.',
        errorResponses: [400, 404],
      },
    })
    .input(
      z.strictObject({
        eventId: z.string().min(1).max(200).meta({ description: 'Our id, the venue\'s event slug or an alias', example: 'openai-ipo' }),
        listing: z.enum(['listed', 'hidden']).meta({ description: 'listed: customers see and trade it; hidden: they do not', example: 'listed' }),
      }),
    )
    .output(
      z.object({
        eventId: z.string(),
        listing: z.enum(['listed', 'hidden']),
        changed: z.boolean().meta({ description: 'false when the event already had this listing' }),
        announced: z.number().int().meta({ description: 'Accounts told event.listed by this call' }),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      audited(ctx.services.database.db, await auditActorOf(ctx), (tx) => setListing(tx, input.eventId, input.listing), listingSet),
    ),

  discover: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/events/discover',
        tags: ['Operations'],
        summary: 'Look for new IPO valuation events on the venue now: list or propose them, and say what was skipped and why',
        description:
          'For operators (a dashboard key). The same pass the discovery job runs every EVENT_DISCOVERY_INTERVAL_MS: Gamma\'s open IPO events, each recognised as bands or a ladder or skipped with its reason; new ones are listed at once with EVENT_AUTO_LIST, else proposed (GET /api/events/listings?listing=proposed). Open events here that Gamma lists as closed are closed (trading stops); their outcomes and every other update are events:sync\'s. dryRun: writes nothing. 503 VENUE_UNAVAILABLE when Gamma does not answer.',
        errorResponses: [400],
      },
    })
    .input(z.strictObject({ dryRun: z.boolean().meta({ description: 'Say what it would list, and write nothing', example: true }).optional() }).prefault({}))
    .output(
      z.object({
        seen: z.number().int().meta({ description: 'IPO events Gamma lists as open' }),
        added: z.array(z.object({ eventId: z.string(), venueEventSlug: z.string().nullable(), listing: z.enum(EVENT_LISTINGS) })),
        known: z.array(z.string()).meta({ description: 'Venue slugs of events already here (events:sync refreshes them)' }),
        skipped: z.array(z.object({ slug: z.string(), reason: z.string() })),
        closed: z.array(z.string()).meta({ description: 'Our ids of events that traded here and Gamma lists as closed: closed here (trading stops; events:sync reads the outcome)' }),
        dryRun: z.boolean(),
      }),
    )
    .mutation(({ ctx, input }) => runDiscoveryPass(ctx.services, { dryRun: input.dryRun ?? false })),
});


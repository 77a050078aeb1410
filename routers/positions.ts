/** Positions (docs/api.md "Positions"): list, detail, value at the bids, and the wallet sync. */
import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { resolveEvent } from '../server/events/resolve.ts';
import { syncPositions } from '../server/trading/position-sync.ts';
import { getPosition, positionSummaries } from '../server/trading/queries.ts';
import { bestBids, positionDetail, positionSummary, positionValue } from '../server/trading/answers.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { userProcedure } from '../server/platform/procedures/base.ts';
import { isoString, optionalParams, wholeNumber } from './params.ts';
import { positionDetail as detailShape, positionStatus, positionSummary as summaryShape } from './trading-outputs.ts';
import { eventFilter, pageFields, pageOffset } from './trading-paging.ts';
import { venueOf } from '../server/trading/venue-of.ts';

const TAGS = ['Positions'];
const positionId = z.strictObject({ id: z.string().min(1).max(64).meta({ description: 'Position id (pos_…)', example: 'pos_8Hn3QwZr5KcV2mTy7LpX9d' }) });

export const positionsRouter = router({
  list: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/positions',
        tags: TAGS,
        summary: 'The user\'s positions, newest first, valued at the current bids',
        description:
          'The positions of the user in x-user-id, newest first, each with its entry price, cost, what it would fetch now at the bids and its realised and unrealised P&L. Filter by status (open by default) and event (an unknown event is 404); page with limit and offset.',
        errorResponses: [404],
      },
    })
    .input(
      optionalParams({
        status: z.enum(['open', 'closed', 'pending', 'settled', 'all']).default('open').meta({ description: 'open (default), closed, pending (buy not yet settled), settled (paid out at resolution) or all', example: 'open' }),
        eventId: eventFilter(),
        limit: wholeNumber({ min: 1, max: 500 }).default(100).meta({ description: 'Positions per page, 1 to 500, default 100', example: 20 }),
        offset: pageOffset(),
      }),
    )
    .output(z.object({ positions: z.array(summaryShape), ...pageFields }))
    .query(async ({ ctx, input }) => {
      const snapshot = await ctx.services.marketData.snapshot();
      const eventId = input.eventId === undefined ? undefined : resolveEvent(snapshot.events, input.eventId).id;
      const page = await positionSummaries(ctx.services.database.db, ctx.user, { ...input, eventId }, bestBids(snapshot.books));
      return { positions: page.rows.map((r) => positionSummary(r.position, r.totals, r.realizedMicros)), total: page.total, limit: input.limit, offset: input.offset };
    }),

  sync: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/trading/positions/sync',
        tags: TAGS,
        summary: 'Settle pending orders, then check every open position against the wallet\'s token balances',
        description:
          'Brings the records in line with the chain: first settles the user\'s pending orders with the venue (like POST /api/trading/orders/sync), then reads the wallet\'s token balances: pending positions the balances prove are opened, open positions whose tokens are gone are closed, and tokens no position explains are listed as untracked.',
        errorResponses: [403, 503],
      },
    })
    .input(
      optionalParams({
        walletAddress: z
          .string()
          .refine((a) => isAddress(a, { strict: false }), 'must be an EVM address (0x and 40 hex digits)')
          .transform((a) => getAddress(a))
          .optional()
          .meta({ description: 'The wallet to read (an EVM address); defaults to the walletAddress in the settings', example: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }),
      }),
    )
    .output(
      z.object({
        walletAddress: z.string(),
        synced: z.number().int(),
        added: z.number().int().meta({ description: 'Pending positions proven by the balances and now open' }),
        removed: z.number().int().meta({ description: 'Open positions whose tokens are gone, now closed' }),
        positions: z.array(z.object({ id: z.string(), eventId: z.string(), side: z.enum(['LONG', 'SHORT']), status: positionStatus, onChainVerified: z.boolean() })),
        untracked: z.array(z.object({ bandId: z.string(), eventId: z.string(), label: z.string(), tokens: z.number() })),
      }),
    )
    .mutation(({ ctx, input }) => syncPositions(ctx.services, ctx.user, input.walletAddress)),

  get: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/positions/{id}',
        tags: TAGS,
        summary: 'One position with its bands',
        description:
          'One position of the user: its totals like the list, its floors, why a failed buy was unwound, each band\'s shares with the price paid and the best bid now, and the percentages a sale of it accepts (partialSaleRange). 404 POSITION_NOT_FOUND for another user\'s position.',
        errorResponses: [404],
      },
    })
    .input(positionId)
    .output(
      detailShape.extend({
        partialSaleRange: z
          .object({
            lowest: z.number().meta({ description: 'The smallest partial percentage a sale accepts now (two decimals)', example: 12.5 }),
            highest: z.number().meta({ description: 'The largest partial percentage a sale accepts now (two decimals, under 100)', example: 87.5 }),
          })
          .nullable()
          .meta({
            description:
              "The percentages POST /api/trading/sell accepts now, before asking: a partial sale from lowest to highest (every band sells the same fraction, none left under the venue minimum), or 100%. null when only 100% works, or when the position is not open. The same rule the sale and its quote apply (their partialSaleRange), on the shares not held by sales still running.",
          }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { position, bands, realizedMicros } = await getPosition(ctx.services.database.db, ctx.user, input.id);
      const snapshot = await ctx.services.marketData.snapshot();
      return positionDetail(position, bands, snapshot.events.find((e) => e.id === position.eventId), snapshot.books, realizedMicros, venueOf(ctx.services, ctx.user.accountId).rules);
    }),

  value: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/positions/{id}/value',
        tags: TAGS,
        summary: 'What a position is worth now, band by band, at the bids',
        description: 'What the position\'s shares would fetch now, band by band at the best bids, its unrealised P&L, and the time of the market snapshot valued from. POST /api/trading/sell/quote gives the exact proceeds of a sale, walking the books.',
        errorResponses: [404],
      },
    })
    .input(positionId)
    .output(
      z.object({
        positionId: z.string(),
        currentValue: z.number(),
        unrealizedPnl: z.number(),
        unrealizedPnlPercent: z.number(),
        bandValues: z.array(z.object({ bandId: z.string(), tokens: z.number(), price: z.number(), value: z.number() })),
        updatedAt: isoString(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { position, bands } = await getPosition(ctx.services.database.db, ctx.user, input.id);
      return positionValue(position, bands, await ctx.services.marketData.snapshot());
    }),
});

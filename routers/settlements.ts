/** Settlements: what each position was paid when its event resolved. Key+User. */
import { z } from 'zod';
import { canonicalEventId } from '../server/events/resolve.ts';
import { listSettlements } from '../server/trading/settlement-queries.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { userProcedure } from '../server/platform/procedures/base.ts';
import { isoString, optionalParams, wholeNumber } from './params.ts';
import { eventFilter, pageOffset } from './trading-paging.ts';

const usd = (description: string) => z.number().meta({ description });

const settlement = z.object({
  id: z.string().meta({ description: 'Settlement id (stl_…); also the orderId of its SETTLE trade in the history' }),
  positionId: z.string(),
  eventId: z.string(),
  side: z.enum(['LONG', 'SHORT']),
  outcome: z.enum(['resolved', 'voided']).meta({ description: 'resolved: the winning band\'s shares paid $1; voided: every band\'s shares paid $0.50' }),
  winningBandId: z.string().nullable().meta({ description: 'null when the event was voided' }),
  winningBandLabel: z.string().nullable(),
  units: z.number().meta({ description: 'Units the position held when it settled' }),
  payoutPerUnit: usd('proceeds / units: for a LONG held whole on a resolved event, its weight on the winning band'),
  proceeds: usd('Winning-band shares held × $1 (voided: every share held × $0.50)'),
  realizedPnl: usd('proceeds − the cost basis the position still carried'),
  settledAt: isoString(),
  paid: z.boolean().meta({ description: 'Whether the venue has paid the proceeds (a payment that failed is retried, and never made twice)' }),
  paidAt: isoString().nullable(),
  txHash: z.string().nullable().meta({ description: 'The redemption transaction on a live venue; null on the paper venue' }),
  unpaidReason: z.string().nullable().meta({ description: 'While unpaid: why the last payment attempt did not finish (it is retried); null once paid' }),
});

export const settlementsRouter = router({
  list: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/settlements',
        tags: ['History'],
        summary: 'Positions paid out at their event\'s resolution, newest first, with a summary',
        description:
          'When an event resolves (or is voided), each of its open positions settles: its winning-band shares pay $1 (voided: every share $0.50). This lists the user\'s settlements, newest first, with the payout, realised P&L and whether the venue has paid it yet, and sums up the filtered set. 404 for an unknown eventId.',
        errorResponses: [404],
      },
    })
    .input(
      optionalParams({
        eventId: eventFilter(),
        positionId: z.string().min(1).max(64).meta({ description: 'Only this position (pos_…)', example: 'pos_8Hn3QwZr5KcV2mTy7LpX9d' }).optional(),
        limit: wholeNumber({ min: 1, max: 1000 }).default(100).meta({ description: 'Settlements per page, 1 to 1000, default 100', example: 50 }),
        offset: pageOffset(),
      }),
    )
    .output(
      z.object({
        settlements: z.array(settlement),
        summary: z.object({
          totalSettlements: z.number().int(),
          totalProceeds: usd('Σ proceeds of the filtered set'),
          realizedPnl: usd('Σ realizedPnl of the filtered set'),
          unpaid: z.number().int().meta({ description: 'Settlements the venue has not paid yet' }),
        }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const eventId = input.eventId === undefined ? undefined : await canonicalEventId(ctx.services, input.eventId);
      return listSettlements(ctx.services.database.db, ctx.user, { ...input, eventId });
    }),
});

/** Orders and trade history (docs/api.md "Orders", "History"). */
import { tokenLabel } from '../server/events/tokens.ts';
import { z } from 'zod';
import { canonicalEventId } from '../server/events/resolve.ts';
import { syncOrders } from '../server/trading/order-sync.ts';
import { getOrder, listOrders, tradeHistory } from '../server/trading/queries.ts';
import { microRatio, microsToUsd } from '../server/lib/money.ts';
import { orderDetail, orderSummary } from '../server/trading/answers.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { userProcedure } from '../server/platform/procedures/base.ts';
import { isoInstant, optionalParams, wholeNumber } from './params.ts';
import { orderDetail as detailShape, orderStatus, orderSummary as summaryShape, positionStatus, trade } from './trading-outputs.ts';
import { eventFilter, pageFields, pageOffset } from './trading-paging.ts';

const ORDER_FILTER = { pending: 'PENDING', matched: 'MATCHED', cancelled: 'CANCELLED', rejected: 'REJECTED', all: 'all' } as const;

export const ordersRouter = router({
  list: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/orders',
        tags: ['Orders'],
        summary: 'The user\'s orders, newest first',
        description:
          'Every order sent to the venue for the user in x-user-id, newest first: band, side, why it was sent (open, close or unwind), limit and fill prices, size, filled shares, fees and status. Filter by status and position; page with limit and offset.',
      },
    })
    .input(
      optionalParams({
        status: z.enum(['pending', 'matched', 'cancelled', 'rejected', 'all']).default('all').meta({ description: 'Only orders in this state: pending, matched, cancelled, rejected or all (default)', example: 'matched' }),
        // The description sits inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
        positionId: z.string().min(1).max(64).meta({ description: 'Only the orders of this position (pos_…)', example: 'pos_8Hn3QwZr5KcV2mTy7LpX9d' }).optional(),
        limit: wholeNumber({ min: 1, max: 500 }).default(50).meta({ description: 'Orders per page, 1 to 500, default 50', example: 20 }),
        offset: pageOffset(),
      }),
    )
    .output(z.object({ orders: z.array(summaryShape), ...pageFields }))
    .query(async ({ ctx, input }) => {
      const page = await listOrders(ctx.services.database.db, ctx.user, { ...input, status: ORDER_FILTER[input.status] });
      return { orders: page.rows.map(orderSummary), total: page.total, limit: input.limit, offset: input.offset };
    }),

  sync: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/trading/orders/sync',
        tags: ['Orders'],
        summary: 'Ask the venue about every PENDING order, apply the answers and settle the positions involved',
        description:
          'For orders whose outcome is not known yet (a timeout, a crash, a venue that answered late): asks the venue about each PENDING order of the user, records what it became, and settles the buys and sales involved (a buy whose bands did not all fill is unwound). A trade that answered 503 is completed this way.',
        errorResponses: [403, 503],
      },
    })
    .output(
      z.object({
        synced: z.number().int().meta({ description: 'PENDING orders asked about' }),
        updated: z.number().int(),
        orders: z.array(z.object({ id: z.string(), previousStatus: orderStatus, currentStatus: orderStatus })),
        positions: z.array(z.object({ id: z.string(), status: positionStatus })).meta({ description: 'Positions settled by this sync' }),
      }),
    )
    .mutation(({ ctx }) => syncOrders(ctx.services, ctx.user)),

  get: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/orders/{orderId}',
        tags: ['Orders'],
        summary: 'One order',
        description: 'One order of the user, as the list shows it, with its band\'s (or ladder threshold token\'s) label, the shares still unfilled and the settlement transaction (null on the paper venue).',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ orderId: z.string().min(1).max(64).meta({ description: 'The order id (ord_…, from GET /api/trading/orders or a trade\'s answer)', example: 'ord_5Tq9WmR2xKpB7nVc3HyL8e' }) }))
    .output(detailShape)
    .query(async ({ ctx, input }) => {
      const order = await getOrder(ctx.services.database.db, ctx.user, input.orderId);
      const snapshot = await ctx.services.marketData.snapshot();
      return orderDetail(order, tokenLabel(snapshot.events, order.bandId));
    }),

  history: userProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/trading/history',
        tags: ['History'],
        summary: 'Trades (fills), newest first, with a summary of the filtered set',
        description:
          'Every fill of the user\'s orders and every settlement payout (action SETTLE), newest first, with shares, amount, price, fees and realised P&L; and the count, volume, fees and realised P&L of the whole filtered set. Filter by event (an unknown event is 404) and date range; page with limit and offset.',
        errorResponses: [404],
      },
    })
    .input(
      optionalParams({
        eventId: eventFilter(),
        startDate: isoInstant({ description: 'Inclusive: an ISO 8601 date or date-time' }).meta({ example: '2026-11-01' }).optional(),
        endDate: isoInstant({ endOfDay: true, description: 'Inclusive; a date includes that whole UTC day' }).meta({ example: '2026-11-22' }).optional(),
        limit: wholeNumber({ min: 1, max: 1000 }).default(100).meta({ description: 'Trades per page, 1 to 1000, default 100', example: 50 }),
        offset: pageOffset(),
      }, { ordered: [['startDate', 'endDate']] }),
    )
    .output(
      z.object({
        trades: z.array(trade),
        summary: z.object({ totalTrades: z.number().int(), totalVolume: z.number(), totalFees: z.number(), realizedPnl: z.number() }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const eventId = input.eventId === undefined ? undefined : await canonicalEventId(ctx.services, input.eventId);
      const { rows, summary } = await tradeHistory(ctx.services.database.db, ctx.user, { ...input, eventId });
      return {
        trades: rows.map((t) => ({
          id: t.id,
          positionId: t.positionId,
          eventId: t.eventId,
          orderId: t.orderId,
          bandId: t.bandId,
          side: t.side,
          action: t.action,
          shares: microsToUsd(t.sharesMicros),
          amount: microsToUsd(t.amountMicros),
          price: microRatio(t.amountMicros, t.sharesMicros),
          fees: microsToUsd(t.feesMicros),
          realizedPnl: microsToUsd(t.realizedPnlMicros),
          timestamp: t.createdAt.toISOString(),
        })),
        summary: {
          totalTrades: summary.totalTrades,
          totalVolume: microsToUsd(summary.volumeMicros),
          totalFees: microsToUsd(summary.feesMicros),
          realizedPnl: microsToUsd(summary.realizedPnlMicros),
        },
      };
    }),
});

/**
 * Trading operations (docs/api.md "Trading operations", docs/decisions.md §7): open a position, sell part or
 * all of one. Both accept an Idempotency-Key header. Key+User routes under the trade rate limit.
 * A quote (the buy's plan, nothing placed) is a Key+User route at the standard key rate.
 */
import { z } from 'zod';
import { resolveEvent } from '../server/events/resolve.ts';
import { usdToMicros } from '../server/lib/money.ts';
import { buy, buyOutcome, type BuyRequest } from '../server/trading/buy.ts';
import { runIdempotent, type IdempotentCall } from '../server/trading/idempotency.ts';
import { syncOrders } from '../server/trading/order-sync.ts';
import { quoteBuy } from '../server/trading/quote.ts';
import { saleOutcome, sell, type SellRequest } from '../server/trading/sell.ts';
import { quoteSale } from '../server/trading/sell-quote.ts';
import type { RequestContext } from '../server/platform/procedures/context.ts';
import { idempotencyKeyOf } from '../server/platform/procedures/idempotency-key.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { tradeProcedure, userProcedure } from '../server/platform/procedures/base.ts';
import { DEFAULT_FLOORS } from '../server/valuation/index.ts';
import { usdAmount } from './params.ts';
import { buyQuote, operationOrder, positionStatus, saleQuote, unsoldBand } from './trading-outputs.ts';

const TAGS = ['Trading'];
const floor = (description: string, example: number) => z.number().min(0).max(1).optional().meta({ description, example });
const ERRORS = [402, 403, 404, 409, 422, 503];

type UserContext = RequestContext & { user: { accountId: string; userId: string } };

/**
 * Buy and sell also take the idempotency key per call, in place of Idempotency-Key, for the calls of
 * one tRPC batch (whose headers they share); both places must agree (docs/decisions.md §7). Like the
 * per-call `userId` every trading route takes (server/platform/procedures/user-member.ts), it is not part of
 * what the key fingerprints.
 */
const perCall = {
  idempotencyKey: z
    .string()
    .min(1)
    .max(255)
    .meta({ description: 'In place of the Idempotency-Key header (if both are sent they must be equal): a retry with the same key and body answers the first outcome, never a second trade. Per call, so each call of a tRPC batch can carry its own', example: 'trading-buy-2026-11-22-0001' })
    .optional(),
};

/** The call's members that are not the trade itself. */
function tradeOf<T extends object>(input: T): Omit<T, 'userId' | 'idempotencyKey'> {
  const { userId: _user, idempotencyKey: _key, ...trade } = input as T & { userId?: string; idempotencyKey?: string };
  return trade;
}

/** Which position, and how much of it: a sale and its quote. */
const saleOf = {
  positionId: z.string().min(1).max(64).meta({ description: 'The position to sell (pos_…, from GET /api/trading/positions)', example: 'pos_8Hn3QwZr5KcV2mTy7LpX9d' }),
  percentage: z
    .number()
    .min(1)
    .max(100)
    .default(100)
    .meta({ description: '1 to 100, default 100. A partial sale sells the same fraction of every band (the position keeps its shape) or is refused with the percentages that would', example: 50 }),
};

/** The buy body; a quote takes the same (without an idempotency key). */
const buyFields = {
  eventId: z.string().min(1).max(128).meta({ description: 'The event to trade, while it is open: our id, the venue\'s event slug or an alias (GET /api/trading/events)', example: 'openai-ipo' }),
  side: z.enum(['LONG', 'SHORT']).meta({ description: 'LONG: each unit pays $1 if the top band wins, down to floorL if the bottom one does (a bet on a high valuation). SHORT mirrors it, from $1 at the bottom band to floorS at the top', example: 'LONG' }),
  amount: usdAmount({ min: 1, max: 1_000_000 }).meta({ description: 'USD to spend, at least 1; the buy never spends more than this', example: 100 }),
  floorL: floor('Overrides the stored LONG floor for this trade, 0 to 1 (default 0.20)', DEFAULT_FLOORS.floorL),
  floorS: floor('Overrides the stored SHORT floor for this trade, 0 to 1 (default 0.15)', DEFAULT_FLOORS.floorS),
  maxAveragePrice: usdAmount({ min: 0.000001, max: 1_000 })
    .optional()
    .meta({ description: 'Most USD per unit (totalCost / units) the plan may reach; above it nothing is sent and the answer is 422 ORDER_REJECTED naming the price reached', example: 0.36 }),
};
const buyInput = z.strictObject({ ...buyFields, ...perCall });
const buyQuoteInput = z.strictObject(buyFields);

/** The buy body as buy.ts and quote.ts take it: our event id, amounts in micro-units. */
async function buyRequestOf(ctx: UserContext, input: z.infer<typeof buyQuoteInput>): Promise<BuyRequest> {
  const { amount, maxAveragePrice, ...rest } = tradeOf(input);
  return {
    ...rest,
    // One set of event ids (server/events/resolve.ts): an alias or venue slug buys our event, answered by our id.
    eventId: resolveEvent((await ctx.services.marketData.snapshot()).events, input.eventId).id,
    amountMicros: usdToMicros(amount),
    maxAveragePriceMicros: maxAveragePrice === undefined ? undefined : usdToMicros(maxAveragePrice),
  };
}

/** The sell body as sell.ts takes it: the least average price in micro-USD. */
function saleRequestOf(input: { positionId: string; percentage: number; minAveragePrice?: number }): SellRequest {
  const { minAveragePrice, ...sale } = tradeOf(input);
  return { ...sale, ...(minAveragePrice === undefined ? {} : { minAveragePriceMicros: usdToMicros(minAveragePrice) }) };
}

/**
 * Idempotency-Key handling shared by buy and sell. A retry of a request whose outcome was unknown
 * first asks the venue (orders/sync), then answers what the request became.
 */
function idempotently<T>(ctx: UserContext, operation: 'buy' | 'sell', input: { userId?: string; idempotencyKey?: string }, run: IdempotentCall<T>['run'], outcome: (positionId: string, operationId: string) => Promise<T>) {
  return runIdempotent<T>({
    db: ctx.services.database.db,
    user: ctx.user,
    key: idempotencyKeyOf(ctx, input),
    operation,
    input: tradeOf(input),
    // Longer than any trade can run: a few venue calls, each with its deadline.
    leaseSeconds: Math.max(120, Math.ceil((8 * ctx.services.config.venueTimeoutMs) / 1000)),
    onReplay: () => (ctx.resHeaders['Idempotent-Replayed'] = 'true'),
    run,
    recover: async (positionId, operationId) => {
      await syncOrders(ctx.services, ctx.user).catch(() => undefined);
      return outcome(positionId, operationId);
    },
  });
}

export const tradingRouter = router({
  buy: tradeProcedure
    .meta({
      idempotent: true,
      openapi: {
        method: 'POST',
        path: '/trading/buy',
        tags: TAGS,
        summary: 'Open a LONG or SHORT position: one all-or-nothing order per band, sized to the amount',
        description:
          'Plans the buy like POST /api/trading/quote (one order per band whose weight is positive, sized so the whole costs at most `amount`), then sends every order as fill-or-kill at its limit. If any band does not fill, the filled ones are sold back and the answer is 422 ORDER_REJECTED (the position records why). The floors default to the user\'s stored ones (PUT /api/trading/settings). Send an Idempotency-Key: a retry with the same key and body answers what the first request became, and never buys twice.',
        errorResponses: ERRORS,
      },
    })
    .input(buyInput)
    .output(
      z.object({
        positionId: z.string(),
        eventId: z.string(),
        side: z.enum(['LONG', 'SHORT']),
        status: positionStatus,
        orders: z.array(operationOrder),
        totalCost: z.number().meta({ description: 'USD paid, fees included' }),
        averagePrice: z.number().meta({ description: 'totalCost / size: USD per unit' }),
        size: z.number().meta({ description: 'Units bought' }),
        floorL: z.number(),
        floorS: z.number(),
        requestedAmount: z.number().meta({ description: 'The amount asked for (USD)' }),
        unspentAmount: z.number().meta({ description: 'requestedAmount − totalCost: never negative' }),
      }),
    )
    .mutation(({ ctx, input }) =>
      idempotently(
        ctx,
        'buy',
        input,
        async (hooks) => buy(ctx.services, ctx.user, await buyRequestOf(ctx, input), hooks),
        (positionId) => buyOutcome(ctx.services.database.db, positionId, usdToMicros(input.amount)),
      ),
    ),

  quote: userProcedure
    .meta({
      scope: 'trading:read',
      session: true,
      openapi: {
        method: 'POST',
        path: '/trading/quote',
        tags: TAGS,
        summary: "A buy's exact plan against the books of this moment, without placing anything",
        description:
          'Takes the body of POST /api/trading/buy and answers what that buy would send now: the shares, cost and limit price of each band, the units, the average price per unit, the most it can spend and the least amount this event, side and floors accept. Nothing is placed and no venue credentials are needed; 422 when the buy itself would be refused (event not open, amount under the minimum, maxAveragePrice exceeded).',
        errorResponses: [404, 422, 503],
      },
    })
    .input(buyQuoteInput)
    .output(buyQuote)
    .mutation(async ({ ctx, input }) => quoteBuy(ctx.services, ctx.user, await buyRequestOf(ctx, input))),

  sell: tradeProcedure
    .meta({
      idempotent: true,
      session: true,
      openapi: {
        method: 'POST',
        path: '/trading/sell',
        tags: TAGS,
        summary: 'Sell a percentage of every band of a position at the bids (100 closes it)',
        description:
          'Sells the same fraction of every band the position holds, each as an order at the bids it walks (POST /api/trading/sell/quote shows the plan). Bands without bids, or with fewer shares than the venue minimum, stay in the position and are listed in `unsold`. A partial percentage that would leave a band under the minimum is refused (422) with the percentages that work. Accepts an Idempotency-Key, like a buy.',
        errorResponses: ERRORS,
      },
    })
    .input(
      z.strictObject({
        ...saleOf,
        ...perCall,
        minAveragePrice: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .meta({ description: 'Least USD per unit sold (proceeds / units), 0 to 1: a plan below it is refused (422) and nothing is sent', example: 0.3 }),
      }),
    )
    .output(
      z.object({
        positionId: z.string(),
        status: positionStatus,
        percentage: z.number(),
        orders: z.array(operationOrder),
        totalProceeds: z.number().meta({ description: 'USD received, after fees' }),
        realizedPnl: z.number().meta({ description: 'totalProceeds minus the cost basis of what was sold' }),
        unsold: z.array(unsoldBand).meta({ description: 'Bands whose shares were not all sold (no bids, under the minimum); they stay in the position' }),
      }),
    )
    .mutation(({ ctx, input }) =>
      idempotently(
        ctx,
        'sell',
        input,
        (hooks) => sell(ctx.services, ctx.user, saleRequestOf(input), hooks),
        (positionId, operationId) => saleOutcome(ctx.services.database.db, positionId, operationId, input.percentage),
      ),
    ),

  sellQuote: userProcedure
    .meta({
      scope: 'trading:read',
      session: true,
      openapi: {
        method: 'POST',
        path: '/trading/sell/quote',
        tags: TAGS,
        summary: "A sale's exact plan against the books of this moment, without placing anything: proceeds, average price per unit, P&L",
        description:
          'Takes the positionId and percentage of POST /api/trading/sell and answers what that sale would send now: per band, the shares, worst bid reached, proceeds and cost basis leaving, and whether it can sell; in total, the proceeds, the average price per unit, the P&L and the partial percentages that keep the position\'s shape. Nothing is placed.',
        errorResponses: [404, 422, 503],
      },
    })
    .input(z.strictObject(saleOf))
    .output(saleQuote)
    .mutation(({ ctx, input }) => quoteSale(ctx.services, ctx.user, tradeOf(input))),
});

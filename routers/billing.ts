import { z } from 'zod';
import { billingSummary } from '../server/accounts/billing.ts';
import { depositTotals } from '../server/deposits/store.ts';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure } from '../server/platform/procedures/base.ts';
import { noInput } from './params.ts';
import { pricingFor, pricingSchema } from './pricing.ts';
import { standardCostOfAccount } from '../server/accounts/modes.ts';

export const billingRouter = router({
  get: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/billing',
        tags: ['Account and billing'],
        summary: 'Usage, spend and balance of the calling account (all time, this request included)',
        description:
          'The calling account\'s billed requests and their cost (all time, this request included), its prepaid balance, the price per request that applies to it, and its stablecoin deposits (credited and pending). With a signed-in session: that account, billed like a key\'s call (its row has no key).',
      },
    })
    .input(noInput())
    .output(
      z.object({
        usageCount: z.number().int(),
        usageCostUsd: z.number(),
        balanceUsd: z.number(),
        pricing: pricingSchema,
        costPerRequestUsd: z.number(),
        depositedUsd: z.number().meta({ description: 'Stablecoin deposits credited to the account, all time (GET /api/accounts/deposits lists them)' }),
        pendingDepositsUsd: z.number().meta({ description: 'Deposits seen on chain whose block is not final yet' }),
      }),
    )
    .query(async ({ ctx }) => {
      const db = ctx.services.database.db;
      const [summary, deposits] = await Promise.all([billingSummary(db, ctx.principal.accountId), depositTotals(db, ctx.principal.accountId)]);
      return {
        depositedUsd: microsToUsd(deposits.creditedMicros),
        pendingDepositsUsd: microsToUsd(deposits.pendingMicros),
        usageCount: summary.usageCount,
        usageCostUsd: microsToUsd(summary.usageCostMicros),
        balanceUsd: microsToUsd(summary.balanceMicros),
        ...pricingFor(summary.costPerRequestMicros ?? standardCostOfAccount(ctx.services.config, ctx.principal.accountId)),
      };
    }),
});

import { z } from 'zod';
import { billingSummary } from '../server/accounts/billing.ts';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/trpc/init.ts';
import { apiKeyProcedure } from '../server/trpc/procedures.ts';
import { noInput } from './params.ts';
import { pricingFor, pricingSchema } from './pricing.ts';

export const billingRouter = router({
  get: apiKeyProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/billing',
        tags: ['Account and billing'],
        summary: 'Usage, spend and balance of the calling account (all time, this request included)',
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
      }),
    )
    .query(async ({ ctx }) => {
      const summary = await billingSummary(ctx.services.database.db, ctx.principal.accountId);
      return {
        usageCount: summary.usageCount,
        usageCostUsd: microsToUsd(summary.usageCostMicros),
        balanceUsd: microsToUsd(summary.balanceMicros),
        ...pricingFor(summary.costPerRequestMicros ?? ctx.services.config.costPerRequestMicros),
      };
    }),
});

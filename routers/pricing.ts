import { z } from 'zod';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/trpc/init.ts';
import { publicProcedure } from '../server/trpc/procedures.ts';
import { noInput } from './params.ts';

export const pricingSchema = z.object({
  unit: z.string().meta({ example: 'per 1,000 requests' }),
  amountUsd: z.number().meta({ example: 2 }),
  currency: z.string().meta({ example: 'USD' }),
});

/** The public price list for a standard rate given in micro-USD per request. */
export function pricingFor(costPerRequestMicros: number) {
  return {
    pricing: { unit: 'per 1,000 requests', amountUsd: microsToUsd(costPerRequestMicros * 1000), currency: 'USD' },
    costPerRequestUsd: microsToUsd(costPerRequestMicros),
  };
}

export const pricingRouter = router({
  get: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/pricing', tags: ['Account and billing'], summary: 'Standard request price' } })
    .input(noInput())
    .output(z.object({ pricing: pricingSchema, costPerRequestUsd: z.number() }))
    .query(({ ctx }) => pricingFor(ctx.services.config.costPerRequestMicros)),
});

import { z } from 'zod';
import { microsToUsd } from '../server/lib/money.ts';
import { deepFreeze, markReusable } from '../server/lib/reusable-json.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { publicProcedure } from '../server/platform/procedures/base.ts';
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

/** The standard price list is the same object for every request: validated and serialized once. */
const standardPricing = new Map<number, ReturnType<typeof pricingFor>>();
function standardPricingFor(costPerRequestMicros: number) {
  let answer = standardPricing.get(costPerRequestMicros);
  if (!answer) {
    answer = markReusable(deepFreeze(pricingFor(costPerRequestMicros)));
    standardPricing.set(costPerRequestMicros, answer);
  }
  return answer;
}

export const pricingRouter = router({
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/pricing',
        tags: ['Account and billing'],
        summary: 'Standard request price',
        description:
          'The server\'s standard price of a billed request, per 1,000 requests and per request (COST_PER_REQUEST_USD). Private-company routes cost ten times the standard rate, and an account may have its own rate: GET /api/billing shows the one that applies to you. Public and unbilled.',
      },
    })
    .input(noInput())
    .output(z.object({ pricing: pricingSchema, costPerRequestUsd: z.number() }))
    .query(({ ctx }) => standardPricingFor(ctx.services.config.costPerRequestMicros)),
});

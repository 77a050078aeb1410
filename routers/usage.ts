import { z } from 'zod';
import { listUsage } from '../server/accounts/usage.ts';
import { ApiError } from '../server/errors.ts';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/trpc/init.ts';
import { apiKeyProcedure } from '../server/trpc/procedures.ts';
import { iso, isoInstant, isoString, optionalParams, wholeNumber } from './params.ts';

const usageRecord = z.object({
  id: z.string(),
  path: z.string(),
  method: z.string(),
  timestamp: isoString(),
  costUsd: z.number(),
  currency: z.string(),
});

export const usageRouter = router({
  list: apiKeyProcedure
    .meta({
      session: true,
      openapi: {
        method: 'GET',
        path: '/usage',
        tags: ['Account and billing'],
        summary: 'Billed requests of the calling account, newest first',
      },
    })
    .input(
      optionalParams({
        from: isoInstant({ description: 'Inclusive start: an ISO 8601 date or date-time' }).optional(),
        to: isoInstant({ endOfDay: true, description: 'Inclusive end; a date includes that whole UTC day' }).optional(),
        limit: wholeNumber({ min: 1, max: 10_000 }).default(1000).meta({ description: '1 to 10000, default 1000' }),
      }),
    )
    .output(z.object({ records: z.array(usageRecord), total: z.number().int() }))
    .query(async ({ ctx, input }) => {
      if (input.from && input.to && input.from > input.to) throw new ApiError('BAD_REQUEST', 'from: must not be after to');
      const page = await listUsage(ctx.services.database.db, { accountId: ctx.principal.accountId, ...input });
      return {
        records: page.records.map((r) => ({
          id: r.id,
          path: r.path,
          method: r.method,
          timestamp: iso(r.createdAt),
          costUsd: microsToUsd(r.costMicros),
          currency: 'USD',
        })),
        total: page.total,
      };
    }),
});

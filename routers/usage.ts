import { z } from 'zod';
import { listUsage, summariseUsage, usageCursorProblem } from '../server/accounts/usage.ts';
import { microsToUsd } from '../server/lib/money.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { apiKeyProcedure } from '../server/platform/procedures/base.ts';
import { iso, isoInstant, isoString, optionalParams, wholeNumber } from './params.ts';

const usageRecord = z.object({
  id: z.string(),
  path: z.string(),
  method: z.string(),
  keyId: z.string().nullable().meta({ description: 'The API key that made the request; null for a call made with a signed-in session (billed like a key\'s call)' }),
  timestamp: isoString(),
  costUsd: z.number(),
  currency: z.string(),
});

const filters = {
  from: isoInstant({ description: 'Inclusive start: an ISO 8601 date or date-time' }).meta({ example: '2026-11-01' }).optional(),
  to: isoInstant({ endOfDay: true, description: 'Inclusive end; a date includes that whole UTC day' }).meta({ example: '2026-11-22' }).optional(),
  keyId: z.string().min(1).max(64).meta({ description: 'Only the requests of this API key (key_…, from GET /api/keys)', example: 'key_FnfU71WQeSY3DWtAZpbSi1' }).optional(),
  path: z.string().min(1).max(256).meta({ description: 'Only the requests to this path, as recorded (e.g. /api/billing, /trpc/billing.get)', example: '/api/private-companies' }).optional(),
};

/** An hour bucket over more than this many days would be a chart no one can read: 400. */
const MAX_HOURLY_DAYS = 31;
const DAY_MS = 86_400_000;
const usd = (micros: number) => microsToUsd(micros);

/** bucket=hour needs from, and at most MAX_HOURLY_DAYS days from it to `to` (or now). */
function hourlySpanProblem(input: { bucket: 'hour' | 'day'; from?: Date; to?: Date }) {
  if (input.bucket !== 'hour') return null;
  const span = (input.to?.getTime() ?? Date.now()) - (input.from?.getTime() ?? 0);
  return !input.from || span > MAX_HOURLY_DAYS * DAY_MS ? { parameter: 'bucket' as const, rule: `hour needs from, and at most ${MAX_HOURLY_DAYS} days between from and to; use bucket=day for longer` } : null;
}

export const usageRouter = router({
  list: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/usage',
        tags: ['Account and billing'],
        summary: 'Billed requests of the calling account, newest first',
        description:
          'Every billed request of the calling account (all its keys), newest first: path, method, key, time and cost. Filter by time range, key and path; page with limit and offset, or with cursor (nextCursor: the same cost however deep); total counts the whole filtered set, from the account\'s running count and its day and hour totals, so its cost does not grow with the account\'s history. With a session: the signed-in account, billed like a key\'s call (its own row has keyId null).',
      },
    })
    .input(
      optionalParams({
        ...filters,
        limit: wholeNumber({ min: 1, max: 10_000 }).default(1000).meta({ description: 'Records per page: 1 to 10000, default 1000', example: 100 }),
        offset: wholeNumber({ min: 0, max: 10_000_000 }).default(0).meta({ description: 'Records to skip (paging), default 0; a deep offset costs the records it skips, a cursor does not', example: 0 }),
        cursor: z
          .string()
          .min(1)
          .max(1000)
          .meta({ description: 'The nextCursor of the previous page (opaque): the next page at the cost of one page however deep; not with offset', example: 'WyJuZXdlc3QiLCIyMDI2LTExLTIyVDA2OjAwOjAwLjAwMDAwMFoiLCJ1c2VfN1JrMlZiTjlxV3g0VG1MOGNIejNQZCJd' })
          .optional(),
      }, {
        ordered: [['from', 'to']],
        check: ({ cursor, offset }) => (cursor !== undefined && offset > 0 ? { parameter: 'offset', rule: 'page with cursor or with offset, not both' } : usageCursorProblem(cursor)),
      }),
    )
    .output(
      z.object({
        records: z.array(usageRecord),
        total: z.number().int(),
        nextCursor: z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page' }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const page = await listUsage(ctx.services.database.db, { accountId: ctx.principal.accountId, ...input });
      return {
        records: page.records.map((r) => ({
          id: r.id,
          path: r.path,
          method: r.method,
          keyId: r.keyId,
          timestamp: iso(r.createdAt),
          costUsd: microsToUsd(r.costMicros),
          currency: 'USD',
        })),
        total: page.total,
        nextCursor: page.nextCursor,
      };
    }),

  summary: apiKeyProcedure
    .meta({
      scope: 'account:read',
      session: true,
      openapi: {
        method: 'GET',
        path: '/usage/summary',
        tags: ['Account and billing'],
        summary: 'Requests and cost of the calling account per UTC hour or day, per path and per key (the same filters as /usage)',
        description:
          'The requests GET /api/usage would list, aggregated: requests and cost per UTC hour or day (`bucket`), per path and per key, and their totals. `bucket=hour` needs `from`, and at most 31 days between from and to (400 otherwise; use `bucket=day` for longer ranges).',
      },
    })
    .input(
      optionalParams(
        { ...filters, bucket: z.enum(['hour', 'day']).default('day').meta({ description: 'hour or day (UTC), default day', example: 'day' }) },
        { ordered: [['from', 'to']], check: hourlySpanProblem },
      ),
    )
    .output(
      z.object({
        bucket: z.enum(['hour', 'day']),
        buckets: z.array(z.object({ start: isoString(), requests: z.number().int(), costUsd: z.number() })),
        byPath: z.array(z.object({ path: z.string(), requests: z.number().int(), costUsd: z.number() })),
        byKey: z.array(z.object({ keyId: z.string().nullable().meta({ description: 'The API key; null for the calls made with a signed-in session' }), keyName: z.string().nullable(), requests: z.number().int(), costUsd: z.number() })),
        totals: z.object({ requests: z.number().int(), costUsd: z.number() }),
      }),
    )
    .query(async ({ ctx, input }) => {
      const s = await summariseUsage(ctx.services.database.db, { accountId: ctx.principal.accountId, ...input });
      return {
        bucket: input.bucket,
        buckets: s.buckets.map((b) => ({ start: b.start, requests: b.requests, costUsd: usd(b.costMicros) })),
        byPath: s.byPath.map((p) => ({ path: p.path, requests: p.requests, costUsd: usd(p.costMicros) })),
        byKey: s.byKey.map((k) => ({ keyId: k.keyId, keyName: k.keyName, requests: k.requests, costUsd: usd(k.costMicros) })),
        totals: { requests: s.totals.requests, costUsd: usd(s.totals.costMicros) },
      };
    }),
});

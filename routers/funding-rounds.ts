/**
 * Funding rounds across companies (docs/api.md "Funding rounds and investors"), billed at the
 * private-company rate like the company routes. Paged by keyset: a page is one index walk from the
 * cursor, so there is no total (counting would cost the whole table on every request).
 */
import { z } from 'zod';
import { listRounds, ROUND_CURSOR, ROUND_SORTS } from '../server/companies/round-queries.ts';
import { cursorProblem } from '../server/lib/keyset-cursor.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { companyDataProcedure } from '../server/platform/procedures/base.ts';
import { round } from './company-shapes.ts';
import { isoInstant, optionalParams, parseIsoInstant, wholeNumber } from './params.ts';

// The tag of the company data (server/platform/http/openapi.ts declares the document's tags).
const TAGS = ['Funding rounds and investors'];

// Descriptions sit inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
const text = (description: string, example: string) => z.string().trim().min(1).max(200).meta({ description, example }).optional();
const usdBound = (description: string, example: number) => wholeNumber({ min: 0, max: Number.MAX_SAFE_INTEGER }).meta({ description, example }).optional();
const day = (description: string, example: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date YYYY-MM-DD', abort: true })
    .superRefine((s, ctx) => {
      const parsed = parseIsoInstant(s);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    })
    .meta({ description, example })
    .optional();

/** A database id parameter (a PostgreSQL integer). */
export const rowId = (description: string) => wholeNumber({ min: 1, max: 2_147_483_647 }).meta({ description, example: 1 });

/** Keyset paging: `limit` and the `cursor` a previous page answered with. */
export const keysetParams = (what: string) => ({
  limit: wholeNumber({ min: 1, max: 200 }).default(50).meta({ description: `${what} per page, 1 to 200, default 50`, example: 20 }),
  cursor: z
    .string()
    .min(1)
    .max(1000)
    .meta({ description: 'The nextCursor of the previous page (opaque; with the same sort); absent for the first page', example: 'WyItZGF0ZSIsIjIwMjYtMDMtMzEiLCJvcGVuYWk6MjAyNi0wMy0zMTp2ZW50dXJlLXJvdW5kIl0' })
    .optional(),
});
export const nextCursor = z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page' });

/** A round as GET /api/private-companies/{id}/rounds gives it, with its company's name and sourceId. */
export const roundWithCompany = round.extend({
  companyName: z.string().meta({ example: 'OpenAI' }),
  companySourceId: z.string().meta({ description: 'The company\'s sourceId (GET /api/private-companies/source/{sourceId})', example: 'openai' }),
});

export const fundingRoundsRouter = router({
  list: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/funding-rounds',
        tags: TAGS,
        summary: 'Funding rounds across companies, filtered, newest first, keyset-paged',
        description:
          'Every funding round of the dataset with its company\'s name and sourceId, filtered by any combination of the parameters (all must match; text filters are exact and case-insensitive, bounds inclusive; a partial round date such as 2025-03 counts as its first day), newest first (sort=date for oldest first; ties by id). Paged by cursor: pass the answer\'s nextCursor back for the next page; there is no total. With updatedSince it is a change feed of the rounds written since then. Billed at ten times the standard rate.',
      },
    })
    .input(
      optionalParams({
        from: day('Only rounds dated on or after this day (YYYY-MM-DD; a round dated 2025-03 counts as 2025-03-01)', '2025-01-01'),
        to: day('Only rounds dated on or before this day (YYYY-MM-DD)', '2025-12-31'),
        roundType: text('Exact round type, case-insensitive, as the rounds word it', 'Series B'),
        minAmount: usdBound('Inclusive lower bound on amountUsd (USD); rounds without an amount are left out', 100_000_000),
        maxAmount: usdBound('Inclusive upper bound on amountUsd (USD); rounds without an amount are left out', 10_000_000_000),
        investor: rowId('Only rounds naming this investor, lead or not (its id: GET /api/investors)').optional(),
        industry: text('Exact industry of the company, case-insensitive (GET /api/private-companies/industries)', 'Artificial Intelligence'),
        country: text('Exact headquarters country of the company, case-insensitive (GET /api/private-companies/countries)', 'United States'),
        companyId: rowId('Only this company\'s rounds').optional(),
        updatedSince: isoInstant({ description: 'Only rounds written at or after this instant (the change feed)' }).meta({ example: '2026-11-01' }).optional(),
        sort: z.enum(ROUND_SORTS).default('-date').meta({ description: 'By date: -date newest first (default), date oldest first; ties by id in the same direction', example: '-date' }),
        ...keysetParams('Rounds'),
      }, { ordered: [['minAmount', 'maxAmount'], ['from', 'to']], check: ({ cursor, sort }) => cursorProblem(cursor, sort, ROUND_CURSOR) }),
    )
    .output(z.object({ rounds: z.array(roundWithCompany), nextCursor, limit: z.number().int() }))
    .query(async ({ ctx, input }) => {
      const { sort, limit, cursor, ...filters } = input;
      const result = await listRounds(ctx.services.database.db, filters, { sort, limit, cursor });
      return { ...result, limit };
    }),
});

/**
 * The eight private-company routes (interface.md "Private companies", decisions §5), billed at the
 * private-company rate. Static paths (search, spacex, …) outrank /{id} by the route table's
 * specificity rule, whatever their order here.
 */
import { z } from 'zod';
import { companyRecordShape } from '../server/companies/record.ts';
import {
  companyById,
  companyBySourceId,
  companyStats,
  countries,
  industries,
  listCompanies,
  searchCompanies,
  SORT_FIELDS,
  type SortField,
} from '../server/companies/queries.ts';
import { companyDetail, condensedCompany } from '../server/companies/views.ts';
import { router } from '../server/trpc/init.ts';
import { companyDataProcedure } from '../server/procedures/base.ts';
import { isoInstant, isoString, noInput, optionalParams, wholeNumber } from './params.ts';

const TAGS = ['Private companies'];
const SPACEX_SOURCE_ID = 'spacex';

const condensed = z.object({
  id: z.number().int(),
  name: z.string(),
  industry: z.string().nullable(),
  valuationUsd: z.number().int().nullable(),
  totalFundingUsd: z.number().int().nullable(),
  employeeCount: z.number().int().nullable(),
  foundedYear: z.number().int().nullable(),
  headquarters: z.string().nullable().meta({ description: 'City, region, country (the non-empty ones)' }),
});

const detail = z.object({
  id: z.number().int(),
  ...companyRecordShape,
  extra: z.record(z.string(), z.unknown()),
  employeeCount: z.number().int().nullable(),
  headquarters: z.string().nullable(),
  createdAt: isoString(),
  updatedAt: isoString(),
});

const text = (description: string) => z.string().trim().min(1).max(200).optional().meta({ description });
const usdBound = (description: string) => wholeNumber({ min: 0, max: Number.MAX_SAFE_INTEGER }).optional().meta({ description });
const yearBound = (description: string) => wholeNumber({ min: 0, max: 9999 }).optional().meta({ description });
const employeeBound = (description: string) => wholeNumber({ min: 0, max: 100_000_000 }).optional().meta({ description });
const page = {
  limit: wholeNumber({ min: 1, max: 200 }).default(50).meta({ description: '1 to 200, default 50' }),
  offset: wholeNumber({ min: 0, max: 1_000_000_000 }).default(0).meta({ description: 'Rows to skip, default 0' }),
};
const SORTS = [...SORT_FIELDS, ...SORT_FIELDS.map((f) => `-${f}` as const)] as const;

const listOutput = z.object({ companies: z.array(condensed), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

export const privateCompaniesRouter = router({
  list: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies', tags: TAGS, summary: 'Filtered, paginated list of companies (condensed)' } })
    .input(
      optionalParams({
        industry: text('Exact industry, case-insensitive'),
        country: text('Exact headquarters country, case-insensitive'),
        backingType: text('Exact backing type, case-insensitive'),
        minValuation: usdBound('Inclusive lower bound on valuationUsd'),
        maxValuation: usdBound('Inclusive upper bound on valuationUsd'),
        minFunding: usdBound('Inclusive lower bound on totalFundingUsd'),
        maxFunding: usdBound('Inclusive upper bound on totalFundingUsd'),
        minFoundedYear: yearBound('Inclusive lower bound on foundedYear'),
        maxFoundedYear: yearBound('Inclusive upper bound on foundedYear'),
        minEmployees: employeeBound('Inclusive lower bound on employees'),
        maxEmployees: employeeBound('Inclusive upper bound on employees'),
        updatedSince: isoInstant({ description: 'Only companies updated at or after this instant' }).optional(),
        sort: z.enum(SORTS).optional().meta({ description: 'Sort field, `-` prefix for descending; default id' }),
        ...page,
      }),
    )
    .output(listOutput)
    .query(async ({ ctx, input }) => {
      const { limit, offset, sort, ...filters } = input;
      const descending = sort?.startsWith('-') ?? false;
      const field = sort?.replace(/^-/, '') as SortField | undefined;
      const { database, companyAggregates } = ctx.services;
      const result = await listCompanies(database.db, companyAggregates, filters, { field, descending }, { limit, offset });
      return { companies: result.rows.map(condensedCompany), total: result.total, limit, offset };
    }),

  search: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/search', tags: TAGS, summary: 'Search name and registeredName (exact, prefix, substring, then close spellings)' } })
    .input(z.strictObject({ q: z.string().trim().min(2).max(200).meta({ description: 'At least 2 characters' }), ...page }))
    .output(listOutput.extend({ query: z.string() }))
    .query(async ({ ctx, input }) => {
      const result = await searchCompanies(ctx.services.database.db, input.q, input);
      return { companies: result.rows.map(condensedCompany), total: result.total, limit: input.limit, offset: input.offset, query: input.q };
    }),

  spacex: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/spacex', tags: TAGS, summary: 'The latest SpaceX record', errorResponses: [404] } })
    .input(noInput())
    .output(detail)
    .query(async ({ ctx }) => companyDetail(await companyBySourceId(ctx.services.database.db, SPACEX_SOURCE_ID))),

  industries: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/industries', tags: TAGS, summary: 'Distinct industries, sorted' } })
    .input(noInput())
    .output(z.object({ industries: z.array(z.string()), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const { database, companyAggregates } = ctx.services;
      const values = await companyAggregates.get(database.db, 'industries', () => industries(database.db));
      return { industries: values, total: values.length };
    }),

  countries: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/countries', tags: TAGS, summary: 'Distinct headquarters countries, sorted' } })
    .input(noInput())
    .output(z.object({ countries: z.array(z.string()), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const { database, companyAggregates } = ctx.services;
      const values = await companyAggregates.get(database.db, 'countries', () => countries(database.db));
      return { countries: values, total: values.length };
    }),

  stats: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/stats', tags: TAGS, summary: 'Dataset aggregates (null and 0 ignored; averages rounded)' } })
    .input(noInput())
    .output(
      z.object({
        totalCompanies: z.number().int(),
        totalWithValuation: z.number().int(),
        totalWithFunding: z.number().int(),
        avgValuationUsd: z.number(),
        maxValuationUsd: z.number(),
        minValuationUsd: z.number(),
        avgTotalFundingUsd: z.number(),
        maxTotalFundingUsd: z.number(),
        totalFundingSum: z.number(),
        avgEmployees: z.number(),
        totalWithEmployees: z.number().int(),
        distinctIndustries: z.number().int(),
        distinctCountries: z.number().int(),
      }),
    )
    .query(({ ctx }) => ctx.services.companyAggregates.get(ctx.services.database.db, 'stats', () => companyStats(ctx.services.database.db))),

  bySourceId: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/source/{sourceId}', tags: TAGS, summary: 'One company by its external sourceId', errorResponses: [404] } })
    .input(z.strictObject({ sourceId: z.string().min(1).max(200) }))
    .output(detail)
    .query(async ({ ctx, input }) => companyDetail(await companyBySourceId(ctx.services.database.db, input.sourceId))),

  byId: companyDataProcedure
    .meta({ openapi: { method: 'GET', path: '/private-companies/{id}', tags: TAGS, summary: 'One company by its numeric id, with extra', errorResponses: [404] } })
    .input(z.strictObject({ id: wholeNumber({ min: 1, max: 2_147_483_647 }) }))
    .output(detail)
    .query(async ({ ctx, input }) => companyDetail(await companyById(ctx.services.database.db, input.id))),
});

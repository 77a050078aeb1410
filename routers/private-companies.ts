/**
 * The private-company routes (docs/api.md "Private companies", docs/decisions.md §5), billed at the
 * private-company rate. Static paths (search, spacex, …) outrank /{id} by the route table's
 * specificity rule, whatever their order here.
 */
import { z } from 'zod';
import { companyRecordShape } from '../server/companies/company-schema.ts';
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
import { condensedCompany } from '../server/companies/answers.ts';
import { companyDetailWithMarkets } from '../server/companies/markets.ts';
import { roundsOf, valuationsOf } from '../server/companies/history.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { companyDataProcedure } from '../server/platform/procedures/base.ts';
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

const market = z.object({
  eventId: z.string().meta({ description: 'The valuation event (GET /api/trading/events; the eventSlug of GET /api/trading/valuation)', example: 'kraken-ipo' }),
  status: z.enum(['open', 'closed', 'resolved', 'voided']).meta({ description: 'The event\'s status, as GET /api/trading/events gives it' }),
  impliedValuation: z.number().nullable().meta({ description: 'Billions of USD, as GET /api/trading/valuation/all gives it; null when it cannot be computed (no prices)' }),
  longCost: z.number().nullable().meta({ description: 'USD per $1 of LONG exposure at the default floors, as GET /api/trading/valuation/all gives it; null when the event has no prices' }),
  shortCost: z.number().nullable().meta({ description: 'USD per $1 of SHORT exposure at the default floors; null when the event has no prices' }),
  updatedAt: isoString().nullable().meta({ description: 'When these values were read from the venue (the market-data snapshot); null when the venue did not answer' }),
});

const detail = z.object({
  id: z.number().int(),
  ...companyRecordShape,
  extra: z.record(z.string(), z.unknown()),
  employeeCount: z.number().int().nullable(),
  headquarters: z.string().nullable(),
  createdAt: isoString(),
  updatedAt: isoString(),
  markets: z.array(market).meta({ description: 'One per listed valuation event linked to the company, by event id; empty when there is none. Live market data: each read reflects the current snapshot' }),
});

// Descriptions sit inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
const text = (description: string, example: string) => z.string().trim().min(1).max(200).meta({ description, example }).optional();
const usdBound = (description: string, example: number) => wholeNumber({ min: 0, max: Number.MAX_SAFE_INTEGER }).meta({ description, example }).optional();
const yearBound = (description: string, example: number) => wholeNumber({ min: 0, max: 9999 }).meta({ description, example }).optional();
const employeeBound = (description: string, example: number) => wholeNumber({ min: 0, max: 100_000_000 }).meta({ description, example }).optional();
const page = {
  limit: wholeNumber({ min: 1, max: 200 }).default(50).meta({ description: 'Companies per page, 1 to 200, default 50', example: 20 }),
  offset: wholeNumber({ min: 0, max: 1_000_000_000 }).default(0).meta({ description: 'Rows to skip, default 0', example: 0 }),
};
const SORTS = [...SORT_FIELDS, ...SORT_FIELDS.map((f) => `-${f}` as const)] as const;

const source = z
  .object({
    id: z.string().meta({ description: 'The dataset the figure comes from (`curated`: the service\'s curated records)', example: 'curated' }),
    url: z.string().nullable().meta({ description: 'The public page the figure was taken from; null when the record names none', example: 'https://en.wikipedia.org/wiki/OpenAI' }),
    asOf: z.string().meta({ description: 'The date the figure holds for (YYYY, YYYY-MM or YYYY-MM-DD)', example: '2026-03-31' }),
  })
  .meta({ description: 'Where a figure comes from and the date it holds for' });
const usdOrNull = (description: string) => z.number().int().nullable().meta({ description });

const round = z.object({
  id: z.string().meta({ description: 'Stable: the company\'s sourceId, the date and the round type', example: 'openai:2026-03-31:venture-round' }),
  companyId: z.number().int(),
  date: z.string().meta({ description: 'YYYY-MM-DD or YYYY-MM', example: '2026-03-31' }),
  roundType: z.string().nullable().meta({ description: 'As the source words it (Series C, Tender offer (secondary), IPO, …)', example: 'Venture Round' }),
  amountUsd: usdOrNull('Raised, in USD; null when not reported'),
  preMoneyValuationUsd: usdOrNull('Pre-money valuation in USD, where reported'),
  postMoneyValuationUsd: usdOrNull('Post-money valuation in USD, where reported'),
  pricePerShareUsd: z.number().nullable().meta({ description: 'Price per share in USD, where reported' }),
  leadInvestors: z.array(z.string()).meta({ description: 'Lead investors of this round, where the source names them per round (else empty)' }),
  investors: z.array(z.string()).meta({ description: 'Investors of this round, where the source names them per round (else empty; the company\'s key investors are in its record\'s extra.keyInvestors)' }),
  source,
});

const valuation = z.object({
  date: z.string().meta({ description: 'YYYY-MM-DD or YYYY-MM', example: '2026-03-31' }),
  valuationUsd: z.number().int(),
  basis: z
    .enum(['primary', 'secondary', 'tender', 'ipo', 'merger', 'reported'])
    .meta({ description: 'How it was set: a primary round, a secondary sale, a tender offer, an IPO, a merger, or reported without a stated basis (the record\'s current valuation when no round states it)' }),
  roundId: z.string().nullable().meta({ description: 'The round it comes from (GET /api/private-companies/{id}/rounds); null for a reported valuation' }),
  source,
});

const companyId = z.strictObject({ id: wholeNumber({ min: 1, max: 2_147_483_647 }).meta({ description: 'The company\'s id (from the list or a search)', example: 1 }) });

const listOutput = z.object({ companies: z.array(condensed), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

export const privateCompaniesRouter = router({
  list: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies',
        tags: TAGS,
        summary: 'Filtered, paginated list of companies (condensed)',
        description:
          'Companies of the curated dataset, condensed (id, name, industry, valuation, funding, employees, founding year, headquarters), filtered by any combination of the parameters (all must match; text filters are exact and case-insensitive, bounds inclusive; hasMarket keeps the companies with, or without, a listed valuation event), sorted and paged; total counts the whole filtered set. Billed at ten times the standard rate.',
      },
    })
    .input(
      optionalParams({
        industry: text('Exact industry, case-insensitive (GET /api/private-companies/industries lists them)', 'Artificial Intelligence'),
        country: text('Exact headquarters country, case-insensitive (GET /api/private-companies/countries lists them)', 'United States'),
        backingType: text('Exact backing type, case-insensitive (e.g. Venture Capital, Corporate, Founder-owned)', 'Venture Capital'),
        minValuation: usdBound('Inclusive lower bound on valuationUsd (USD)', 10_000_000_000),
        maxValuation: usdBound('Inclusive upper bound on valuationUsd (USD)', 500_000_000_000),
        minFunding: usdBound('Inclusive lower bound on totalFundingUsd (USD)', 1_000_000_000),
        maxFunding: usdBound('Inclusive upper bound on totalFundingUsd (USD)', 50_000_000_000),
        minFoundedYear: yearBound('Inclusive lower bound on foundedYear', 2015),
        maxFoundedYear: yearBound('Inclusive upper bound on foundedYear', 2022),
        minEmployees: employeeBound('Inclusive lower bound on employees', 100),
        maxEmployees: employeeBound('Inclusive upper bound on employees', 5000),
        updatedSince: isoInstant({ description: 'Only companies updated at or after this instant' }).meta({ example: '2026-11-01' }).optional(),
        hasMarket: z
          // A boolean on tRPC, its text on REST (a query string has no booleans); one pipe, so the OpenAPI generator takes it as a query parameter.
          .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
          .transform((v) => v === true || v === 'true')
          .meta({ description: 'true: only companies with a listed valuation event (their detail\'s markets is not empty); false: only those without', example: true })
          .optional(),
        sort: z.enum(SORTS).meta({ description: 'Sort field, `-` prefix for descending; default id', example: '-valuationUsd' }).optional(),
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
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/search',
        tags: TAGS,
        summary: 'Search name and registeredName (exact, prefix, substring, then close spellings)',
        description:
          'Companies whose name or registered name matches q, best first: exact matches, then prefixes, then substrings, then close spellings (a typo still finds the company). Condensed like the list, paged with limit and offset. Billed at ten times the standard rate.',
      },
    })
    .input(z.strictObject({ q: z.string().trim().min(2).max(200).meta({ description: 'The name to look for, at least 2 characters', example: 'anthropic' }), ...page }))
    .output(listOutput.extend({ query: z.string() }))
    .query(async ({ ctx, input }) => {
      const result = await searchCompanies(ctx.services.database.db, input.q, input);
      return { companies: result.rows.map(condensedCompany), total: result.total, limit: input.limit, offset: input.offset, query: input.q };
    }),

  spacex: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/spacex',
        tags: TAGS,
        summary: 'The latest SpaceX record',
        description: 'The full record of SpaceX (sourceId spacex) with its markets, as GET /api/private-companies/source/spacex answers it. Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(noInput())
    .output(detail)
    .query(async ({ ctx }) => {
      const { database, marketData } = ctx.services;
      return companyDetailWithMarkets(database.db, marketData, await companyBySourceId(database.db, SPACEX_SOURCE_ID));
    }),

  industries: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/industries',
        tags: TAGS,
        summary: 'Distinct industries, sorted',
        description: 'Every industry of the dataset, sorted, and how many there are: the values the list\'s industry filter accepts. Billed at ten times the standard rate.',
      },
    })
    .input(noInput())
    .output(z.object({ industries: z.array(z.string()), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const { database, companyAggregates } = ctx.services;
      const values = await companyAggregates.get(database.db, 'industries', () => industries(database.db));
      return { industries: values, total: values.length };
    }),

  countries: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/countries',
        tags: TAGS,
        summary: 'Distinct headquarters countries, sorted',
        description: 'Every headquarters country of the dataset, sorted, and how many there are: the values the list\'s country filter accepts. Billed at ten times the standard rate.',
      },
    })
    .input(noInput())
    .output(z.object({ countries: z.array(z.string()), total: z.number().int() }))
    .query(async ({ ctx }) => {
      const { database, companyAggregates } = ctx.services;
      const values = await companyAggregates.get(database.db, 'countries', () => countries(database.db));
      return { countries: values, total: values.length };
    }),

  stats: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/stats',
        tags: TAGS,
        summary: 'Dataset aggregates (null and 0 ignored; averages rounded)',
        description:
          'Counts, averages, extremes and sums over the whole dataset: companies, those with a valuation, funding and employee count, average, largest and smallest valuation, funding totals, and distinct industries and countries. Unknown (null) and 0 values are left out; averages are rounded. Billed at ten times the standard rate.',
      },
    })
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
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/source/{sourceId}',
        tags: TAGS,
        summary: 'One company by its external sourceId',
        description: 'The full record of the company with this sourceId (the stable id of the source it was imported from, e.g. its slug), with extra and its markets (the listed valuation events linked to it, priced from the current market data). Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ sourceId: z.string().min(1).max(200).meta({ description: 'The company\'s sourceId (its slug in the source dataset)', example: 'openai' }) }))
    .output(detail)
    .query(async ({ ctx, input }) => {
      const { database, marketData } = ctx.services;
      return companyDetailWithMarkets(database.db, marketData, await companyBySourceId(database.db, input.sourceId));
    }),

  rounds: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}/rounds',
        tags: TAGS,
        summary: "One company's funding rounds, oldest first, each with its source",
        description:
          'Every funding round of the company the record holds, oldest first: date, round type, amount, pre- and post-money valuation and price per share where reported, investors where the source names them per round, and the source and date of each. Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(companyId)
    .output(z.object({ companyId: z.number().int(), rounds: z.array(round) }))
    .query(async ({ ctx, input }) => {
      const company = await companyById(ctx.services.database.db, input.id);
      return { companyId: company.id, rounds: roundsOf(company) };
    }),

  valuations: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}/valuations',
        tags: TAGS,
        summary: "One company's valuation history, oldest first, each with its basis and source",
        description:
          'Every dated valuation of the company: each round\'s post-money valuation (its basis read from the round: primary, secondary, tender, IPO, merger) and the record\'s current valuation when no round states it (basis reported), oldest first, each with its source and date. Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(companyId)
    .output(z.object({ companyId: z.number().int(), valuations: z.array(valuation) }))
    .query(async ({ ctx, input }) => {
      const company = await companyById(ctx.services.database.db, input.id);
      return { companyId: company.id, valuations: valuationsOf(company) };
    }),

  byId: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}',
        tags: TAGS,
        summary: 'One company by its numeric id, with extra',
        description: 'The full record of one company: every field of the dataset, the source\'s extra fields, headquarters, timestamps, and its markets (the listed valuation events linked to it, with the implied valuation and LONG and SHORT costs of the current market data). Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(companyId)
    .output(detail)
    .query(async ({ ctx, input }) => {
      const { database, marketData } = ctx.services;
      return companyDetailWithMarkets(database.db, marketData, await companyById(database.db, input.id));
    }),
});

/**
 * The private-company routes (docs/api.md "Private companies", docs/decisions.md §5), billed at the
 * private-company rate. Static paths (search, spacex, …) outrank /{id} by the route table's
 * specificity rule, whatever their order here.
 */
import { z } from 'zod';
import { companyRecordShape, VALUATION_BASES } from '../server/companies/company-schema.ts';
import {
  companyById,
  companyBySourceId,
  companyStats,
  countries,
  industries,
  listCompanies,
  RANGE_PARAMETERS,
  searchCompanies,
  SORT_FIELDS,
  type SortField,
} from '../server/companies/queries.ts';
import { condensedCompany } from '../server/companies/answers.ts';
import { companyDetailAnswer } from '../server/companies/detail.ts';
import { roundsOf, valuationsOf } from '../server/companies/history.ts';
import { roundIdsWrittenSince } from '../server/companies/round-queries.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import type { Services } from '../server/platform/services.ts';
import { companyDataProcedure } from '../server/platform/procedures/base.ts';
import { figureSource as source, round } from './company-shapes.ts';
import { isoInstant, isoString, noInput, optionalParams, parseIsoInstant, wholeNumber, queryBoolean } from './params.ts';

const TAGS = ['Private companies'];

/** What asOf means on the detail routes (server/companies/point-in-time.ts). */
const POINT_IN_TIME =
  'Point in time: with asOf=YYYY-MM-DD the record is given as it stood on that day, in valid time: the facts dated on or before the day, as the record holds them now (not an earlier version of the dataset), and its undated identity facts (name, aliases, website, headquarters, people, products, financial figures, status) as they are now. ' +
  'A date given only to the month or year counts from its first day (a round of 2025-03 is known on 2025-03-01). ' +
  'Rounds, valuationHistory entries and acquisitions dated after the day are left out; ' +
  'valuationUsd and valuationAsOf are the latest valuation known on the day (GET /api/private-companies/{id}/valuations: a round\'s post-money, a reported figure, or the current valuation if dated on or before the day), null when none is, and the step-up fields are null unless that is the current valuation; ' +
  'when a round is left out, lastFundingDate, lastFundingRoundType and lastFundingAmountUsd are the last remaining round\'s, lastFundingRoundNumber its position if every round is listed, the other lastFunding* fields null, and totalFundingRounds and totalFundingUsd null unless the record lists every round (and, for the amount, every amount): then they are recounted; ' +
  'employees and employeesAsOf are null if the head count is dated after the day, and ipoDate (with listingStatus and companyType when they describe the listing) if the listing came after it. ' +
  'sources names where each remaining figure comes from, and asOf echoes the day. ' +
  'A company founded in a later year is 404 (it did not exist yet); ' +
  'a day that is not a real calendar date from 1970-01-01 to 9999-12-31 is 400. ' +
  'markets are always the current ones.';

const SPACEX_SOURCE_ID = 'spacex';

/** An answer kept under the dataset version the request's admission read (server/companies/aggregate-cache.ts). */
const kept = <T extends object>(ctx: { services: Services; datasetVersion?: number }, key: string, compute: () => Promise<T>) =>
  ctx.services.companyCache.answer(ctx.services.database.db, key, compute, ctx.datasetVersion);

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

// The detail answers every record field but provenance, which it answers per field (`sources`).
const { provenance: _provenance, ...detailRecordShape } = companyRecordShape;

const detail = z.object({
  id: z.number().int(),
  ...detailRecordShape,
  extra: z.record(z.string(), z.unknown()),
  employeeCount: z.number().int().nullable(),
  headquarters: z.string().nullable(),
  createdAt: isoString(),
  updatedAt: isoString(),
  markets: z.array(market).meta({ description: 'One per listed valuation event linked to the company, by event id; empty when there is none. Live market data: each read reflects the current snapshot' }),
  sources: z.record(z.string(), source).meta({
    description:
      'Where each known field comes from, by field name: source id (data/sources/<id>; `curated`: the service\'s hand-checked records, `import`: a file an operator imported), its page for the company, and the date the figure holds for (a valuation\'s, a head count\'s or a round\'s own date, else the date the source holds for). Nothing without a source is shown; fields that are null or an empty list have no entry, nor does sourceId',
    example: { valuationUsd: { id: 'curated', url: 'https://en.wikipedia.org/wiki/OpenAI', asOf: '2026-03-31' } },
  }),
  asOf: z.string().nullable().meta({ description: 'The day the record is given as of (the asOf parameter), or null for the record as it is now', example: null }),
});

const valuation = z.object({
  date: z.string().meta({ description: 'YYYY-MM-DD or YYYY-MM', example: '2026-03-31' }),
  valuationUsd: z.number().int(),
  basis: z
    .enum(VALUATION_BASES)
    .meta({ description: 'How it was set: a primary round, a secondary sale, a tender offer, an IPO, a merger, reported without a stated basis (a list\'s or the press\'s figure; the record\'s current valuation when no round states it), or an estimate its source calls one' }),
  roundId: z.string().nullable().meta({ description: 'The round it comes from (GET /api/private-companies/{id}/rounds); null for a reported valuation' }),
  source,
});

const companyId = z.strictObject({ id: wholeNumber({ min: 1, max: 2_147_483_647 }).meta({ description: 'The company\'s id (from the list or a search)', example: 1 }) });

/** The day a detail is asked as of: a calendar date, checked by the one date parser (routers/params.ts). */
const asOfDay = () =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a calendar date YYYY-MM-DD, e.g. 2024-06-30', abort: true })
    .superRefine((value, ctx) => {
      const parsed = parseIsoInstant(value);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
    })
    .meta({
      description:
        'The record as it stood on this day (YYYY-MM-DD), from its dated facts: rounds, valuations and acquisitions dated after it are left out (a date given only to the month or year counts from its first day), the valuation is the latest known on the day (null when none is), the last-round and total-funding figures are those of the rounds known then (null where they cannot be recounted exactly), a head count or listing dated after the day is null. Undated facts (name, people, products, financial figures) are given as they are now. A company founded after the day\'s year is 404',
      example: '2024-06-30',
    })
    .optional();

const companyDetailInput = z.strictObject({ id: companyId.shape.id, asOf: asOfDay() });

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
          'Companies of the dataset, condensed (id, name, industry, valuation, funding, employees, founding year, headquarters), filtered by any combination of the parameters (all must match; text filters are exact and case-insensitive, bounds inclusive; hasMarket keeps the companies with, or without, a listed valuation event), sorted and paged; total counts the whole filtered set. Billed at ten times the standard rate.',
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
        hasMarket: queryBoolean('true: only companies with a listed valuation event (their detail\'s markets is not empty); false: only those without', true),
        sort: z.enum(SORTS).meta({ description: 'Sort field, `-` prefix for descending; default id', example: '-valuationUsd' }).optional(),
        ...page,
      }, { ordered: RANGE_PARAMETERS }),
    )
    .output(listOutput)
    .query(async ({ ctx, input }) => {
      const { limit, offset, sort, ...filters } = input;
      const descending = sort?.startsWith('-') ?? false;
      const field = sort?.replace(/^-/, '') as SortField | undefined;
      const { database, companyCache } = ctx.services;
      const page = async () => {
        const result = await listCompanies(database.db, { cache: companyCache, version: ctx.datasetVersion }, filters, { field, descending }, { limit, offset });
        return { companies: result.rows.map(condensedCompany), total: result.total, limit, offset };
      };
      // hasMarket follows event listings, which the dataset version does not.
      return filters.hasMarket === undefined ? kept(ctx, `list:${JSON.stringify(input)}`, page) : page();
    }),

  search: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/search',
        tags: TAGS,
        summary: 'Search names, registered names, aliases and web domains (exact, prefix, substring, then close spellings)',
        description:
          'Companies one of whose names matches q: the name, the registered name, an alias (a former or other name) or the web domain (stripe.com; a URL or www. host is searched as its domain), with case and accents ignored (zurich finds Zürich). One row per company, at its best match, best first: exact matches, then prefixes, then substrings, each tier by the kind of name matched (name, registered name, alias, domain) and then by name; then up to 100 close spellings (a typo still finds the company), closest first. total counts the direct matches and the close spellings. Condensed like the list, paged with limit and offset. Billed at ten times the standard rate.',
      },
    })
    .input(z.strictObject({ q: z.string().trim().min(2).max(200).meta({ description: 'The name, registered name, former name or web domain to look for, at least 2 characters; case and accents are ignored', example: 'anthropic' }), ...page }))
    .output(listOutput.extend({ query: z.string() }))
    .query(({ ctx, input }) =>
      kept(ctx, `search:${JSON.stringify(input)}`, async () => {
        const result = await searchCompanies(ctx.services.database.db, input.q, input);
        return { companies: result.rows.map(condensedCompany), total: result.total, limit: input.limit, offset: input.offset, query: input.q };
      }),
    ),

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
      const { database, marketData, companyCache } = ctx.services;
      return companyDetailAnswer({ db: database.db, marketData, cache: companyCache }, ctx.datasetVersion, { sourceId: SPACEX_SOURCE_ID }, undefined);
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
      const { database, companyCache } = ctx.services;
      return companyCache.aggregate(database.db, 'industries', async () => {
        const values = await industries(database.db);
        return { industries: values, total: values.length };
      }, ctx.datasetVersion);
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
      const { database, companyCache } = ctx.services;
      return companyCache.aggregate(database.db, 'countries', async () => {
        const values = await countries(database.db);
        return { countries: values, total: values.length };
      }, ctx.datasetVersion);
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
    .query(({ ctx }) => ctx.services.companyCache.aggregate(ctx.services.database.db, 'stats', () => companyStats(ctx.services.database.db), ctx.datasetVersion)),

  bySourceId: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/source/{sourceId}',
        tags: TAGS,
        summary: 'One company by its external sourceId',
        description:
          'The full record of the company with this sourceId (the stable id of the source it was imported from, e.g. its slug), with extra, sources (where each known field comes from) and its markets (the listed valuation events linked to it, priced from the current market data). ' +
          POINT_IN_TIME +
          ' Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject({ sourceId: z.string().min(1).max(200).meta({ description: 'The company\'s sourceId (its slug in the source dataset)', example: 'openai' }), asOf: asOfDay() }))
    .output(detail)
    .query(async ({ ctx, input }) => {
      const { database, marketData, companyCache } = ctx.services;
      return companyDetailAnswer({ db: database.db, marketData, cache: companyCache }, ctx.datasetVersion, { sourceId: input.sourceId }, input.asOf);
    }),

  rounds: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}/rounds',
        tags: TAGS,
        summary: "One company's funding rounds, oldest first, each with its source",
        description:
          'Every funding round of the company the record holds, oldest first: date, round type, amount, pre- and post-money valuation and price per share where reported, investors where the source names them per round, and the source and date of each. With updatedSince, only the rounds written at or after that instant (a company\'s rounds are rewritten when its record changes: the change feed of GET /api/funding-rounds, for one company). Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(
      z.strictObject({
        id: companyId.shape.id,
        updatedSince: isoInstant({ description: 'Only rounds written at or after this instant (the change feed)' }).meta({ example: '2026-11-01' }).optional(),
      }),
    )
    .output(z.object({ companyId: z.number().int(), rounds: z.array(round) }))
    .query(({ ctx, input }) =>
      kept(ctx, `rounds:${JSON.stringify(input)}`, async () => {
        const { db } = ctx.services.database;
        const company = await companyById(db, input.id);
        const rounds = roundsOf(company);
        if (!input.updatedSince) return { companyId: company.id, rounds };
        const written = await roundIdsWrittenSince(db, company.id, input.updatedSince);
        return { companyId: company.id, rounds: rounds.filter((r) => written.has(r.id)) };
      }),
    ),

  valuations: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}/valuations',
        tags: TAGS,
        summary: "One company's valuation history, oldest first, each with its basis and source",
        description:
          'Every dated valuation of the company: each round\'s post-money valuation (its basis read from the round: primary, secondary, tender, IPO, merger), the dated figures sources report outside rounds (with the basis the source gives), and the record\'s current valuation when nothing else states it (basis reported), oldest first, each with its source and date. Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(companyId)
    .output(z.object({ companyId: z.number().int(), valuations: z.array(valuation) }))
    .query(({ ctx, input }) =>
      kept(ctx, `valuations:${input.id}`, async () => {
        const company = await companyById(ctx.services.database.db, input.id);
        return { companyId: company.id, valuations: valuationsOf(company) };
      }),
    ),

  byId: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/private-companies/{id}',
        tags: TAGS,
        summary: 'One company by its numeric id, with extra',
        description:
          'The full record of one company: every field of the dataset, the source\'s extra fields, headquarters, timestamps, sources (where each known field comes from: source id, its page and the date the figure holds for) and its markets (the listed valuation events linked to it, with the implied valuation and LONG and SHORT costs of the current market data). ' +
          POINT_IN_TIME +
          ' Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(companyDetailInput)
    .output(detail)
    .query(async ({ ctx, input }) => {
      const { database, marketData, companyCache } = ctx.services;
      return companyDetailAnswer({ db: database.db, marketData, cache: companyCache }, ctx.datasetVersion, { id: input.id }, input.asOf);
    }),
});

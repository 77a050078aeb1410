/**
 * Investors and their portfolios (docs/api.md "Funding rounds and investors"), billed at the
 * private-company rate like the company routes; lists are keyset-paged like GET /api/funding-rounds.
 */
import { z } from 'zod';
import { INVESTOR_SORTS, investorById, investorCursor, investorPortfolio, listInvestors, PORTFOLIO_CURSOR } from '../server/companies/investor-queries.ts';
import { cursorProblem } from '../server/lib/keyset-cursor.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { companyDataProcedure } from '../server/platform/procedures/base.ts';
import { keysetParams, nextCursor, roundWithCompany, rowId } from './funding-rounds.ts';
import { optionalParams, withRules } from './params.ts';

// The tag of the company data (server/platform/http/openapi.ts declares the document's tags).
const TAGS = ['Funding rounds and investors'];

// Descriptions sit inside optional(): the OpenAPI generator documents an optional query parameter by its inner schema.
const text = (description: string, example: string) => z.string().trim().min(1).max(200).meta({ description, example }).optional();

const investor = z.object({
  id: z.number().int(),
  name: z.string().meta({ example: 'Sequoia Capital' }),
  type: z.string().nullable().meta({ description: 'vc, corporate, angel, government, pe, accelerator, …; null when no source says', example: 'vc' }),
  country: z.string().nullable().meta({ example: 'United States' }),
  website: z.string().nullable().meta({ example: 'https://www.sequoiacap.com' }),
  portfolioCount: z.number().int().meta({ description: 'Companies linked to the investor: a round naming it, or its listing among the company\'s key investors' }),
  source: z
    .object({
      id: z.string().meta({ description: 'The dataset the facts come from', example: 'investors' }),
      url: z.string().nullable().meta({ description: 'The public page the facts were read from' }),
      asOf: z.string().meta({ description: 'The date the facts hold for', example: '2026-11-28' }),
    })
    .nullable()
    .meta({ description: 'Where type, country and website come from; null for an investor known only by name' }),
});

const portfolioCompany = z.object({
  companyId: z.number().int(),
  name: z.string(),
  industry: z.string().nullable(),
  headquartersCountry: z.string().nullable(),
  firstDate: z.string().nullable().meta({ description: 'The earliest dated round naming the investor (YYYY, YYYY-MM or YYYY-MM-DD); null when it is only listed among the key investors' }),
  led: z.boolean().meta({ description: 'Whether the investor led any of the company\'s rounds' }),
});

const investorId = { id: rowId('The investor\'s id (from GET /api/investors)') };

export const investorsRouter = router({
  list: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/investors',
        tags: TAGS,
        summary: 'Investors, filtered, most portfolio companies first, keyset-paged',
        description:
          'Every investor the dataset names (in a round or among a company\'s key investors), filtered by any combination of the parameters (all must match), most portfolio companies first (sort=name for by name; ties by id). Paged by cursor: pass the answer\'s nextCursor back for the next page; there is no total. Billed at ten times the standard rate.',
      },
    })
    .input(
      optionalParams({
        q: text('Name contains this text, case-insensitive', 'sequoia'),
        type: text('Exact type, case-insensitive (vc, corporate, angel, government, pe, accelerator, …)', 'vc'),
        country: text('Exact country, case-insensitive', 'United States'),
        sort: z.enum(INVESTOR_SORTS).default('-portfolioCount').meta({ description: '-portfolioCount most companies first (default), or name; ties by id', example: '-portfolioCount' }),
        ...keysetParams('Investors'),
      }, { check: ({ cursor, sort }) => cursorProblem(cursor, sort, investorCursor(sort)) }),
    )
    .output(z.object({ investors: z.array(investor), nextCursor, limit: z.number().int() }))
    .query(async ({ ctx, input }) => {
      const { sort, limit, cursor, ...filters } = input;
      return { ...(await listInvestors(ctx.services.database.db, filters, { sort, limit, cursor })), limit };
    }),

  portfolio: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/investors/{id}/portfolio',
        tags: TAGS,
        summary: "One investor's portfolio companies, by name, keyset-paged",
        description:
          'The companies linked to the investor (a round naming it, or its listing among the company\'s key investors), by company name then id, each with the date of its first round with the investor and whether it led one. Paged by cursor; there is no total (the investor\'s portfolioCount is one). Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(withRules(z.strictObject({ ...investorId, ...keysetParams('Companies') }), { check: ({ cursor }) => cursorProblem(cursor, 'name', PORTFOLIO_CURSOR) }))
    .output(z.object({ investorId: z.number().int(), companies: z.array(portfolioCompany), nextCursor, limit: z.number().int() }))
    .query(async ({ ctx, input }) => {
      const result = await investorPortfolio(ctx.services.database.db, input.id, input);
      return { investorId: input.id, ...result, limit: input.limit };
    }),

  byId: companyDataProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/investors/{id}',
        tags: TAGS,
        summary: 'One investor, with its latest rounds',
        description: 'One investor and its 10 latest rounds, newest first (the rest: GET /api/funding-rounds?investor={id}). Billed at ten times the standard rate.',
        errorResponses: [404],
      },
    })
    .input(z.strictObject(investorId))
    .output(investor.extend({ recentRounds: z.array(roundWithCompany) }))
    .query(({ ctx, input }) => investorById(ctx.services.database.db, input.id)),
});

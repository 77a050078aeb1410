/**
 * The company import on a running server (server/companies/import.ts): what `npm run import:companies`
 * calls while a server holds the embedded database. For operators; never billed.
 */
import { z } from 'zod';
import { IMPORT_BATCH_MAX, importBatch, investorFactRow } from '../server/companies/import.ts';
import { dashboardProcedure } from '../server/platform/procedures/base.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { wholeNumber } from './params.ts';

export const companyImportRouter = router({
  import: dashboardProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/private-companies/import',
        tags: ['Operations'],
        summary: 'Upsert company records and investor facts on the server that runs (what npm run import:companies calls when the server holds the embedded database)',
        description:
          `For operators (a dashboard key, and x-account-id naming the operator's own account). Company records in the import format of data/FORMAT.md, upserted by sourceId, and investor facts as seeds/investors.json states them, upserted by name; at most ${IMPORT_BATCH_MAX} of each per call. ` +
          'All or nothing: one invalid record and nothing is written (a 400 naming its line, counted from firstLine, its field and the reason). Every write is an upsert, so a call repeated changes nothing; the dataset version moves when a record changed, so cached lists and stats follow at once. ' +
          'The command validates a whole file before its first call and sends it in calls of this size, each its own short transaction, so requests keep being answered while a large file goes in.',
        errorResponses: [400],
      },
    })
    .input(
      z.strictObject({
        companies: z.array(z.unknown()).max(IMPORT_BATCH_MAX).default([]).meta({
          description: 'Company records (data/FORMAT.md), checked as the import checks them',
          example: [{ sourceId: 'acme-robotics', name: 'Acme Robotics', industry: 'Robotics', valuationUsd: 1_200_000_000, valuationAsOf: '2026-11-30', referenceUrl: 'https://acme.example/press/series-c' }],
        }),
        investors: z.array(investorFactRow).max(IMPORT_BATCH_MAX).default([]).meta({
          description: 'Investor facts (name, type, country, website, aliases, the page they come from and its date)',
          example: [{ name: 'Acme Ventures', type: 'vc', country: 'United States', website: 'https://ventures.acme.example', url: 'https://ventures.acme.example/about', asOf: '2026-11-30' }],
        }),
        file: z.string().trim().min(1).max(200).default('request').meta({ description: 'The file the records come from, to name it in problems', example: 'companies.json' }),
        firstLine: wholeNumber({ min: 1, max: 100_000_000 }).default(1).meta({ description: 'The line (row) number of the first record in its file', example: 1 }),
      }),
    )
    .output(
      z.object({
        added: z.number().int().meta({ description: 'Companies new to the dataset' }),
        updated: z.number().int().meta({ description: 'Companies whose record changed' }),
        unchanged: z.number().int().meta({ description: 'Companies already identical' }),
        investors: z.number().int().meta({ description: 'Investor facts written (or already identical)' }),
      }),
    )
    .mutation(({ ctx, input }) => importBatch(ctx.services.database.db, input)),
});

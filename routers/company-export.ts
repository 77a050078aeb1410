/**
 * The company export (docs/api.md "Private companies"): GET /api/private-companies/export, every
 * company the list's filters match as its full detail record (without markets), in id order,
 * streamed as NDJSON or CSV (server/companies/export.ts). Billed per started thousand rows at the
 * private-company rate, counted and reserved before the first byte (the meta's `units`), kept as the
 * rows are written (server/accounts/unit-charges.ts); a file has no tRPC form
 * (server/platform/procedures/streamed-file.ts).
 */
import type { inferProcedureInput } from '@trpc/server';
import { z } from 'zod';
import { countExport, EXPORT_FORMATS, exportFile, exportUnits, ROWS_PER_UNIT, type ExportFormat } from '../server/companies/export.ts';
import { RANGE_PARAMETERS, type ListFilters } from '../server/companies/queries.ts';
import { UnitsAsWritten } from '../server/accounts/unit-charges.ts';
import { errorMessage } from '../server/lib/error-message.ts';
import { companyDataProcedure } from '../server/platform/procedures/base.ts';
import { definitionOf } from '../server/platform/procedures/definition.ts';
import type { Units } from '../server/platform/procedures/meta.ts';
import { refuseUnlessRest, StreamedFile, streamedFileOutput } from '../server/platform/procedures/streamed-file.ts';
import { router } from '../server/platform/procedures/trpc.ts';
import { optionalParams, wholeNumber } from './params.ts';
import { privateCompaniesRouter } from './private-companies.ts';

const PATH = '/private-companies/export';
const ROUTE = `GET /api${PATH}`;

/** The list's filters: the same parameters, descriptions and rules as GET /api/private-companies. */
const FILTERS = ['industry', 'country', 'backingType', 'minValuation', 'maxValuation', 'minFunding', 'maxFunding', 'minFoundedYear', 'maxFoundedYear', 'minEmployees', 'maxEmployees', 'updatedSince', 'hasMarket'] as const satisfies ReadonlyArray<keyof ListFilters>;

type Filter = (typeof FILTERS)[number];

/** The list's schemas of those parameters, read from its procedure's definition (optionalParams: a strict object, prefaulted to {}). */
function listFilterShape(): Record<Filter, z.ZodType> {
  const input = definitionOf(privateCompaniesRouter.list)?.input;
  const object = input instanceof z.ZodPrefault ? input.unwrap() : input;
  if (!(object instanceof z.ZodObject)) throw new Error('company export: the list route\'s input is not an object of parameters');
  const shape = object.shape as Record<string, z.ZodType>;
  for (const name of FILTERS) if (!shape[name]) throw new Error(`company export: the list route has no ${name} filter`);
  return Object.fromEntries(FILTERS.map((name) => [name, shape[name]!])) as Record<Filter, z.ZodType>;
}

/** The input as a caller sends it (the list's own parameter types, as tRPC infers them), and as the handler gets it. */
type SentInput = Partial<Pick<Exclude<inferProcedureInput<typeof privateCompaniesRouter.list>, void | undefined>, Filter>> & { format?: ExportFormat; afterId?: number };
type ExportInput = { format: ExportFormat; afterId?: number } & ListFilters;

const input = optionalParams(
  {
    format: z.enum(EXPORT_FORMATS).default('ndjson').meta({ description: 'ndjson (default): one JSON object per line; csv: a header row of the field names, then one row per company (lists and objects as JSON text), RFC 4180', example: 'csv' }),
    afterId: wholeNumber({ min: 0, max: 2_147_483_647 })
      .meta({ description: 'Only companies with a higher id: to continue an export that was cut short, the id of the last company received (rows come in id order). Billed for the rows it matches', example: 4200 })
      .optional(),
    ...listFilterShape(),
  },
  { ordered: RANGE_PARAMETERS }, // the list's rule on bounds
) as unknown as z.ZodType<ExportInput, SentInput | undefined>;

/** What a call costs: a private-company request per started thousand matching rows (at least one), counted now. */
const units: Units = async ({ ctx, input }) => {
  refuseUnlessRest(ctx, ROUTE); // before the count: there is nothing to serve it
  const { format: _format, afterId, ...filters } = input as ExportInput;
  const { database, companyCache } = ctx.services;
  return exportUnits(await countExport(database.db, { cache: companyCache }, filters, afterId));
};

export const companyExportRouter = router({
  get: companyDataProcedure
    .meta({
      units,
      openapi: {
        method: 'GET',
        path: PATH,
        tags: ['Private companies'],
        summary: 'Export the filtered companies as NDJSON or CSV (full records, streamed)',
        description:
          `Every company the filters match (the same filters as GET /api/private-companies), once each, in id order, as its full record (the detail of GET /api/private-companies/{id}, without markets), streamed as it is read: NDJSON (one JSON object per line) or CSV (a header row of the field names, then a row per company; lists and objects as their JSON text, null as an empty cell; RFC 4180 quoting, CRLF line ends; a text that a spreadsheet would run as a formula, starting with = + - @, gets a leading apostrophe). Content-Disposition names the file companies-<date>.<format>. Billed at the private-company rate (ten times the standard rate) per started ${ROWS_PER_UNIT.toLocaleString('en-US')} rows, at least once: the matching rows are counted and the whole cost reserved before the first byte (402 when the balance does not cover it, and nothing is streamed; X-Request-Cost-USD states it). The rows are paid as they are written: a file cut short (the reader went away, the connection or the server failed) keeps only the thousands started and the rest is refunded — at once, or after a crash within UNIT_LEASE_MS (5 minutes by default); continue it with afterId, the id of the last company received, billed for the rows that remain. Over REST only: the tRPC procedure is refused (400).`,
      },
      files: {
        'application/x-ndjson': 'One company per line: its detail record as a JSON object',
        'text/csv': 'A header row of the record\'s field names, then one row per company (lists and objects as JSON text, null as an empty cell)',
      },
    })
    .input(input)
    .output(streamedFileOutput())
    .query(({ ctx, input }) => {
      refuseUnlessRest(ctx, ROUTE);
      const { format, afterId, ...filters } = input;
      const { database, logger, refunds, config } = ctx.services;
      const file = exportFile(database.db, filters, format, {
        afterId,
        paid: new UnitsAsWritten(database.db, refunds, ctx.charges, config.unitLeaseMs),
        onError: (error) => logger.error('company export failed while streaming', { requestId: ctx.requestId, error: errorMessage(error) }),
      });
      return new StreamedFile(file.body, file.contentType, file.filename);
    }),
});

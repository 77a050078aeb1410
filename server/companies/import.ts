/**
 * An import of company records and investor facts: validated whole (a bad row refuses everything,
 * naming its line and field), then upserted by sourceId (store.ts) and by investor slug (graph.ts).
 * The import command calls it on a database it opens itself, and the operator route
 * POST /api/private-companies/import calls it for the command while a server holds the embedded
 * database (docs/companies.md "Import").
 */
import { z } from 'zod';
import type { Db } from '../../db/client.ts';
import { ApiError } from '../errors.ts';
import { validateRows, type CompanyRecord } from './company-schema.ts';
import { upsertInvestorFacts, type InvestorFact } from './graph.ts';
import { upsertCompanies, type UpsertReport } from './store.ts';

/** Records per call of the operator route: a few hundred KB of JSON, one short transaction. */
export const IMPORT_BATCH_MAX = 500;

/** One investor as seeds/investors.json states it (data/sources/investors/). */
export const investorFactRow = z.strictObject({
  name: z.string().trim().min(1).max(200),
  type: z.string().trim().min(1).max(40).nullable(),
  country: z.string().trim().min(1).max(100).nullable(),
  website: z.url({ protocol: /^https?$/ }).max(500).optional(),
  aliases: z.array(z.string().trim().min(1).max(200)).max(50).optional(),
  url: z.url({ protocol: /^https?$/ }).max(500),
  asOf: z.iso.date(),
});
export type InvestorFactRow = z.infer<typeof investorFactRow>;

/** A row of the investor facts as the investors table keeps it (its source: the `investors` source). */
export function investorFactOf(row: InvestorFactRow): InvestorFact {
  return { name: row.name, type: row.type, country: row.country, website: row.website ?? null, source: { id: 'investors', url: row.url, asOf: row.asOf } };
}

export interface RowProblem {
  line: number;
  field: string;
  reason: string;
}

/** Company rows checked as the import checks them; `firstLine` numbers the first row (a later batch of a file). */
export function companyRowProblems(rows: unknown[], origin: string, firstLine = 1): { records: CompanyRecord[]; problems: RowProblem[] } {
  const results = validateRows(rows.map((value, i) => ({ line: firstLine + i, value })), new Map(), origin);
  return {
    records: results.flatMap((r) => (r.record && !r.issues.length ? [r.record] : [])),
    problems: results.flatMap((r) => r.issues.map((issue) => ({ line: r.line, ...issue }))),
  };
}

export interface ImportReport extends UpsertReport {
  investors: number;
}

/**
 * Writes a batch that has been validated: investor facts first (so the records' rounds link to the
 * described investors), then the companies in one transaction. Every write is an upsert, so a batch
 * sent twice changes nothing the second time.
 */
export async function importRecords(db: Db, records: CompanyRecord[], investors: InvestorFact[] = []): Promise<ImportReport> {
  if (investors.length) await upsertInvestorFacts(db, investors);
  const report = records.length ? await upsertCompanies(db, records) : { added: 0, updated: 0, unchanged: 0 };
  return { ...report, investors: investors.length };
}

/** The operator route's call: company rows and investor rows validated, then written, or a 400 naming the first problems. */
export async function importBatch(db: Db, batch: { companies: unknown[]; investors: InvestorFactRow[]; file: string; firstLine: number }): Promise<ImportReport> {
  const { records, problems } = companyRowProblems(batch.companies, batch.file, batch.firstLine);
  if (problems.length) {
    const shown = problems.slice(0, 3).map((p) => `${batch.file} line ${p.line}: ${p.field}: ${p.reason}`);
    throw new ApiError('BAD_REQUEST', `${problems.length} invalid row${problems.length === 1 ? '' : 's'}, nothing written: ${shown.join('; ')}`);
  }
  return importRecords(db, records, batch.investors.map(investorFactOf));
}

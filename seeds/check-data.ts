/**
 * `npm run data:check [-- --dir <folder>]`: the company dataset's rules and coverage. Every row is
 * validated (server/companies/company-schema.ts: types, ranges, dates, history order, totals against
 * the history, sourceIds unique), and two rules of provenance hold for every record: a valuation has
 * its date, and a record with any figure (valuation, funding, rounds) names its public source
 * (`referenceUrl`). Prints one line per violation and the coverage; exits 1 on any violation.
 */
import { parseArgs } from 'node:util';
import type { CompanyRecord } from '../server/companies/company-schema.ts';
import { DATASET_DIR, loadDataset } from './company-dataset.ts';

export interface Coverage {
  companies: number;
  withValuation: number;
  withSource: number;
  withCountry: number;
  rounds: number;
  roundsWithValuation: number;
  investors: number;
}

/** Rule violations beyond the row schema: one line each. */
export function provenanceViolations(records: CompanyRecord[]): string[] {
  const out: string[] = [];
  for (const r of records) {
    if (r.valuationUsd != null && !r.valuationAsOf) out.push(`${r.sourceId}: valuationUsd without valuationAsOf`);
    const figures = r.valuationUsd != null || r.totalFundingUsd != null || (r.fundingHistory ?? []).length > 0;
    if (figures && !r.referenceUrl) out.push(`${r.sourceId}: figures without a source (referenceUrl)`);
  }
  return out;
}

export function coverageOf(records: CompanyRecord[]): Coverage {
  const investors = new Set(records.flatMap((r) => ((r.extra?.keyInvestors as string[] | undefined) ?? []).map((name) => name.trim().toLowerCase())));
  const rounds = records.flatMap((r) => r.fundingHistory ?? []);
  return {
    companies: records.length,
    withValuation: records.filter((r) => r.valuationUsd != null && r.valuationAsOf).length,
    withSource: records.filter((r) => !!r.referenceUrl).length,
    withCountry: records.filter((r) => !!r.headquartersCountry).length,
    rounds: rounds.length,
    roundsWithValuation: rounds.filter((h) => h.valuation != null).length,
    investors: investors.size,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { dir: { type: 'string' } } });
  const dir = values.dir ? new URL(`file://${values.dir.replace(/\/?$/, '/')}`) : DATASET_DIR;
  const { records, invalid } = await loadDataset(dir);
  for (const row of invalid) {
    for (const issue of row.issues) console.error(`${row.file} row ${row.line} (${row.record?.sourceId ?? row.sourceId ?? '?'}): ${issue.field}: ${issue.reason}`);
  }
  const violations = provenanceViolations(records);
  for (const line of violations) console.error(line);
  console.log(JSON.stringify({ coverage: coverageOf(records), invalidRows: invalid.length, violations: violations.length }));
  process.exit(invalid.length || violations.length ? 1 : 0);
}

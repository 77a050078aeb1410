/**
 * `npm run data:check [-- --dir <folder>]`: the company dataset's rules and coverage (docs/data.md).
 *  - every row is valid (server/companies/company-schema.ts: types, ranges, dates, history order,
 *    totals against the history, sourceIds unique);
 *  - provenance: a valuation has its date; every known field of a record is listed by one of its
 *    provenance entries, and every entry names a source of data/sources/ (a record without
 *    provenance, which an operator's import file may be, must at least name its referenceUrl when it
 *    holds figures);
 *  - the sources: each folder's rows match its manifest (count, sha256);
 *  - reproducibility (the shipped seed only): seeds/ is byte for byte what `npm run data:build` makes.
 * Prints one line per violation and a JSON report (coverage overall and per source, the targets);
 * exits 1 on any violation.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { build, SEED_DIR } from '../data/build/build.ts';
import { readSource, sourceIds } from '../data/build/sources.ts';
import type { CompanyRecord } from '../server/companies/company-schema.ts';
import { DATASET_DIR, loadDataset } from './company-dataset.ts';

/** Coverage the dataset aims at (docs/data.md "Coverage"); reported, not enforced. */
export const TARGETS = { companies: 5000, withValuation: 1000 };

export interface Coverage {
  companies: number;
  withValuation: number;
  valuationPoints: number;
  withSource: number;
  withCountry: number;
  withWebsite: number;
  rounds: number;
  roundsWithValuation: number;
  investors: number;
  /** Companies each source lists. */
  bySource: Record<string, number>;
}

const NOT_FACTS = new Set(['sourceId', 'provenance']);
const isSet = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0);

/** Rule violations beyond the row schema: one line each. */
export function provenanceViolations(records: CompanyRecord[], knownSources: Set<string>): string[] {
  const out: string[] = [];
  for (const r of records) {
    if (r.valuationUsd != null && !r.valuationAsOf) out.push(`${r.sourceId}: valuationUsd without valuationAsOf`);
    const provenance = r.provenance ?? [];
    if (!provenance.length) {
      const figures = r.valuationUsd != null || r.totalFundingUsd != null || (r.fundingHistory ?? []).length > 0;
      if (figures && !r.referenceUrl) out.push(`${r.sourceId}: figures without a source (referenceUrl)`);
      continue;
    }
    for (const p of provenance) if (!knownSources.has(p.id)) out.push(`${r.sourceId}: provenance names ${p.id}, which is not a source of data/sources/`);
    const listed = new Set(provenance.flatMap((p) => p.fields));
    const unsourced = Object.entries(r).filter(([f, v]) => !NOT_FACTS.has(f) && isSet(v) && !listed.has(f)).map(([f]) => f);
    if (unsourced.length) out.push(`${r.sourceId}: ${unsourced.join(', ')} without a source (no provenance entry lists them)`);
  }
  return out;
}

export function coverageOf(records: CompanyRecord[]): Coverage {
  const rounds = records.flatMap((r) => r.fundingHistory ?? []);
  const investors = new Set(
    records.flatMap((r) => [...((r.extra?.keyInvestors as string[] | undefined) ?? []), ...rounds.length ? (r.fundingHistory ?? []).flatMap((h) => [...(h.investors ?? []), ...(h.leadInvestors ?? [])]) : []].map((n) => n.trim().toLowerCase())),
  );
  const bySource: Record<string, number> = {};
  for (const r of records) for (const p of r.provenance ?? []) bySource[p.id] = (bySource[p.id] ?? 0) + 1;
  return {
    companies: records.length,
    withValuation: records.filter((r) => r.valuationUsd != null && r.valuationAsOf).length,
    valuationPoints: records.reduce((n, r) => n + (r.valuationHistory?.length ?? 0) + (r.fundingHistory ?? []).filter((h) => h.valuation != null).length, 0),
    withSource: records.filter((r) => !!r.referenceUrl || !!r.provenance?.length).length,
    withCountry: records.filter((r) => !!r.headquartersCountry).length,
    withWebsite: records.filter((r) => !!r.website).length,
    rounds: rounds.length,
    roundsWithValuation: rounds.filter((h) => h.valuation != null).length,
    investors: investors.size,
    bySource: Object.fromEntries(Object.entries(bySource).sort()),
  };
}

/** Files of the shipped seed that differ from a fresh build (empty when reproducible). */
export function seedDrift(): string[] {
  const { files } = build();
  return [...files].filter(([name, content]) => {
    try {
      return readFileSync(new URL(name, SEED_DIR), 'utf8') !== content;
    } catch {
      return true;
    }
  }).map(([name]) => name);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { dir: { type: 'string' } } });
  const shipped = !values.dir;
  const dir = values.dir ? new URL(`file://${values.dir.replace(/\/?$/, '/')}`) : DATASET_DIR;
  const violations: string[] = [];
  const sources = sourceIds();
  for (const id of sources) violations.push(...readSource(id).issues);
  const { records, invalid } = await loadDataset(dir, 'full');
  for (const row of invalid) {
    for (const issue of row.issues) console.error(`${row.file} row ${row.line} (${row.record?.sourceId ?? row.sourceId ?? '?'}): ${issue.field}: ${issue.reason}`);
  }
  violations.push(...provenanceViolations(records, new Set(sources)));
  if (shipped && !violations.length) for (const file of seedDrift()) violations.push(`seeds/${file} differs from what npm run data:build makes from data/sources/ (run it and commit)`);
  for (const line of violations) console.error(line);
  const coverage = coverageOf(records);
  const targets = Object.fromEntries(Object.entries(TARGETS).map(([k, min]) => [k, { min, actual: coverage[k as keyof typeof TARGETS], met: coverage[k as keyof typeof TARGETS] >= min }]));
  console.log(JSON.stringify({ coverage, targets, invalidRows: invalid.length, violations: violations.length }));
  process.exit(invalid.length || violations.length ? 1 : 0);
}

/**
 * `npm run data:check [-- --dir <folder>]`: the company dataset's rules and coverage (docs/data.md).
 *  - every row is valid (server/companies/company-schema.ts: types, ranges, dates, history order,
 *    totals against the history, sourceIds unique);
 *  - provenance: a valuation has its date; every known field of a record is listed by one of its
 *    provenance entries, and every entry names a source of data/sources/ (a record without
 *    provenance, which an operator's import file may be, must at least name its referenceUrl when it
 *    holds figures);
 *  - the sources: each folder's rows match its manifest (count, sha256);
 *  - no figure (a round, a valuation point, the current valuation, a head count) is dated after the
 *    snapshot date of the source it cites (a partial date counts as its first day);
 *  - reproducibility (the shipped seed only): seeds/ is byte for byte what `npm run data:build` makes;
 *  - nothing lost (the shipped seed only): every dated valuation of every source row, and every
 *    curated record's own, is in its company's record (a round, valuationHistory or the current one);
 *  - the unicorn lists (the shipped seed only): every row of every wikipedia-unicorns-* source is a
 *    company of the seed that lists the source and is known by the row's name.
 * Prints one line per violation and a JSON report (coverage overall and per source, the targets);
 * exits 1 on any violation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { build, SEED_DIR, type BuildResult } from '../data/build/build.ts';
import type { SourceManifest, SourceRow } from '../data/build/source-row.ts';
import { CURATED, loadSources, readSource, sourceIds, type LoadedSources } from '../data/build/sources.ts';
import type { CompanyRecord } from '../server/companies/company-schema.ts';
import { investorSlug } from '../server/companies/graph.ts';
import { nameForm, namesOf } from '../server/companies/names.ts';
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
  /** Investors the API answers: every investor a round or a portfolio names, and every investor fact, by slug. */
  investors: number;
  /** Companies each source lists. */
  bySource: Record<string, number>;
  /** The unicorn lists (wikipedia-unicorns-*, current and former tables): companies they name, and how many the seed holds (the shipped seed only). */
  unicorns?: { listed: number; present: number };
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

/**
 * Investors as the seed writes them (server/companies/graph.ts): one per slug of a name a round or a
 * portfolio gives, and one per investor fact (seeds/investors.json), named or not.
 */
export function investorSlugs(records: CompanyRecord[], facts: Array<{ name: string }> = []): Set<string> {
  const names = records.flatMap((r) => [
    ...(r.fundingHistory ?? []).flatMap((h) => [...(h.leadInvestors ?? []), ...(h.investors ?? [])]),
    ...((r.extra?.keyInvestors as string[] | undefined) ?? []),
  ]);
  return new Set([...names, ...facts.map((f) => f.name)].map(investorSlug).filter(Boolean));
}

export function coverageOf(records: CompanyRecord[], investorFacts: Array<{ name: string }> = []): Coverage {
  const rounds = records.flatMap((r) => r.fundingHistory ?? []);
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
    investors: investorSlugs(records, investorFacts).size,
    bySource: Object.fromEntries(Object.entries(bySource).sort()),
  };
}

/** A date's first day, to compare: 2025-03 → 2025-03-01, 2025 → 2025-01-01. */
const firstDay = (date: string) => (date.length === 4 ? `${date}-01-01` : date.length === 7 ? `${date}-01` : date);

/** Figures dated after the snapshot of the source they cite: no source can state a figure of its future. */
export function futureFigures(records: CompanyRecord[], retrieved: Map<string, string>): string[] {
  const out: string[] = [];
  for (const r of records) {
    if (!r.provenance?.length) continue;
    const fieldSource = (field: string) => r.provenance!.find((p) => p.fields.includes(field))?.id;
    const check = (what: string, date: string | null | undefined, source: string | undefined) => {
      const snapshot = source && retrieved.get(source);
      if (date && snapshot && firstDay(date) > snapshot) out.push(`${r.sourceId}: ${what} is dated ${date}, after the snapshot of its source ${source} (${snapshot})`);
    };
    (r.fundingHistory ?? []).forEach((h, i) => check(`fundingHistory.${i}`, h.date, h.source ?? CURATED));
    (r.valuationHistory ?? []).forEach((v, i) => check(`valuationHistory.${i}`, v.date, v.source ?? undefined));
    check('valuationAsOf', r.valuationAsOf, fieldSource('valuationAsOf'));
    check('employeesAsOf', r.employeesAsOf, fieldSource('employeesAsOf'));
  }
  return out;
}

const sameFigure = (a: { date: string; valuationUsd: number }, b: { date: string; valuationUsd: number }) =>
  a.valuationUsd === b.valuationUsd && (a.date.startsWith(b.date) || b.date.startsWith(a.date));

/** Every dated valuation a record states: its rounds' post-money, its valuation history, its current one. */
function statedValuations(r: CompanyRecord) {
  return [
    ...(r.fundingHistory ?? []).filter((h) => h.valuation != null).map((h) => ({ date: h.date, valuationUsd: h.valuation! })),
    ...(r.valuationHistory ?? []),
    ...(r.valuationUsd != null && r.valuationAsOf ? [{ date: r.valuationAsOf, valuationUsd: r.valuationUsd }] : []),
  ];
}

/** Dated valuations a source gave (a row's, a curated record's own) that its company's record does not hold. */
export function lostFigures(records: CompanyRecord[], built: Pick<BuildResult, 'rowsOf'>, sources: LoadedSources): string[] {
  const rows = new Map<string, SourceRow>(sources.companySources.flatMap(({ manifest, rows }) => rows.map((row) => [`${manifest.id}:${row.key}`, row] as const)));
  const curated = new Map(sources.curated.map((c) => [c.sourceId, c]));
  const out: string[] = [];
  for (const r of records) {
    const stated = statedValuations(r);
    const given = [
      ...(curated.has(r.sourceId) ? statedValuations(curated.get(r.sourceId)!).map((v) => ({ ...v, from: CURATED })) : []),
      ...(built.rowsOf.get(r.sourceId) ?? []).flatMap((id) => (rows.get(id)?.valuations ?? []).map((v) => ({ ...v, from: id }))),
    ];
    for (const v of given) if (!stated.some((s) => sameFigure(s, v))) out.push(`${r.sourceId}: ${v.from} states ${v.valuationUsd} at ${v.date}, which the record lost (neither a round, valuationHistory nor the current valuation)`);
  }
  return out;
}

/**
 * The unicorn lists' companies in the seed: every row of every wikipedia-unicorns-* source (current
 * and former tables) is a record that lists the source in its provenance and is known by the row's
 * name (name, registered name or alias, as a search finds it). Missing ones are violations.
 */
export function unicornCoverage(records: CompanyRecord[], built: Pick<BuildResult, 'rowsOf'>, sources: LoadedSources) {
  const companyOf = new Map([...built.rowsOf].flatMap(([sourceId, ids]) => ids.map((id) => [id, sourceId] as const)));
  const bySourceId = new Map(records.map((r) => [r.sourceId, r]));
  const listed = new Set<string>();
  const present = new Set<string>();
  const violations: string[] = [];
  for (const { manifest, rows } of sources.companySources.filter((s) => s.manifest.id.startsWith('wikipedia-unicorns-'))) {
    for (const row of rows) {
      const id = `${manifest.id}:${row.key}`;
      const sourceId = companyOf.get(id);
      const record = sourceId ? bySourceId.get(sourceId) : undefined;
      listed.add(sourceId ?? id);
      const known = record && record.provenance?.some((p) => p.id === manifest.id) && namesOf(record).some((n) => n.folded === nameForm(row.name));
      if (known) present.add(sourceId!);
      else violations.push(`${id} (${row.name}) is no company of the seed known by that name${record ? ` (it went to ${record.sourceId}, ${record.name})` : ''}`);
    }
  }
  // A company some row finds is present even if another row of it is not: the violation names that row.
  return { coverage: { listed: listed.size, present: [...listed].filter((c) => present.has(c)).length }, violations };
}

/** Files of the shipped seed that differ from a fresh build (empty when reproducible). */
export function seedDrift(built: BuildResult = build()): string[] {
  const { files } = built;
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
  const manifests: SourceManifest[] = [];
  for (const id of sources) {
    const { manifest, issues } = readSource(id);
    manifests.push(manifest);
    violations.push(...issues);
  }
  const { records, invalid } = await loadDataset(dir, 'full');
  for (const row of invalid) {
    for (const issue of row.issues) console.error(`${row.file} row ${row.line} (${row.record?.sourceId ?? row.sourceId ?? '?'}): ${issue.field}: ${issue.reason}`);
  }
  violations.push(...provenanceViolations(records, new Set(sources)));
  violations.push(...futureFigures(records, new Map(manifests.map((m) => [m.id, m.retrieved]))));
  // The investor facts the seed writes beside the companies (seeds/investors.json).
  const factsFile = new URL('../investors.json', dir);
  const investorFacts = existsSync(factsFile) ? (JSON.parse(readFileSync(factsFile, 'utf8')) as Array<{ name: string }>) : [];
  const coverage = coverageOf(records, investorFacts);
  if (shipped && !violations.length) {
    const built = build();
    const loaded = loadSources();
    for (const file of seedDrift(built)) violations.push(`seeds/${file} differs from what npm run data:build makes from data/sources/ (run it and commit)`);
    violations.push(...lostFigures(records, built, loaded));
    const unicorns = unicornCoverage(records, built, loaded);
    coverage.unicorns = unicorns.coverage;
    violations.push(...unicorns.violations);
  }
  for (const line of violations) console.error(line);
  const targets = Object.fromEntries(Object.entries(TARGETS).map(([k, min]) => [k, { min, actual: coverage[k as keyof typeof TARGETS], met: coverage[k as keyof typeof TARGETS] >= min }]));
  console.log(JSON.stringify({ coverage, targets, invalidRows: invalid.length, violations: violations.length }));
  process.exit(invalid.length || violations.length ? 1 : 0);
}

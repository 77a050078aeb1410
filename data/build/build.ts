/**
 * `npm run data:build [-- --out <dir>]`: the seed (seeds/companies/*.json and seeds/investors.json)
 * from data/sources/, deterministically: the same sources give the same bytes (docs/data.md).
 * Sources are verified against their manifests first; every record is validated as the import
 * validates it; the build stops on any problem and writes nothing.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { COMPANY_FIELDS, validateRows, type CompanyRecord } from '../../server/companies/company-schema.ts';
import { investorNamer, mergeEntity } from './merge.ts';
import { Resolver, type Join } from './resolve.ts';
import { CURATED, loadSources, SOURCES_DIR, type InvestorRow } from './sources.ts';

export const SEED_DIR = new URL('../../seeds/', import.meta.url);

export interface BuildResult {
  records: CompanyRecord[];
  investors: InvestorRow[];
  /** Record sourceId → the source rows merged into it (`<source id>:<row key>`), for data:check. */
  rowsOf: Map<string, string[]>;
  /** File name (relative to the seed folder) → content. */
  files: Map<string, string>;
}

/** A record's JSON with its fields in the format's order and unknown (null) fields left out. */
function recordJson(record: CompanyRecord): string {
  const ordered: Record<string, unknown> = {};
  for (const field of COMPANY_FIELDS) {
    const value = record[field];
    if (value !== null && value !== undefined) ordered[field] = value;
  }
  return JSON.stringify(ordered);
}

const shardOf = (sourceId: string) => (/^[a-z]/.test(sourceId) ? sourceId[0]! : '0-9');
const arrayFile = (lines: string[]) => `[\n${lines.join(',\n')}\n]\n`;

export function build(sourcesDir: URL = SOURCES_DIR): BuildResult {
  const sources = loadSources(sourcesDir);
  const curatedManifest = sources.manifests.find((m) => m.id === CURATED);
  const joins = JSON.parse(readFileSync(new URL('joins.json', new URL('../', sourcesDir)), 'utf8')) as Join[];
  const resolver = new Resolver(joins);
  for (const record of [...sources.curated].sort((a, b) => (a.sourceId < b.sourceId ? -1 : 1))) resolver.addCurated(record);
  for (const { manifest, rows } of sources.companySources) {
    resolver.noteAmbiguousDomains(rows);
    for (const row of [...rows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) resolver.add(manifest, row);
  }
  const stale = resolver.unusedJoins();
  if (stale.length) throw new Error(`data/joins.json: ${stale.map((j) => j.row).join(', ')} is no row of its source`);
  const ctx = { curatedAsOf: curatedManifest?.retrieved ?? '2026-01-01', investorName: investorNamer(sources.investors) };
  const records = resolver.entities.map((e) => mergeEntity(e, ctx)).sort((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0));

  const results = validateRows(records.map((value, i) => ({ line: i + 1, value })));
  const bad = results.filter((r) => r.issues.length);
  if (bad.length) {
    const lines = bad.slice(0, 20).map((r) => `${records[r.line - 1]!.sourceId}: ${r.issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`);
    throw new Error(`${bad.length} merged records are invalid:\n${lines.join('\n')}`);
  }

  const files = new Map<string, string>();
  const shards = new Map<string, string[]>();
  for (const record of records) {
    const shard = shardOf(record.sourceId);
    shards.set(shard, [...(shards.get(shard) ?? []), recordJson(record)]);
  }
  for (const [shard, lines] of [...shards].sort()) files.set(`companies/${shard}.json`, arrayFile(lines));
  const investors = [...sources.investors].sort((a, b) => (a.name < b.name ? -1 : 1));
  files.set('investors.json', arrayFile(investors.map((i) => JSON.stringify(i))));
  const rowsOf = new Map(resolver.entities.map((e) => [e.sourceId, e.parts.map((p) => `${p.source.id}:${p.row.key}`)]));
  return { records, investors, rowsOf, files };
}

/** Writes the build into a seed folder, replacing the company files it held. */
export function writeSeed(result: BuildResult, dir: URL = SEED_DIR) {
  const companiesDir = new URL('companies/', dir);
  mkdirSync(companiesDir, { recursive: true });
  for (const f of readdirSync(companiesDir)) if (f.endsWith('.json')) rmSync(new URL(f, companiesDir));
  for (const [name, content] of result.files) writeFileSync(new URL(name, dir), content);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const out = values.out ? new URL(`file://${values.out.replace(/\/?$/, '/')}`) : SEED_DIR;
  const started = performance.now();
  const result = build();
  writeSeed(result, out);
  const withValuation = result.records.filter((r) => r.valuationUsd != null).length;
  console.log(
    JSON.stringify({ companies: result.records.length, withValuation, investors: result.investors.length, files: result.files.size, ms: Math.round(performance.now() - started), out: out.pathname }),
  );
}

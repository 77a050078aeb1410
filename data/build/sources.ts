/**
 * Reading data/sources/: every folder's manifest and rows, checked against each other (row count,
 * sha256), so a build never merges a snapshot that differs from what its manifest records.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { CompanyRecord } from '../../server/companies/company-schema.ts';
import type { SourceManifest, SourceRow } from './source-row.ts';

export const SOURCES_DIR = new URL('../sources/', import.meta.url);

/** The hand-checked records (data/sources/curated/): full records, first in every merge. */
export const CURATED = 'curated';
/** Investor facts (data/sources/investors/): investors, not companies. */
export const INVESTORS = 'investors';

export interface InvestorRow {
  name: string;
  type: string | null;
  country: string | null;
  website?: string;
  aliases?: string[];
  url: string;
  asOf: string;
}

export interface LoadedSources {
  manifests: SourceManifest[];
  curated: CompanyRecord[];
  investors: InvestorRow[];
  /** Company sources other than curated, by priority (then id). */
  companySources: Array<{ manifest: SourceManifest; rows: SourceRow[] }>;
}

export class SourceError extends Error {}

export function readSource(id: string, dir: URL = SOURCES_DIR): { manifest: SourceManifest; rows: unknown[]; issues: string[] } {
  const folder = new URL(`${id}/`, dir);
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', folder), 'utf8')) as SourceManifest;
  const bytes = readFileSync(new URL('rows.json', folder));
  const rows = JSON.parse(bytes.toString('utf8')) as unknown[];
  const issues: string[] = [];
  if (manifest.id !== id) issues.push(`${id}: manifest id is ${manifest.id}`);
  for (const field of ['name', 'url', 'retrieved', 'licence', 'via'] as const) if (!manifest[field]) issues.push(`${id}: manifest has no ${field}`);
  if (!Array.isArray(rows)) issues.push(`${id}: rows.json is not an array`);
  else if (rows.length !== manifest.rows) issues.push(`${id}: rows.json holds ${rows.length} rows, the manifest says ${manifest.rows}`);
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== manifest.sha256) issues.push(`${id}: rows.json sha256 ${sha} differs from the manifest's ${manifest.sha256}`);
  return { manifest, rows, issues };
}

export function sourceIds(dir: URL = SOURCES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/** Every source, verified; throws on the first manifest that does not match its rows. */
export function loadSources(dir: URL = SOURCES_DIR): LoadedSources {
  const out: LoadedSources = { manifests: [], curated: [], investors: [], companySources: [] };
  for (const id of sourceIds(dir)) {
    const { manifest, rows, issues } = readSource(id, dir);
    if (issues.length) throw new SourceError(issues.join('\n'));
    out.manifests.push(manifest);
    if (id === CURATED) out.curated = rows as CompanyRecord[];
    else if (id === INVESTORS) out.investors = rows as InvestorRow[];
    else out.companySources.push({ manifest, rows: rows as SourceRow[] });
  }
  out.companySources.sort((a, b) => a.manifest.priority - b.manifest.priority || (a.manifest.id < b.manifest.id ? -1 : 1));
  return out;
}

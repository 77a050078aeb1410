/**
 * The company dataset the seed loads: every `*.json` file in seeds/companies/ (built from
 * data/sources/ by `npm run data:build`), validated row by row (server/companies/company-schema.ts)
 * with sourceIds unique across all files.
 *
 * `SEED_COMPANIES=sample` loads a fixed sample instead of all of it: every curated record and every
 * twentieth of the others (by sourceId). The test suite runs on it (tests/harness/preload.ts) because
 * each test file clones a seeded database, and an embedded database of the whole dataset takes
 * seconds to clone; tests/companies/full-dataset.test.ts seeds the whole dataset on its own.
 */
import { readdirSync } from 'node:fs';
import { validateRows, type CompanyRecord, type RowResult } from '../server/companies/company-schema.ts';

export const DATASET_DIR = new URL('./companies/', import.meta.url);

export type DatasetSelection = 'full' | 'sample';

export function datasetSelection(): DatasetSelection {
  return process.env.SEED_COMPANIES === 'sample' ? 'sample' : 'full';
}

/** One in this many non-curated records is in the sample. */
const SAMPLE_EVERY = 20;

/** Picks the sample from the raw rows, before validation: only the sample is validated. */
function sampler() {
  let n = 0;
  return (row: unknown) => {
    const provenance = (row as { provenance?: Array<{ id?: unknown }> } | null)?.provenance;
    return provenance?.[0]?.id === 'curated' || !provenance?.length || n++ % SAMPLE_EVERY === 0;
  };
}

export interface DatasetReport {
  records: CompanyRecord[];
  /** Rows that failed validation, with the sourceId the row gave (if any), to name it. */
  invalid: Array<RowResult & { file: string; sourceId: string | null }>;
}

/** One file of the dataset, validated (sourceIds checked against every file before it). */
export interface DatasetFile extends DatasetReport {
  file: string;
}

/**
 * The dataset a file at a time, in the order loadDataset reads it, so a caller can drop each file's
 * records before the next is read (the seed does: docs/performance.md).
 */
export async function* datasetFiles(dir: URL = DATASET_DIR, selection: DatasetSelection = datasetSelection()): AsyncGenerator<DatasetFile> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const seen = new Map<string, string>();
  const keep = selection === 'sample' ? sampler() : () => true;
  for (const file of files) {
    const all = (await Bun.file(new URL(file, dir)).json()) as unknown[];
    if (!Array.isArray(all)) throw new Error(`${file}: must hold a JSON array of company records`);
    const rows = all.filter(keep);
    const records: CompanyRecord[] = [];
    const invalid: DatasetReport['invalid'] = [];
    for (const result of validateRows(rows.map((value, i) => ({ line: i + 1, value })), seen, file)) {
      const raw = rows[result.line - 1] as { sourceId?: unknown } | null;
      if (result.issues.length) invalid.push({ ...result, file, sourceId: typeof raw?.sourceId === 'string' ? raw.sourceId : null });
      else records.push(result.record!);
    }
    yield { file, records, invalid };
  }
}

export async function loadDataset(dir: URL = DATASET_DIR, selection: DatasetSelection = datasetSelection()): Promise<DatasetReport> {
  const records: CompanyRecord[] = [];
  const invalid: DatasetReport['invalid'] = [];
  for await (const file of datasetFiles(dir, selection)) {
    records.push(...file.records);
    invalid.push(...file.invalid);
  }
  return { records, invalid };
}

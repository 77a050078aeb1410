/**
 * The curated company dataset: every `*.json` file in seeds/companies/, validated row by row
 * (server/companies/company-schema.ts) with sourceIds unique across all files.
 */
import { readdirSync } from 'node:fs';
import { validateRows, type CompanyRecord, type RowResult } from '../server/companies/company-schema.ts';

export const DATASET_DIR = new URL('./companies/', import.meta.url);

export interface DatasetReport {
  records: CompanyRecord[];
  /** Rows that failed validation, with the sourceId the row gave (if any), to name it. */
  invalid: Array<RowResult & { file: string; sourceId: string | null }>;
}

export async function loadDataset(dir: URL = DATASET_DIR): Promise<DatasetReport> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const seen = new Map<string, string>();
  const records: CompanyRecord[] = [];
  const invalid: DatasetReport['invalid'] = [];
  for (const file of files) {
    const rows = (await Bun.file(new URL(file, dir)).json()) as unknown[];
    if (!Array.isArray(rows)) throw new Error(`${file}: must hold a JSON array of company records`);
    for (const result of validateRows(rows.map((value, i) => ({ line: i + 1, value })), seen, file)) {
      const raw = rows[result.line - 1] as { sourceId?: unknown } | null;
      if (result.issues.length) invalid.push({ ...result, file, sourceId: typeof raw?.sourceId === 'string' ? raw.sourceId : null });
      else records.push(result.record!);
    }
  }
  return { records, invalid };
}

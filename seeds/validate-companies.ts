/** `npm run validate:companies`: checks every row of the curated dataset; exit 1 on any issue. */
import { loadDataset } from './company-dataset.ts';

const { records, invalid } = await loadDataset();
for (const row of invalid) {
  for (const issue of row.issues) console.error(`${row.file} row ${row.line} (${row.record?.sourceId ?? '?'}): ${issue.field}: ${issue.reason}`);
}
console.log(`${records.length} valid companies, ${invalid.length} invalid`);
process.exit(invalid.length ? 1 : 0);

import { upsertCompanies } from '../server/companies/store.ts';
import { loadDataset } from './company-dataset.ts';
import type { SeedStep } from './step.ts';

/** The curated dataset, upserted by sourceId. An invalid row stops the seed (nothing is written). */
export const companiesSeed: SeedStep = {
  name: 'companies',
  async run(db) {
    const { records, invalid } = await loadDataset();
    if (invalid.length) {
      const first = invalid[0]!;
      throw new Error(`Company dataset has ${invalid.length} invalid rows; first: ${first.file} row ${first.line}: ${first.issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`);
    }
    const report = await upsertCompanies(db, records);
    return { inserted: report.added, updated: report.updated };
  },
};

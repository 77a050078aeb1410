import { upsertInvestorFacts, type InvestorFact } from '../server/companies/graph.ts';
import { upsertCompanies } from '../server/companies/store.ts';
import { loadDataset } from './company-dataset.ts';
import type { SeedStep } from './step.ts';

/** Investor facts of the build (seeds/investors.json, from data/sources/investors/). */
async function investorFacts(): Promise<InvestorFact[]> {
  const rows = (await Bun.file(new URL('./investors.json', import.meta.url)).json()) as Array<{ name: string; type: string | null; country: string | null; website?: string; url: string; asOf: string }>;
  return rows.map((r) => ({ name: r.name, type: r.type, country: r.country, website: r.website ?? null, source: { id: 'investors', url: r.url, asOf: r.asOf } }));
}

/**
 * The built dataset (seeds/companies/, made by `npm run data:build`), upserted by sourceId, with the
 * investor facts. An invalid row stops the seed (nothing is written).
 */
export const companiesSeed: SeedStep = {
  name: 'companies',
  async run(db) {
    const { records, invalid } = await loadDataset();
    if (invalid.length) {
      const first = invalid[0]!;
      throw new Error(`Company dataset has ${invalid.length} invalid rows; first: ${first.file} row ${first.line}: ${first.issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`);
    }
    await upsertInvestorFacts(db, await investorFacts());
    const report = await upsertCompanies(db, records);
    return { inserted: report.added, updated: report.updated };
  },
};

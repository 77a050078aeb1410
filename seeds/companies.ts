import type { Db } from '../db/client.ts';
import { upsertInvestorFacts, type InvestorFact } from '../server/companies/graph.ts';
import { investorFactOf, investorFactRow } from '../server/companies/import.ts';
import { z } from 'zod';
import { datasetVersion } from '../server/companies/aggregate-cache.ts';
import { upsertCompanies } from '../server/companies/store.ts';
import { DATASET_DIR, datasetFiles, datasetSelection, type DatasetReport } from './company-dataset.ts';
import { seedBuild, seedIsCurrent, writeSeedMark } from './seed-mark.ts';
import type { SeedStep } from './step.ts';

/** Investor facts of the build (seeds/investors.json, from data/sources/investors/). */
async function investorFacts(): Promise<InvestorFact[]> {
  const rows = z.array(investorFactRow).parse(await Bun.file(new URL('./investors.json', import.meta.url)).json());
  return rows.map(investorFactOf);
}

/**
 * The built dataset (seeds/companies/, made by `npm run data:build`), upserted by sourceId, with the
 * investor facts. An invalid row stops the seed (nothing is written). Skipped, without reading the
 * dataset, when the database took this same build and nothing changed its companies since
 * (seed-mark.ts); `force` compares anyway.
 */
export const companiesSeed: SeedStep = {
  name: 'companies',
  async run(db, options = {}) {
    const build = await seedBuild(DATASET_DIR, datasetSelection());
    if (!options.force && (await seedIsCurrent(db, build))) return { inserted: 0, updated: 0, skipped: 'this build of the seed is loaded and unchanged' };
    const before = await datasetVersion(db);
    const { inserted, updated, versionsMoved } = await seedCompanies(db);
    // Marked only after the seed's transactions, and only if no other writer (another instance's
    // import) moved the version meanwhile: a mark never vouches for data the seed did not see.
    if ((await datasetVersion(db)) === before + versionsMoved) await writeSeedMark(db, build).catch(() => {});
    return { inserted, updated };
  },
};

/**
 * The seed's peak memory on a first start is bounded two ways (docs/performance.md):
 * - a file at a time: the whole dataset is validated first, keeping only the problems (an invalid row
 *   still stops the seed before anything is written), then each file is read again and upserted in
 *   its own transaction, so at most one file's records are held. A start stopped midway leaves the
 *   files done so far, and no mark: the next start compares and finishes (every write is an upsert).
 * - garbage collected after each file and each batch (store.ts: 250 records): left to itself the collector (--smol, a
 *   512 MB heap budget) let the parsed files and batches pile up to ~750 MB of RSS. It costs ~2 s over
 *   the 12,836 records.
 */
const collectGarbage = () => Bun.gc(true);

async function seedCompanies(db: Db): Promise<{ inserted: number; updated: number; versionsMoved: number }> {
  const selection = datasetSelection();
  const invalid: DatasetReport['invalid'] = [];
  for await (const file of datasetFiles(DATASET_DIR, selection)) {
    invalid.push(...file.invalid);
    collectGarbage();
  }
  if (invalid.length) {
    const first = invalid[0]!;
    throw new Error(`Company dataset has ${invalid.length} invalid rows; first: ${first.file} row ${first.line}: ${first.issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`);
  }
  await upsertInvestorFacts(db, await investorFacts());
  const result = { inserted: 0, updated: 0, versionsMoved: 0 };
  for await (const file of datasetFiles(DATASET_DIR, selection)) {
    const report = await upsertCompanies(db, file.records, collectGarbage);
    result.inserted += report.added;
    result.updated += report.updated;
    // upsertCompanies moves the dataset version once per call that changed something.
    if (report.added || report.updated) result.versionsMoved++;
  }
  return result;
}

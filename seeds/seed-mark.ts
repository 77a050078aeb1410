/**
 * The company seed's mark: which build of the seed the database last took, and the dataset version
 * (company_dataset_state) that left. A restart whose seed build is the same, on a dataset nothing has
 * changed since (an import, an earlier build's seed: each moves the version), skips the seed's
 * record-by-record comparison — 12,836 records read, validated and compared, ~5 s and ~500 MB on the
 * embedded database — which would find nothing to do. Anything else (another build, an import since,
 * no mark, a mark that cannot be read) runs the seed as before.
 *
 * The mark is kept in the database, so it follows the data (a restored backup, another DATA_DIR, a
 * shared PostgreSQL): in company_dataset_state's seed_build and seeded_version, beside the version it
 * is compared with. It is written only after the seed succeeded; failing to write it only means
 * comparing again next time.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { companyDatasetState } from '../db/schema.ts';
import { datasetVersion } from '../server/companies/aggregate-cache.ts';
import type { DatasetSelection } from './company-dataset.ts';

export interface SeedMark {
  /** sha256 of the seed's build: its data files and the code that turns them into rows. */
  build: string;
  /** company_dataset_state.version after that seed. */
  version: number;
}

/**
 * What a seed build is: every data file the companies step reads, the selection, and the source of
 * the modules that validate and write them (a change there may write other rows from the same data),
 * and the migrations (a new column may need filling).
 */
const CODE = [
  './companies.ts',
  './company-dataset.ts',
  '../server/companies/store.ts',
  '../server/companies/graph.ts',
  '../server/companies/company-schema.ts',
  '../server/companies/names.ts',
  '../server/companies/history.ts',
  '../server/companies/import.ts',
  '../db/migrations/meta/_journal.json',
];

export async function seedBuild(datasetDir: URL, selection: DatasetSelection): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`selection:${selection}\n`);
  const files = readdirSync(datasetDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => new URL(f, datasetDir));
  files.push(new URL('./investors.json', import.meta.url), ...CODE.map((path) => new URL(path, import.meta.url)));
  for (const file of files) {
    const body = Bun.file(file);
    // A file the build does not have (a module moved) counts as absent, not as an error.
    const bytes = (await body.exists()) ? new Uint8Array(await body.arrayBuffer()) : new Uint8Array();
    hash.update(`${file.pathname.replace(/^.*\/(seeds|server|db)\//, '$1/')}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

/** The mark the database holds, or null (none yet). */
export async function readSeedMark(db: Db): Promise<SeedMark | null> {
  const [row] = await db
    .select({ build: companyDatasetState.seedBuild, version: companyDatasetState.seededVersion })
    .from(companyDatasetState)
    .where(eq(companyDatasetState.id, 1));
  return row?.build && row.version !== null ? { build: row.build, version: row.version } : null;
}

export async function writeSeedMark(db: Db, build: string): Promise<SeedMark> {
  const mark: SeedMark = { build, version: await datasetVersion(db) };
  // The row exists once any company was written (bumpDatasetVersion); a seed that wrote none leaves no mark.
  await db.update(companyDatasetState).set({ seedBuild: mark.build, seededVersion: mark.version }).where(eq(companyDatasetState.id, 1));
  return mark;
}

/** True when the database took this very build and its dataset has not changed since. */
export async function seedIsCurrent(db: Db, build: string): Promise<boolean> {
  const mark = await readSeedMark(db);
  return mark !== null && mark.build === build && mark.version === (await datasetVersion(db));
}

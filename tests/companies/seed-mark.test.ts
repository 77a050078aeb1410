/**
 * The company seed's mark (seeds/seed-mark.ts): a database that took this build of the seed, unchanged
 * since, skips the record-by-record comparison; an import since, another build, or `force` compares as
 * before (and an import's change to a seed record is put back, as it always was).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { companyDatasetState } from '../../db/schema.ts';
import { companiesSeed } from '../../seeds/companies.ts';
import { DATASET_DIR, datasetSelection, loadDataset } from '../../seeds/company-dataset.ts';
import { readSeedMark, seedBuild } from '../../seeds/seed-mark.ts';
import { datasetVersion } from '../../server/companies/aggregate-cache.ts';
import { upsertCompanies } from '../../server/companies/store.ts';
import { freshDatabase, type TestDatabase } from '../harness/databases.ts';

let database: TestDatabase;
let build: string;
beforeAll(async () => {
  database = await freshDatabase();
  build = await seedBuild(DATASET_DIR, datasetSelection());
});
afterAll(() => database.close());

const skipped = { inserted: 0, updated: 0, skipped: expect.any(String) };
/** A comparison of every seed record takes ~10 s of a core; a test here runs up to two, on a busy machine. */
const COMPARES = 120_000;

test('a seeded database holds the mark of this build, and seeding it again skips the comparison', async () => {
  expect(await readSeedMark(database.db)).toEqual({ build, version: await datasetVersion(database.db) });
  expect(await companiesSeed.run(database.db)).toEqual(skipped);
});

test('after an import changed a seed record, the seed compares again, puts the record back, and marks anew', async () => {
  const record = (await loadDataset()).records[0]!;
  await upsertCompanies(database.db, [{ ...record, name: `${record.name} (renamed)` }]);
  expect(await companiesSeed.run(database.db)).toEqual({ inserted: 0, updated: 1 });
  expect(await readSeedMark(database.db)).toEqual({ build, version: await datasetVersion(database.db) });
  expect(await companiesSeed.run(database.db)).toEqual(skipped);
}, COMPARES);

test('force compares every record even when the mark matches', async () => {
  expect(await companiesSeed.run(database.db, { force: true })).toEqual({ inserted: 0, updated: 0 });
}, COMPARES);

test('a mark of another build, or none, makes the seed compare', async () => {
  const version = await datasetVersion(database.db);
  await database.db.update(companyDatasetState).set({ seedBuild: 'another', seededVersion: version });
  expect(await companiesSeed.run(database.db)).toEqual({ inserted: 0, updated: 0 });
  expect((await readSeedMark(database.db))?.build).toBe(build);
  await database.db.update(companyDatasetState).set({ seedBuild: null, seededVersion: null });
  expect(await readSeedMark(database.db)).toBeNull();
  expect(await companiesSeed.run(database.db)).toEqual({ inserted: 0, updated: 0 });
  expect(await companiesSeed.run(database.db)).toEqual(skipped);
}, COMPARES);

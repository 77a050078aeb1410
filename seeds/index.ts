/**
 * Seed data: loaded on the first start of an empty database (SEED_ON_START) and by `npm run seed`.
 * Every step is an upsert keyed by a natural key, so running it again adds nothing twice.
 */
import type { Db } from '../db/client.ts';
import type { Logger } from '../server/lib/logger.ts';
import { companiesSeed } from './companies.ts';
import { eventsSeed } from './events.ts';
import type { SeedOptions, SeedStep } from './step.ts';

export type { SeedOptions, SeedStep } from './step.ts';

/** The steps, in dependency order. Each data area registers its step here. */
export const seedSteps: SeedStep[] = [companiesSeed, eventsSeed];

/** Runs the steps in order; answers how many rows they wrote (inserted and updated) in all. */
export async function seedDatabase(db: Db, logger: Logger, steps: SeedStep[] = seedSteps, options: SeedOptions = {}): Promise<number> {
  let written = 0;
  for (const step of steps) {
    const result = await step.run(db, options);
    logger.info('seeded', { step: step.name, ...result });
    written += (result.inserted ?? 0) + (result.updated ?? 0);
  }
  return written;
}

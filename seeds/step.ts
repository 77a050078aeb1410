/** One step of the seed (seeds/index.ts runs them in order); its own file so each data area can name it without importing the runner. */
import type { Db } from '../db/client.ts';

export interface SeedOptions {
  /** Compare every record even when the database says it took this build already (`npm run seed`). */
  force?: boolean;
}

export interface SeedStep {
  name: string;
  /** `skipped`: why the step had nothing to do without comparing (seeds/seed-mark.ts). */
  run(db: Db, options?: SeedOptions): Promise<{ inserted: number; updated: number; skipped?: string }>;
}

/** One step of the seed (seeds/index.ts runs them in order); its own file so each data area can name it without importing the runner. */
import type { Db } from '../db/client.ts';

export interface SeedStep {
  name: string;
  run(db: Db): Promise<{ inserted: number; updated: number }>;
}

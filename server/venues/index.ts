import { inArray } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { eventBands } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { PaperVenue } from './paper.ts';
import type { Venue } from './venue.ts';

/** The venue named by VENUE. The paper venue centres its books on the bands' seed prices. */
export function createVenue(config: Config, db: Db, now?: () => number): Venue {
  return new PaperVenue({
    db,
    now,
    startingBalanceMicros: config.paper.startingBalanceMicros,
    seed: config.paper.seed,
    drift: config.paper.drift,
    referencePrices: async (tokenIds) => {
      if (!tokenIds.length) return new Map();
      const rows = await db.select({ id: eventBands.id, seedPrice: eventBands.seedPrice }).from(eventBands).where(inArray(eventBands.id, tokenIds));
      return new Map(rows.map((r) => [r.id, r.seedPrice]));
    },
  });
}

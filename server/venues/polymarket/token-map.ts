/**
 * Our band ids → the venue's token ids. Band ids never change (positions refer to them); the event
 * sync (`npm run events:sync`) fills in each band's venue token, market version and neg-risk flag.
 * Read from the database and kept for a minute.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client.ts';
import { eventBands, events } from '../../../db/schema.ts';

export interface VenueToken {
  bandId: string;
  /** Decimal uint256: the band's Yes outcome token. */
  tokenId: string;
  negRisk: boolean;
  /** Which ERC-1155 ledger holds it (Gamma market `version`). */
  version: 'v1' | 'v2';
  /** The market's condition (0x…, 32 bytes): what a redemption names. Null until synced. */
  conditionId: string | null;
}

const TTL_MS = 60_000;

export class TokenMap {
  private cached?: { byBand: Map<string, VenueToken>; expiresAt: number };

  constructor(
    private db: Db,
    private now: () => number = Date.now,
  ) {}

  async byBand(): Promise<Map<string, VenueToken>> {
    if (this.cached && this.now() < this.cached.expiresAt) return this.cached.byBand;
    const rows = await this.db
      .select({ bandId: eventBands.id, band: eventBands.venue, event: events.venue })
      .from(eventBands)
      .innerJoin(events, eq(events.id, eventBands.eventId));
    const byBand = new Map<string, VenueToken>();
    for (const row of rows) {
      // A ladder band is not one token: its payoff needs "above X" minus "above the next X". Until
      // that replication is executed, ladder events are not traded live (their orders are refused).
      if (row.event.structure === 'ladder') continue;
      const band = row.band as { tokenId?: string | null; version?: string | null; negRisk?: boolean | null; conditionId?: string | null };
      if (!band.tokenId || !/^\d{1,78}$/.test(band.tokenId)) continue;
      byBand.set(row.bandId, {
        bandId: row.bandId,
        tokenId: band.tokenId,
        negRisk: band.negRisk ?? row.event.negRisk ?? true,
        version: band.version === 'v2' ? 'v2' : 'v1',
        conditionId: band.conditionId ?? null,
      });
    }
    this.cached = { byBand, expiresAt: this.now() + TTL_MS };
    return byBand;
  }

  /** Forget the cache (after an event sync in this process). */
  invalidate() {
    this.cached = undefined;
  }
}

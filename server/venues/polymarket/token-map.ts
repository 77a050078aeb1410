/**
 * Our token ids → the venue's token ids: a band event's band id → the band's Yes token; a ladder's
 * `<band id>:yes|no` (valuation/ladder.ts) → the Yes or No token of the "above" market that starts
 * that band. Our ids never change (positions refer to them); the event sync (`npm run events:sync`)
 * fills in each market's venue tokens, version and neg-risk flag. Read from the database and kept
 * for a minute.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client.ts';
import { eventBands, events } from '../../../db/schema.ts';
import { ladderTokenId } from '../../valuation/index.ts';

export interface VenueToken {
  /** Our token id (a band id, or a ladder threshold's `<band id>:yes|no`). */
  bandId: string;
  /** Decimal uint256: the venue's outcome token. */
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
    const decimal = (id: string | null | undefined): id is string => !!id && /^\d{1,78}$/.test(id);
    for (const row of rows) {
      const band = row.band as { tokenId?: string | null; noTokenId?: string | null; version?: string | null; negRisk?: boolean | null; conditionId?: string | null };
      const market = { negRisk: band.negRisk ?? row.event.negRisk ?? true, version: band.version === 'v2' ? ('v2' as const) : ('v1' as const), conditionId: band.conditionId ?? null };
      if (row.event.structure === 'ladder') {
        // A ladder band is no token of its own: its threshold's Yes and No are (band 0 has none).
        for (const [outcome, tokenId] of [['yes', band.tokenId], ['no', band.noTokenId]] as const) {
          const id = ladderTokenId(row.bandId, outcome);
          if (decimal(tokenId)) byBand.set(id, { bandId: id, tokenId, ...market });
        }
        continue;
      }
      if (!decimal(band.tokenId)) continue;
      byBand.set(row.bandId, { bandId: row.bandId, tokenId: band.tokenId, ...market });
    }
    this.cached = { byBand, expiresAt: this.now() + TTL_MS };
    return byBand;
  }

  /** Forget the cache (after an event sync in this process). */
  invalidate() {
    this.cached = undefined;
  }
}

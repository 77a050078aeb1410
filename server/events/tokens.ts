/** The tokens a stored event trades as (valuation/ladder.ts): its bands', or its ladder thresholds' Yes and No. */
import { eventTokens, replicate, type EventToken, type TokenHolding } from '../valuation/index.ts';
import type { EventWithBands } from './queries.ts';

export const tokensOf = (event: Pick<EventWithBands, 'venue' | 'bands'>): EventToken[] => eventTokens({ structure: event.venue.structure, bands: event.bands });

export const isLadder = (event: Pick<EventWithBands, 'venue'>) => event.venue.structure === 'ladder';

/** The label of a token (a band's, or a ladder threshold's "Yes: above $10B") among `events`; null when none has it. */
export function tokenLabel(events: Pick<EventWithBands, 'venue' | 'bands'>[], tokenId: string): string | null {
  for (const event of events) {
    const token = tokensOf(event).find((t) => t.id === tokenId);
    if (token) return token.label;
    const band = event.bands.find((b) => b.id === tokenId);
    if (band) return band.label;
  }
  return null;
}

/**
 * How a position with these band weights is held: the tokens it buys (a band event's bands; a
 * ladder's threshold tokens with a positive amount in the replication) and the function from band
 * shares to those tokens' shares (undefined for a band event: its bands are its tokens).
 */
export function tokenHolding(event: Pick<EventWithBands, 'venue' | 'bands'>, weights: number[]): { tokens: EventToken[]; holding?: TokenHolding } {
  const all = tokensOf(event);
  if (!isLadder(event)) return { tokens: all };
  const used = replicate('ladder', weights).flatMap((amount, i) => (amount > 1e-12 ? [i] : []));
  return {
    tokens: used.map((i) => all[i]!),
    holding: (bandShares) => {
      const shares = replicate('ladder', bandShares);
      return used.map((i) => shares[i]!);
    },
  };
}

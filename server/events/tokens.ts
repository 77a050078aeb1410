/** The tokens a stored event trades as (valuation/ladder.ts): its bands', or its ladder thresholds' Yes and No. */
import { eventTokens, type EventToken } from '../valuation/index.ts';
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

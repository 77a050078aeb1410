/**
 * The market-data answers, built from one snapshot: the event list, one event's full valuation, and
 * the summary of every event. All arithmetic is the valuation module's.
 */
import { ApiError } from '../errors.ts';
import type { EventWithBands } from '../events/queries.ts';
import { tokensOf } from '../events/tokens.ts';
import { quoteEvent, type BandMarket, type Floors } from '../valuation/index.ts';
import { topOfBook } from '../venues/venue.ts';
import type { MarketSnapshot } from './market-data.ts';

/** The band a resolved event paid out on; null until it resolves. */
export const winningBandIdOf = (e: EventWithBands) => (e.status === 'resolved' && e.resolvedBandIndex !== null ? (e.bands[e.resolvedBandIndex]?.id ?? null) : null);

export function eventSummary(e: EventWithBands) {
  return {
    id: e.id,
    name: e.name,
    company: e.company,
    status: e.status,
    winningBandId: winningBandIdOf(e),
    endDate: e.endDate?.toISOString() ?? null,
    venue: { name: e.venue.name, eventSlug: e.venue.eventSlug },
    structure: e.venue.structure,
    bands: e.bands.map((b) => ({ id: b.id, label: b.label, minValuation: b.minValuation, maxValuation: b.maxValuation })),
    tokens: tokensOf(e).map((t) => ({ id: t.id, label: t.label, outcome: t.outcome, bandIndex: t.bandIndex })),
  };
}

function marketsOf(e: EventWithBands, snapshot: MarketSnapshot): BandMarket[] {
  return e.bands.map((b) => ({ label: b.label, minValuation: b.minValuation, maxValuation: b.maxValuation, ...topOfBook(snapshot.books.get(b.id)) }));
}

/** Our id, or the venue's event slug. */
export function eventIn(snapshot: MarketSnapshot, slug: string): EventWithBands {
  const found = snapshot.events.find((e) => e.id === slug || e.venue.eventSlug === slug);
  if (!found) throw new ApiError('NOT_FOUND', `eventSlug: no event ${slug}`);
  return found;
}

export function eventValuation(e: EventWithBands, snapshot: MarketSnapshot, floors: Floors) {
  const q = quoteEvent(marketsOf(e, snapshot), floors);
  return {
    event: { name: e.name, slug: e.id, numBands: e.bands.length, status: e.status, winningBandId: winningBandIdOf(e) },
    bands: e.bands.map((b, i) => ({ bandIndex: i, label: b.label, price: q.prices[i]!, tokenId: b.id })),
    valuation: q.valuation,
    slippage: q.slippage,
    breakdown: q.breakdown,
    impliedValuation: q.impliedValuation,
    settings: floors,
    totalVolume: e.volumeUsd ?? 0,
    endDate: e.endDate?.toISOString() ?? null,
    timestamp: snapshot.fetchedAt.toISOString(),
  };
}

export function allValuations(snapshot: MarketSnapshot, floors: Floors) {
  return snapshot.events.map((e) => {
    const q = quoteEvent(marketsOf(e, snapshot), floors);
    return {
      eventId: e.id,
      impliedValuation: q.impliedValuation,
      longCost: q.valuation.longCost,
      shortCost: q.valuation.shortCost,
      updatedAt: snapshot.fetchedAt.toISOString(),
    };
  });
}
